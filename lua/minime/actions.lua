--- What the verbs of require("minime") do (what the Python host calls is minime.rpc).
--- Loaded on first use: require("minime").setup{} runs at every start-up and must stay cheap
--- (see init.lua), so the code behind the verbs lives here.
local config = require("minime.config")

local M = {}

---@param message string
local function say_error(message)
  require("minime.ui.say").say(message, vim.log.levels.ERROR)
end

local function relative(path, cwd)
  if path:sub(1, #cwd + 1) == cwd .. "/" then
    return path:sub(#cwd + 2)
  end
  return path
end

--- The current buffer's name when its lines may not leave the editor (the deny list: a range
--- ask from `.env` sent its secret while `@.env` was refused), else nil.
---@param cwd string
---@return string?
local function denied_buffer(cwd)
  local name = vim.api.nvim_buf_get_name(0)
  if name ~= "" and require("minime.editor.deny").file(config.options.deny, name, cwd) then
    return vim.fn.fnamemodify(name, ":~:.")
  end
  return nil
end

--- The prompt with the selected lines as context, naming file and lines; the selection; those
--- lines named for the conversation ("README.md:10-14").
local function with_context(text, range, cwd)
  if not range then
    return text, nil, nil
  end
  local buf = vim.api.nvim_get_current_buf()
  local lines = vim.api.nvim_buf_get_lines(buf, range[1] - 1, range[2], false)
  local name = vim.api.nvim_buf_get_name(buf)
  local path = name ~= "" and relative(vim.fn.fnamemodify(name, ":p"), cwd) or "[No Name]"
  local fence = ("```%s"):format(vim.bo[buf].filetype or "")
  local context = ("%s\n\nFrom %s, lines %d-%d:\n%s\n%s\n```"):format(
    text,
    path,
    range[1],
    range[2],
    fence,
    table.concat(lines, "\n")
  )
  local selection = { bufnr = buf, path = name, start_line = range[1], end_line = range[2] }
  local span = range[1] == range[2] and tostring(range[1]) or (range[1] .. "-" .. range[2])
  return context, selection, path .. ":" .. span
end

--- What the host needs to run an ask in `cwd`: the agent (definition `definition`, default
--- the configured one), resolved (lua/minime/agents/) as a command line, an environment and a
--- discovery.
---@param cwd string
---@param definition? string
local function agent_payload(cwd, definition)
  local agent = require("minime.agents").resolve(cwd, { agent = definition })
  return {
    agent = agent.name,
    label = agent.label,
    agent_cmd = agent.cmd,
    agent_env = agent.env,
    agent_file = agent.agent_file,
    discovery = agent.discovery,
    editor_tools = agent.editor_tools,
    tool_names = agent.tool_names,
    mcp_hint = agent.mcp_hint,
    mcp_servers = agent.mcp_servers,
    mode = agent.mode,
    budget = agent.budget,
  },
    agent
end

M.agent_payload = agent_payload

--- The thread, its agent and the tools turned off for a host operation in thread `id` (the
--- rest of the tools' context stays here: tools/init.lua reads it at each call). Second: the
--- resolved agent.
---@param id string a thread (minime.threads)
local function host_payload(id)
  local thread = assert(require("minime.threads").get(id), "unknown thread")
  local cwd = thread.cwd
  local payload, agent = agent_payload(cwd, thread.definition)
  payload.cwd = cwd
  payload.thread = id
  payload.disabled_tools = config.disabled_tools(cwd)
  payload.ready_timeout = config.options.ready_timeout
  payload.cancel_timeout = config.options.cancel_timeout
  return payload, agent
end

M.host_payload = host_payload

-- Whether the "no mm found — using the offline demo agent" notice was given.
local demo_said = false

--- The conversation float shown for thread `id`, if any.
---@param id string
local function shown_float(id)
  local turn = package.loaded["minime.ui.turn"]
  if not turn then
    return nil
  end
  local key, win = turn.shown()
  return key == id and win or nil
end

--- The input float; its text is sent as an ask in thread `id` (anchored to `anchor`, a
--- float). It opens with the thread's draft; closed without sending, its text is the draft
--- (ui/drafts.lua).
local function prompt_for(id, range, anchor, text)
  require("minime.warm").thread(id) -- the agent starts while the ask is typed
  local drafts = require("minime.ui.drafts")
  local draft = drafts.get(id)
  if text and draft then
    text = text .. draft -- a draft is never lost: it follows what was chosen
  end
  require("minime.ui.input").open({
    prompt_title = " minime ",
    anchor = anchor,
    cwd = require("minime.threads").cwd_of(id),
    default = text or draft,
    on_submit = function(input)
      drafts.clear(id)
      if input and vim.trim(input) ~= "" then
        M.ask(input, range, id)
      end
    end,
    on_cancel = function(input)
      drafts.set(id, input)
    end,
  })
end

--- The thread `where` names: a thread id as it is; a cwd (default: the current buffer's
--- thread, else the window's cwd — window- and tab-local cwds count) its current thread, made
--- with the configured agent when it has none.
---@param where? string
---@return string id
local function thread_of(where)
  local threads = require("minime.threads")
  if where and threads.get(where) then
    return where
  end
  return where and threads.ensure(where) or threads.here() or threads.ensure()
end

M.thread_of = thread_of

-- thread -> the ask whose @-mentions are being read (a cancel meanwhile drops it).
local collecting = {}

--- Send `text` to the agent of the current thread (see thread_of), or of `where` (a thread
--- id or a cwd). No text: the input float (over the conversation float when it is shown).
---@param text? string
---@param range? integer[] {first, last} lines of the current buffer sent as context
---@param where? string
function M.ask(text, range, where)
  local id = thread_of(where)
  local denied = range and denied_buffer(require("minime.threads").cwd_of(id) or vim.fn.getcwd())
  if denied then
    local typed = text and vim.trim(text) ~= ""
    if typed then
      require("minime.ui.drafts").add(id, text) -- nothing typed is lost
    end
    say_error(
      ("minime: not sent: %s is on the deny list (:h minime-config-deny), its lines never leave the editor%s"):format(
        denied,
        typed and "; your text is kept as the draft (:MiniMeAsk opens it)" or ""
      )
    )
    return
  end
  if not text or vim.trim(text) == "" then
    prompt_for(id, range, shown_float(id))
    return
  end
  local ok, err = pcall(function()
    local payload, agent = host_payload(id)
    local cwd = payload.cwd
    local context, selection, lines_from = with_context(text, range, cwd)
    payload.prompt = text
    payload.context = context
    payload.lines_from = lines_from
    -- The selection stays here; the host names the ask that starts a turn (editor/asks.lua).
    payload.ask_id = require("minime.editor.asks").new(selection, id)
    payload.queue = config.options.queue ~= false
    if agent.demo and not demo_said then
      demo_said = true -- once per Neovim session: the float's title names the agent anyway
      require("minime.ui.say").say("minime: " .. agent.demo.notice, vim.log.levels.INFO)
    end
    -- `@path` mentions are read (off the main loop) before the ask goes: at once when none.
    local mention_ctx = { deny = config.options.deny, max_bytes = config.options.mention_max_bytes }
    local token = {}
    collecting[id] = token
    require("minime.editor.mentions").collect(text, cwd, mention_ctx, function(mentions)
      if collecting[id] ~= token then
        return -- :MiniMeCancel while its files were read: never sent
      end
      collecting[id] = nil
      payload.mentions = mentions
      local sent, failure = pcall(require("minime.host").notify, "ask", payload)
      if not sent then
        say_error("minime: " .. tostring(failure))
      end
    end)
  end)
  if not ok then
    say_error("minime: " .. tostring(err))
  end
end

--- The input float for an ask in `where` (a cwd or a thread), opening with `text` (then the
--- thread's draft, if any): :MiniMeCommands puts the chosen command there.
---@param where string
---@param text string
function M.input(where, text)
  local id = thread_of(where)
  prompt_for(id, nil, shown_float(id), text)
end

local function host_op(op, payload)
  local ok, err = pcall(require("minime.host").notify, op, payload or {})
  if not ok then
    say_error("minime: " .. tostring(err))
  end
end

--- What names thread `id` to the host.
local function where(id)
  return { thread = id, cwd = require("minime.threads").cwd_of(id) }
end

--- :MiniMeCancel: the running turn (and the queued asks) of the current thread, or of `key`
--- (a thread id or a cwd).
---@param key? string
function M.cancel(key)
  local threads = require("minime.threads")
  local id = key and threads.key(key) or (not key and threads.here()) or nil
  if not id then
    local cwd = threads.real(key or vim.fn.getcwd())
    require("minime.ui.say").say("minime: no turn running in " .. cwd, vim.log.levels.INFO)
    return
  end
  collecting[id] = nil
  host_op("cancel", where(id))
end

--- :MiniMeReset: a new conversation (a new session) in the current thread.
function M.reset()
  local id = thread_of()
  local thread = require("minime.threads").get(id)
  if thread then
    thread.last_session_id = nil -- a new conversation: the old one is not reopened
  end
  host_op("reset", where(id))
  require("minime.warm").forget(id) -- the next ask typed here warms its new session
end

--- :MiniMeNew [agent] [worktree] (minime.new_thread).
function M.new(...)
  return require("minime.new_thread").new(...)
end

--- :MiniMeStop: every thread's agent (the message says how many).
function M.stop()
  host_op("stop", {})
  require("minime.warm").forget()
end

function M.log()
  host_op("log", {})
end

--- :MiniMeTerminal [id]: the output of a command the agent ran in the client terminal (the
--- last one of this cwd's session, or `id`), in a buffer.
---@param id? string
function M.terminal(id)
  local thread = require("minime.threads").here()
  if not thread then
    require("minime.ui.say").say(
      "minime: the agent ran no command in a terminal here",
      vim.log.levels.INFO
    )
    return
  end
  local payload = where(thread)
  payload.terminal_id = id
  host_op("terminal", payload)
end

--- The agent's earlier sessions for the current thread's cwd, to reopen one in it
--- (vim.ui.select).
function M.sessions()
  local ok, payload = pcall(host_payload, thread_of())
  if not ok then
    say_error("minime: " .. tostring(payload))
    return
  end
  host_op("sessions", payload)
end

--- :MiniMeLogin [method]: log in to the agent of thread `thread` (default: the current one);
--- no method: pick one of those it offers.
---@param method_id? string
---@param thread? string
function M.login(method_id, thread)
  local ok, payload = pcall(host_payload, thread_of(thread))
  if not ok then
    say_error("minime: " .. tostring(payload))
    return
  end
  payload.method_id = method_id ~= "" and method_id or nil
  host_op("login", payload)
end

--- Close or delete session `session_id` of the agent of `thread` (:MiniMeSessions).
---@param session_id string
---@param action "close"|"delete"
---@param thread string
---@param title? string
function M.manage_session(session_id, action, thread, title)
  local ok, payload = pcall(host_payload, thread_of(thread))
  if not ok then
    say_error("minime: " .. tostring(payload))
    return
  end
  payload.session_id, payload.action, payload.title = session_id, action, title
  host_op("manage_session", payload)
end

--- Reopen session `session_id` of the agent in thread `opts.thread` (else the current thread
--- of `opts.cwd`, else the current thread).
---@param session_id string
---@param opts? {thread?: string, cwd?: string, title?: string}
function M.load_session(session_id, opts)
  opts = opts or {}
  local ok, payload = pcall(host_payload, thread_of(opts.thread or opts.cwd))
  if not ok then
    say_error("minime: " .. tostring(payload))
    return
  end
  payload.session_id = session_id
  payload.title = opts.title
  host_op("load_session", payload)
end

--- Reopen the last turn's float.
function M.show()
  if not require("minime.ui.turn").reopen_last() then
    require("minime.ui.say").say("minime: no conversation to show yet", vim.log.levels.INFO)
  end
end

--- Reply from the conversation float of `key` (a thread): the input float over it.
---@param key string
function M.reply(key)
  local t = require("minime.ui.turn").get(key)
  prompt_for(thread_of(key), nil, t and t.win or nil)
end

--- Hide the conversation float, or show the current thread's (else the last one).
function M.toggle()
  local threads = require("minime.threads")
  local id = threads.here()
  if id then
    require("minime.warm").thread(id)
  else
    require("minime.warm").host()
  end
  local turn = require("minime.ui.turn")
  if turn.shown() then
    turn.toggle()
    return
  end
  if not turn.toggle(id) then
    require("minime.ui.say").say(
      "minime: no conversation yet — :MiniMeAsk starts one",
      vim.log.levels.INFO
    )
  end
end

return M
