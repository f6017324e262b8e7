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

local levels = { error = vim.log.levels.ERROR, warn = vim.log.levels.WARN, info = vim.log.levels.INFO }

--- A message for the user.
---@param message string
---@param level? "error"|"warn"|"info"
function M.notify(message, level)
  vim.notify(message, levels[level or "error"] or vim.log.levels.ERROR)
end

--- One batch of events for the turn float of `key` (the session's cwd): see minime.ui.turn.
---@param key string
---@param events table[]
function M.apply(key, events)
  -- Looked up at each call: a bench or test may wrap minime.ui.turn's apply.
  return require("minime.ui.turn").apply(key, events)
end

--- The host took ask `ask_id` for a turn in `cwd` (its selection is the tools' from now on).
---@param cwd string
---@param ask_id integer
function M.ask_accepted(cwd, ask_id)
  return require("minime.editor.asks").accept(cwd, ask_id)
end

--- Run editor tool `name` (see minime.tools.call); returns its answer, or that it is pending.
function M.tool(name, args, ctx, reply)
  return require("minime.tools").call(name, args, ctx, reply)
end

--- Show a permission request (see :h minime-permission); the answer goes back to the host.
---@param req table
function M.permission(req)
  require("minime.ui.permission").open(req, function(option_id, remember, reason)
    to_host("permission_answer", { id = req.id, option_id = option_id, remember = remember, reason = reason })
    M.turn_state()
  end)
  M.turn_state()
end

--- The conversation float's title says whether a permission prompt waits.
function M.turn_state()
  local turn = package.loaded["minime.ui.turn"]
  if turn then
    pcall(turn.refresh)
  end
end

--- The host answered permission request `id` itself (timeout, cancel): close its float.
---@param id string
function M.permission_close(id)
  local closed = require("minime.ui.permission").close(id)
  M.turn_state()
  return closed
end

---@param pid integer the agent's process-group id, ended with the editor
function M.track_agent(pid)
  require("minime.host").track(pid)
end

--- A session's modes and config options changed (nil: its session is gone).
---@param cwd string
---@param state? table { agent, mode, modes, config }
function M.modes_update(cwd, state)
  return require("minime.modes").update(cwd, state)
end

--- Offer the sessions the host found (vim.ui.select); the chosen one is reopened in `cwd`.
---@param cwd string
---@param items {session_id: string, title: string, updated_at: string}[]
---@param how "load"|"resume"
function M.pick_session(cwd, items, how)
  vim.ui.select(items, {
    prompt = how == "load" and "Reopen a session (its history replays):" or "Resume a session:",
    kind = "minime.session",
    format_item = function(item)
      local parts = { item.title ~= "" and item.title or "(untitled)" }
      if item.updated_at ~= "" then
        parts[#parts + 1] = item.updated_at
      end
      parts[#parts + 1] = item.session_id
      return table.concat(parts, " · ")
    end,
  }, function(item)
    if item then
      require("minime.actions").load_session(
        item.session_id,
        { cwd = cwd, title = item.title ~= "" and item.title or nil }
      )
    end
  end)
end

--- :MiniMeLog: the host's log lines, then its stderr, in a scratch buffer.
---@param lines string[]
function M.show_log(lines)
  local host = require("minime.host")
  vim.list_extend(lines, { "", "# Python host stderr" })
  vim.list_extend(lines, host.stderr)
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.b[buf].minime = "log"
  vim.api.nvim_buf_set_name(buf, "minime://log")
  local clean = {}
  for _, line in ipairs(lines) do
    for piece in (line .. "\n"):gmatch("(.-)\n") do
      table.insert(clean, piece)
    end
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, clean)
  vim.bo[buf].modifiable = false
end

return M
