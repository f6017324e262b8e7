---@mod minime minime.nvim: the mini-me agent (mm) in Neovim, over ACP.
--- The public surface: setup(), the verbs and the statusline; nothing else (what the Python
--- host calls is minime.rpc). Start-up budget: +1 ms in all, so setup() loads only
--- minime.config (the options' one owner), and each verb loads its code (minime.actions) on
--- first use; so do the UI, the tools and the host.
local M = {}

M.min_version = "0.11" -- the only version tested

---@param opts? minime.Config
function M.setup(opts)
  if vim.fn.has("nvim-" .. M.min_version) == 0 then
    local v = vim.version()
    require("minime.ui.say").say(
      ("minime needs Neovim %s or newer; this is %d.%d.%d. Upgrade Neovim (:h minime-setup)."):format(
        M.min_version,
        v.major,
        v.minor,
        v.patch
      ),
      vim.log.levels.ERROR
    )
    return
  end
  -- No options before anything read them: the defaults minime.config starts with are the
  -- options, and it loads when first needed (~0.15 ms less at every start).
  if not package.loaded["minime.config"] and (opts == nil or vim.deep_equal(opts, {})) then
    return
  end
  -- The one copy of the options: everything reads it when it needs a value.
  local config = require("minime.config")
  local before = config.options
  local _, problem = config.setup(opts)
  if problem then
    require("minime.ui.say").say("minime: " .. problem, vim.log.levels.ERROR)
  end
  -- A cwd keeps the agent its session runs on: say when the new one applies.
  local host = package.loaded["minime.host"]
  if host and host.chan and next(host.agents) ~= nil then
    local now = config.options
    for _, name in ipairs({ "agent", "mm", "config" }) do
      if not vim.deep_equal(before[name], now[name]) then
        require("minime.ui.say").say(
          ("minime: the new `%s` applies to the next session: :MiniMeReset (or :MiniMeStop)"):format(
            name
          ),
          vim.log.levels.INFO
        )
        break
      end
    end
  end
  -- User tools are checked now, so a mistake is reported at once, plainly (minime.tools is
  -- loaded only when there are some, or when it already is); minime.tools reads the option.
  local tools = config.options.tools
  if package.loaded["minime.tools"] or type(tools) ~= "table" or next(tools) ~= nil then
    local ok_tools, err = pcall(require("minime.tools").check_user_tools, tools)
    if not ok_tools then
      require("minime.ui.say").say("minime: " .. tostring(err), vim.log.levels.ERROR)
    end
  end
  -- The host is another process: it gets the options it needs again.
  if host and host.chan then
    host.send_setup()
  end
end

-- The verbs: each loads minime.actions on first use.
local function verb(name)
  return function(...)
    return require("minime.actions")[name](...)
  end
end

--- Send `text` to the agent of the current thread (no text: ask for it in a prompt float);
--- `where`: a thread id, or a cwd (its current thread).
---@type fun(text?: string, range?: integer[], where?: string)
M.ask = verb("ask")
--- Cancel the running turn of the current thread (or of `key`: a thread id, or a cwd).
---@type fun(key?: string)
M.cancel = verb("cancel")
--- Start a new conversation in the current thread.
M.reset = verb("reset")
--- Start a new thread in the current cwd (agent definition `agent`, default the configured
--- one), make it current and show its conversation; `worktree`: in a git worktree of its own.
---@type fun(agent?: string, worktree?: boolean)
M.new = verb("new")
--- Stop the agents.
M.stop = verb("stop")
--- Show mm's stderr and minime's log.
M.log = verb("log")
--- Offer the agent's earlier sessions for the current cwd, to reopen one.
M.sessions = verb("sessions")
--- Reopen session `session_id` of the agent.
---@type fun(session_id: string, opts?: {cwd?: string, title?: string})
M.load_session = verb("load_session")
--- Create or update the plugin's own Python environment.
---@param on_done? fun(ok: boolean, output: string)
function M.install(on_done)
  return require("minime.install").run(on_done)
end
--- Reopen the last turn's float.
M.show = verb("show")
--- Hide the conversation float, or show it again (the turn goes on either way).
M.toggle = verb("toggle")

--- The statusline piece (a spinner while a turn runs).
function M.statusline()
  return require("minime.status").statusline()
end

return M
