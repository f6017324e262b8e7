---@mod minime.rpc What the Python host calls in Neovim.
--- Every `exec_lua` of the host (rplugin/python3/minime/nvim/) names a function of this module,
--- so the whole host → Lua surface is one screen, apart from the public one (require("minime")
--- is the user's). Each loads what it needs when called: the module itself costs nothing.
--- Lua → host goes the other way, through minime.host (notifications only).
local M = {}

--- Send `op` to the host; a failure (no host) is said, never thrown back at the host's call.
local function to_host(op, payload)
  local ok, err = pcall(require("minime.host").notify, op, payload)
  if not ok then
    M.notify("minime: " .. tostring(err), "error")
  end
end

local levels =
  { error = vim.log.levels.ERROR, warn = vim.log.levels.WARN, info = vim.log.levels.INFO }

--- A message for the user.
---@param message string
---@param level? "error"|"warn"|"info"
function M.notify(message, level)
  require("minime.ui.say").say(message, levels[level or "error"] or vim.log.levels.ERROR)
end

--- The cwd thread `key` works in (a conversation the host never named: the key itself).
---@param key string
---@return string
local function cwd_of(key)
  return require("minime.threads").cwd_of(key) or key
end

--- One batch of events for the conversation of thread `key`: see minime.ui.turn.
---@param key string
---@param events table[]
function M.apply(key, events)
  local cwd = cwd_of(key)
  -- Before the float draws them: a turn's begin and the files it names (the review's baseline).
  pcall(require("minime.review.baseline").see, key, events)
  -- The diagnostics at a turn's start; at its end, what it caused (minime.feedback.diagnostics).
  pcall(require("minime.feedback.diagnostics").see, key, cwd, events)
  -- Looked up at each call: a bench or test may wrap minime.ui.turn's apply.
  require("minime.ui.turn").apply(key, events)
  -- `follow`: the file a tool call works on shows beside the code (minime.ui.follow).
  if require("minime.config").options.follow then
    pcall(require("minime.ui.follow").see, key, cwd, events)
  end
  -- A tool call ended, or the turn: files the agent changed on disk are refreshed.
  for i = #events, 1, -1 do
    local kind = type(events[i]) == "table" and events[i].kind
    if kind == "tool_result" or kind == "done" then
      require("minime.editor.disk_refresh").soon(cwd, key)
      break
    end
  end
end

--- The batches of several threads flushed at once: {{key, events}, ...}, each as `apply`.
---@param batches table[]
function M.apply_all(batches)
  for _, kb in ipairs(batches) do
    M.apply(kb[1], kb[2])
  end
end

--- A thread's state changed (events.ThreadState): see minime.threads.
---@param state table
function M.thread_update(state)
  require("minime.threads").update(state)
end

--- Record the baseline of a new turn of conversation `key` (its files in `cwd`) before its
--- prompt is sent: the host waits for "baseline_taken" {id}, at most `bound_ms`
--- (rplugin/python3/minime/nvim/baselines.py, lua/minime/review/baseline.lua).
---@param key string
---@param cwd string
---@param agent string
---@param id integer
---@param bound_ms integer
function M.baseline(key, cwd, agent, id, bound_ms)
  local baseline = require("minime.review.baseline")
  baseline.take(key, cwd, agent or "", bound_ms, function()
    local turn = baseline.last(key)
    if turn and package.loaded["minime.ui.turn"] then -- its prompt is ask n (`r`, `e`)
      require("minime.ui.turn.asks").mark(key, turn.n)
    end
    to_host("baseline_taken", { id = id })
  end)
end

