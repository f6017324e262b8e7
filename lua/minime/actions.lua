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

--- What the host needs to run an ask in `cwd`: the agent, resolved from its definition
--- (lua/minime/agents/), as a command line, an environment and a discovery.
local function agent_payload(cwd)
  local agent = require("minime.agents").resolve(cwd)
  return {
    agent = agent.name,
    label = agent.label,
    agent_cmd = agent.cmd,
    agent_env = agent.env,
    agent_file = agent.agent_file,
    discovery = agent.discovery,
    editor_tools = agent.editor_tools,
    mcp_servers = agent.mcp_servers,
    mode = agent.mode,
  },
    agent
end

M.agent_payload = agent_payload

--- The agent and the tools turned off for a host operation in `cwd` (the rest of the tools'
--- context stays here: tools/init.lua reads it at each call). Second: the resolved agent.
local function host_payload(cwd)
  local payload, agent = agent_payload(cwd)
  payload.cwd = cwd
  payload.disabled_tools = config.disabled_tools(cwd)
  payload.ready_timeout = config.options.ready_timeout
  payload.cancel_timeout = config.options.cancel_timeout
  return payload, agent
end

M.host_payload = host_payload

-- Whether the "no mm found — using the offline demo agent" notice was given.
local demo_said = false

--- The cwd's key (the host's: the real path) and the conversation float shown for it, if any.
---@param cwd string
local function shown_float(cwd)
  local turn = package.loaded["minime.ui.turn"]
  if not turn then
    return nil
  end
  local key, win = turn.shown()
  if key and (key == cwd or key == vim.uv.fs_realpath(cwd)) then
    return win
  end
  return nil
end

--- The input float; its text is sent as an ask in `cwd` (anchored to `anchor`, a float). It
--- opens with the cwd's draft; closed without sending, its text is the draft (ui/drafts.lua).
local function prompt_for(cwd, range, anchor, text)
  require("minime.warm").cwd(cwd) -- the agent starts while the ask is typed
  local drafts = require("minime.ui.drafts")
  local draft = drafts.get(cwd)
  if text and draft then
    text = text .. draft -- a draft is never lost: it follows what was chosen
  end
  require("minime.ui.input").open({
    prompt_title = " minime ",
    anchor = anchor,
    cwd = cwd,
    default = text or draft,
    on_submit = function(input)
      drafts.clear(cwd)
      if input and vim.trim(input) ~= "" then
        M.ask(input, range, cwd)
      end
    end,
    on_cancel = function(input)
      drafts.set(cwd, input)
    end,
  })
end

-- cwd -> the ask whose @-mentions are being read (a cancel meanwhile drops it).
local collecting = {}