--- The host took ask `ask_id` for a turn in `thread` (its selection is the tools' from now on).
---@param thread string
---@param ask_id integer
function M.ask_accepted(thread, ask_id)
  return require("minime.editor.asks").accept(thread, ask_id)
end

--- The host refused an ask in `thread` (a turn runs there, or its agent still starts, and
--- `queue = false`), or dropped a queued one (:MiniMeCancel): its text is kept as the thread's
--- draft, for the next input.
---@param thread string
---@param prompt string
function M.ask_refused(thread, prompt)
  require("minime.ui.drafts").add(thread, prompt)
end

--- Run editor tool `name` for `thread` (see minime.tools.call); returns its answer, or that
--- it is pending. `names`: how the calling agent's model names the tools.
function M.tool(name, args, ctx, reply, thread, names)
  return require("minime.tools").call(name, args, ctx, reply, thread, names)
end

--- Answer the agent's `fs/read_text_file` or `fs/write_text_file` (see minime.editor.fs).
function M.fs(method, params, cwd, reply, thread)
  return require("minime.editor.fs").call(method, params, cwd, reply, thread)
end

--- The conversation float's title (and the statusline) say whether a permission prompt or a
--- question waits.
local function turn_state()
  local turn = package.loaded["minime.ui.turn"]
  if turn then
    pcall(turn.refresh)
  end
end

--- Show a permission request (see :h minime-permission); the answer goes back to the host.
--- The float's timeout is the option's, read here: it never crosses to the host and back.
---@param req table events.PermissionPrompt (rplugin/python3/minime/nvim/events.py)
function M.permission(req)
  local key = req.thread or req.cwd
  -- What the request would write is recorded first (the review's baseline).
  pcall(require("minime.review.baseline").name_diffs, key, req.content)
  local permission = require("minime.config").options.permission
  req.timeout = type(permission) == "table" and permission.timeout or nil
  pcall(require("minime.review.baseline").name_locations, key, req.locations)
  if require("minime.config").options.follow then
    pcall(require("minime.ui.follow").see_request, key, req.cwd, req.call_id, req.locations)
  end
  require("minime.ui.permission").open(req, function(option_id, remember, reason)
    to_host("permission_answer", {
      id = req.id,
      option_id = option_id,
      remember = remember,
      reason = reason,
      waited = reason == "timeout" and tonumber(req.timeout) or nil,
    })
    turn_state()
  end)
  turn_state()
end

--- The host answered permission request `id` itself (timeout, cancel): close its float.
---@param id string
function M.permission_close(id)
  local closed = require("minime.ui.permission").close(id)
  turn_state()
  return closed
end

--- A question from the agent (elicitation/create): its float; the answer goes to the host.
---@param req table events.Question (rplugin/python3/minime/nvim/events.py)
function M.elicitation(req)
  require("minime.ui.elicitation").open(req, function(action, content)
    to_host("elicitation_answer", { id = req.id, action = action, content = content })
    turn_state()
  end)
  turn_state()
end

--- The host withdrew question `id` (the turn was cancelled): close its float.
function M.elicitation_close(id)
  local closed = require("minime.ui.elicitation").close(id)
  turn_state()
  return closed
end

--- :MiniMeLogin without a method: pick one of the agent's (vim.ui.select), then log in.
---@param thread string
---@param methods table[] events.LoginMethod each (rplugin/python3/minime/nvim/events.py)
function M.pick_login(thread, methods)
  require("minime.ui.pick").select(methods, {
    prompt = "Log in with:",
    kind = "minime.login",
    format_item = function(m)
      local text = m.name .. (m.type == "terminal" and " (in a terminal)" or "")
      return text .. (m.description and (" — " .. m.description) or "")
    end,
  }, function(m)
    if m then
      require("minime.actions").login(m.id, thread)
    end
  end)
end

--- A terminal login method: the agent's own login command in a terminal (a new tab), for the
--- user to follow; its exit is said, and the ask can then be repeated.
---@param cwd string
---@param argv string[]
---@param env table<string, string>
---@param name string
function M.login_terminal(cwd, argv, env, name)
  vim.cmd.tabnew()
  local buf = vim.api.nvim_get_current_buf()
  local ok, job = pcall(vim.fn.jobstart, argv, {
    term = true,
    cwd = cwd,
    env = next(env) and env or nil,
    on_exit = function(_, code)
      vim.schedule(function()
        local level = code == 0 and vim.log.levels.INFO or vim.log.levels.WARN
        local how = code == 0 and "finished: ask again" or ("exited with status %d"):format(code)
        require("minime.ui.say").say(("minime: the login (%s) %s"):format(name, how), level)
      end)
    end,
  })
  if not ok or job <= 0 then
    local why = ("minime: the login (%s) could not start: %s"):format(name, tostring(job))
    require("minime.ui.say").say(why, vim.log.levels.ERROR)
    return
  end
  vim.b[buf].minime = "login"
  vim.cmd.startinsert()
end

---@param pid integer the agent's process-group id, ended with the editor
function M.track_agent(pid)
  require("minime.host").track(pid)
end

--- A thread's session's modes and config options changed (nil: its session is gone).
---@param thread string
---@param state? table events.ModesState (rplugin/python3/minime/nvim/events.py)
function M.modes_update(thread, state)
  return require("minime.modes").update(thread, state)
end

--- A thread's budget changed (nil: it has none): see minime.budget.
---@param thread string
---@param state? table events.BudgetState (rplugin/python3/minime/nvim/events.py)
function M.budget_update(thread, state)
  return require("minime.budget").update(thread, state)
end

--- :MiniMeTerminal: a client terminal's output, opened in a buffer (see minime.ui.terminal).
---@param thread string
---@param shown table events.TerminalOutput (rplugin/python3/minime/nvim/events.py)
function M.show_terminal(thread, shown)
  require("minime.ui.terminal").show(thread, shown)
end

--- Offer the sessions the host found (vim.ui.select); the chosen one is reopened in `thread`.
---@param thread string
---@param items table[] events.SessionItem each (rplugin/python3/minime/nvim/events.py)
---@param how "load"|"resume"
---@param manage? table events.SessionActions
function M.pick_session(thread, items, how, manage)
  manage = type(manage) == "table" and manage or {}
  local function title_of(item)
    return item.title ~= "" and item.title or nil
  end
  local function reopen(item)
    local opts = { thread = thread, title = title_of(item) }
    require("minime.actions").load_session(item.session_id, opts)
  end
  local function act(item)
    local name = title_of(item) or item.session_id
    local choices = { { "reopen", how == "load" and "Reopen (its history replays)" or "Resume" } }
    if manage.close then
      choices[#choices + 1] = { "close", "Close (session/close: the agent frees it)" }
    end
    if manage.delete then
      choices[#choices + 1] = { "delete", "Delete… (session/delete: gone for good)" }
    end
    require("minime.ui.pick").select(choices, {
      prompt = name .. ":",
      kind = "minime.session_action",
      format_item = function(c)
        return c[2]
      end,
    }, function(c)
      if not c then
        return
      elseif c[1] == "reopen" then
        return reopen(item)
      elseif c[1] == "close" then
        local actions = require("minime.actions")
        return actions.manage_session(item.session_id, "close", thread, title_of(item))
      end
      require("minime.ui.pick").select({ "Delete " .. name .. " for good", "Keep it" }, {
        prompt = "Delete this session?",
        kind = "minime.confirm",
      }, function(_, i)
        if i == 1 then
          local actions = require("minime.actions")
          actions.manage_session(item.session_id, "delete", thread, title_of(item))
        end
      end)
    end)
  end
  require("minime.ui.pick").select(items, {
    prompt = how == "load" and "Reopen a session (its history replays):" or "Resume a session:",
    kind = "minime.session",
    format_item = function(item)
      local line = require("minime.ui.printable").line
      local parts = { item.title ~= "" and line(item.title, 80) or "(untitled)" }
      if item.updated_at ~= "" then
        parts[#parts + 1] = line(item.updated_at, 40)
      end
      parts[#parts + 1] = line(item.session_id, 80)
      return table.concat(parts, " · ")
    end,
  }, function(item)
    if not item then
      return
    end
    if manage.close or manage.delete then
      act(item)
    else
      reopen(item)
    end
  end)
end

--- The log's buffer, if one is open (found by its mark, not its name: bufnr() matches patterns).
---@return integer?
local function log_buffer()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.b[buf].minime == "log" then
      return buf
    end
  end
end

--- :MiniMeLog: the host's log lines, then its stderr, in one scratch buffer — refreshed, not
--- made again, by the next :MiniMeLog — in a split at the bottom (or its window, if shown),
--- with the turn floats hidden so that nothing covers it.
---@param lines string[]
function M.show_log(lines)
  local api = vim.api
  local host = require("minime.host")
  vim.list_extend(lines, { "", "# Python host stderr" })
  vim.list_extend(lines, host.stderr)
  -- Each message as said, whole (the command line shows it cut to one line).
  vim.list_extend(lines, { "", "# messages" })
  vim.list_extend(lines, require("minime.ui.say").history)
  local clean = {}
  for _, line in ipairs(lines) do
    for piece in (line .. "\n"):gmatch("(.-)\n") do
      table.insert(clean, piece)
    end
  end
  local buf = log_buffer()
  if not buf then
    buf = api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = "wipe"
    vim.b[buf].minime = "log"
    pcall(api.nvim_buf_set_name, buf, "minime://log")
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, clean)
  vim.bo[buf].modifiable = false
  -- No room for a split (E36): said plainly; the log is kept for the next :MiniMeLog.
  require("minime.ui.bottom").show_at_bottom(buf, "the log window", ":MiniMeLog")
  -- At its end: the newest lines (the last messages, the agent's exit) are what one looks for.
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    api.nvim_win_set_cursor(win, { api.nvim_buf_line_count(buf), 0 })
  end
end

return M