--- Send `text` to the agent for the current cwd (window- and tab-local cwds count), or `cwd`.
--- No text: the input float (over the conversation float when it is shown).
---@param text? string
---@param range? integer[] {first, last} lines of the current buffer sent as context
---@param cwd? string
function M.ask(text, range, cwd)
  cwd = cwd or vim.fn.getcwd()
  if not text or vim.trim(text) == "" then
    prompt_for(cwd, range, shown_float(cwd))
    return
  end
  local ok, err = pcall(function()
    local payload, agent = host_payload(cwd)
    local context, selection, lines_from = with_context(text, range, cwd)
    payload.prompt = text
    payload.context = context
    payload.lines_from = lines_from
    -- The selection stays here; the host names the ask that starts a turn (editor/asks.lua).
    payload.ask_id = require("minime.editor.asks").new(selection, cwd)
    payload.queue = config.options.queue ~= false
    if agent.demo and not demo_said then
      demo_said = true -- once per Neovim session: the float's title names the agent anyway
      require("minime.ui.say").say("minime: " .. agent.demo.notice, vim.log.levels.INFO)
    end
    -- `@path` mentions are read (off the main loop) before the ask goes: at once when none.
    local mention_ctx = { deny = config.options.deny, max_bytes = config.options.mention_max_bytes }
    local token = {}
    collecting[cwd] = token
    require("minime.editor.mentions").collect(text, cwd, mention_ctx, function(mentions)
      if collecting[cwd] ~= token then
        return -- :MiniMeCancel while its files were read: never sent
      end
      collecting[cwd] = nil
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

--- The input float for an ask in `cwd`, opening with `text` (then the cwd's draft, if any):
--- :MiniMeCommands puts the chosen command there.
---@param cwd string
---@param text string
function M.input(cwd, text)
  prompt_for(cwd, nil, shown_float(cwd), text)
end

local function host_op(op, payload)
  local ok, err = pcall(require("minime.host").notify, op, payload or {})
  if not ok then
    say_error("minime: " .. tostring(err))
  end
end

function M.cancel(cwd)
  cwd = cwd or vim.fn.getcwd()
  collecting[cwd] = nil
  host_op("cancel", { cwd = cwd })
end

function M.reset()
  host_op("reset", { cwd = vim.fn.getcwd() })
  require("minime.warm").forget() -- the next ask typed here warms its new session
end

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
  host_op("terminal", { cwd = vim.fn.getcwd(), terminal_id = id })
end

--- The agent's earlier sessions for the current cwd, to reopen one (vim.ui.select).
function M.sessions()
  local ok, payload = pcall(host_payload, vim.fn.getcwd())
  if not ok then
    say_error("minime: " .. tostring(payload))
    return
  end
  host_op("sessions", payload)
end

--- :MiniMeLogin [method]: log in to the agent of `cwd` (default: the current one); no method:
--- pick one of those it offers.
---@param method_id? string
---@param cwd? string
function M.login(method_id, cwd)
  local ok, payload = pcall(host_payload, cwd or vim.fn.getcwd())
  if not ok then
    say_error("minime: " .. tostring(payload))
    return
  end
  payload.method_id = method_id ~= "" and method_id or nil
  host_op("login", payload)
end

--- Close or delete session `session_id` of the agent in `cwd` (:MiniMeSessions).
---@param session_id string
---@param action "close"|"delete"
---@param cwd string
---@param title? string
function M.manage_session(session_id, action, cwd, title)
  local ok, payload = pcall(host_payload, cwd)
  if not ok then
    say_error("minime: " .. tostring(payload))
    return
  end
  payload.session_id, payload.action, payload.title = session_id, action, title
  host_op("manage_session", payload)
end

--- Reopen session `session_id` of the agent in `cwd` (default: the current cwd).
---@param session_id string
---@param opts? {cwd?: string, title?: string}
function M.load_session(session_id, opts)
  opts = opts or {}
  local ok, payload = pcall(host_payload, opts.cwd or vim.fn.getcwd())
  if not ok then
    say_error("minime: " .. tostring(payload))
    return
  end
  payload.session_id = session_id
  payload.title = opts.title
  host_op("load_session", payload)
end

--- Create or update the plugin's own Python environment (what `build = "./scripts/setup --user"`
--- does).
---@param on_done? fun(ok: boolean, output: string)
function M.install(on_done)
  local root = config.root()
  local script = root .. "/scripts/setup"
  local venv = root .. "/.venv"
  require("minime.ui.say").say(
    ("minime: installing the Python host into %s …"):format(venv),
    vim.log.levels.INFO
  )
  local ok, err = pcall(vim.system, { script, "--user" }, {
    cwd = root,
    text = true,
    -- The npm package is for the interop tests only.
    env = { MINIME_SKIP_NPM = "1" },
  }, function(res)
    vim.schedule(function()
      local output = vim.trim((res.stdout or "") .. "\n" .. (res.stderr or ""))
      if res.code == 0 then
        local msg = ("minime: installed: %s/bin/python"):format(venv)
        if require("minime.host").chan then
          msg = msg .. " (restart Neovim to use it)"
        end
        require("minime.ui.say").say(msg, vim.log.levels.INFO)
      else
        local last = vim.split(output, "\n")
        require("minime.ui.say").say(
          ("minime: install failed (exit %d): %s — run %s in a shell to see why"):format(
            res.code,
            last[#last] or "",
            script
          ),
          vim.log.levels.ERROR
        )
      end
      if on_done then
        on_done(res.code == 0, output)
      end
    end)
  end)
  if not ok then
    require("minime.ui.say").say(
      ("minime: cannot run %s: %s"):format(script, tostring(err)),
      vim.log.levels.ERROR
    )
  end
end

--- Reopen the last turn's float.
function M.show()
  if not require("minime.ui.turn").reopen_last() then
    require("minime.ui.say").say("minime: no conversation to show yet", vim.log.levels.INFO)
  end
end

--- Reply from the conversation float of `key` (a cwd): the input float over it.
---@param key string
function M.reply(key)
  local t = require("minime.ui.turn").get(key)
  prompt_for(key, nil, t and t.win or nil)
end

--- Hide the conversation float, or show the current cwd's (else the last one).
function M.toggle()
  require("minime.warm").cwd()
  local turn = require("minime.ui.turn")
  if turn.shown() then
    turn.toggle()
    return
  end
  local cwd = vim.fn.getcwd()
  if not turn.toggle(vim.uv.fs_realpath(cwd) or cwd) then
    require("minime.ui.say").say(
      "minime: no conversation yet — :MiniMeAsk starts one",
      vim.log.levels.INFO
    )
  end
end

return M
