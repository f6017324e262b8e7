---@mod minime.host Starts the Python host and talks to it (notifications only: Lua never waits).
local config = require("minime.config")

local M = {}
M.chan = nil ---@type integer?
M.stderr = {} ---@type string[] the host's own stderr (tracebacks land here, for :MiniMeLog)
M.agents = {} ---@type table<integer, string|false> agent pid (its session id) -> its start time
-- In the host's environment, so in that of every agent and everything agents start: how their
-- processes are found once their parents are gone (minime.proctree).
M.tag = ("MINIME_EDITOR=%d-%d"):format(vim.fn.getpid(), vim.uv.hrtime())
local said_dead = false

--- The interpreter for the host.
function M.python()
  local opt = config.options.python
  if opt then
    return vim.fn.expand(opt)
  end
  local own = config.root() .. "/.venv/bin/python"
  if vim.fn.executable(own) == 1 then
    return own
  end
  local prog = vim.g.python3_host_prog
  if prog and prog ~= "" then
    return vim.fn.expand(prog)
  end
  return "python3"
end

--- Why the host stopped, in words for the user: a Python without minime's packages (installed
--- by hand, without :MiniMeInstall) is told to install them and nothing else.
---@param python string
---@param code integer
---@return string message, boolean missing
local function stopped_why(python, code)
  for i = #M.stderr, math.max(1, #M.stderr - 5), -1 do
    local module = M.stderr[i]:match("^ModuleNotFoundError: No module named '([^']+)'")
    if module then
      return ("%s lacks the Python package %s: run :MiniMeInstall"):format(
        python,
        module:match("^[^.]+")
      ),
        true
    end
  end
  local last = M.stderr[#M.stderr] or ""
  return ("the Python host stopped (exit %d%s)"):format(code, last ~= "" and (": " .. last) or ""),
    false
end

-- The end of the host's stderr not yet ended by a newline: a job's output comes in chunks that
-- split lines anywhere (`ModuleNotFoundError`, `: `, `No module named ...`), each chunk's first
-- item continuing the last one's (:h channel-lines).
local partial = ""

local function add_stderr_line(line)
  if line ~= "" then
    table.insert(M.stderr, line)
    if #M.stderr > 500 then
      table.remove(M.stderr, 1)
    end
  end
end

local function push_stderr(data)
  data = data or {}
  if #data == 1 and data[1] == "" then -- the end of the stream
    add_stderr_line(partial)
    partial = ""
    return
  end
  data[1] = partial .. (data[1] or "")
  partial = table.remove(data) or ""
  for _, line in ipairs(data) do
    add_stderr_line(line)
  end
end

--- The environment the host's Python runs with: the plugin's package first on the path.
function M.env()
  local pythonpath = config.root() .. "/rplugin/python3"
  if vim.env.PYTHONPATH and vim.env.PYTHONPATH ~= "" then
    pythonpath = pythonpath .. ":" .. vim.env.PYTHONPATH
  end
  return { PYTHONPATH = pythonpath, MINIME_EDITOR = M.tag:match("=(.*)") }
end

--- Remember an agent the host started, to end its tree if the host cannot.
---@param pid integer
function M.track(pid)
  local seen = require("minime.proctree").read(pid)
  M.agents[pid] = seen and seen.start or false
end

--- Every process of our agents (their trees: see minime.proctree) and the host's, if `host`.
---@param host integer? the host's pid
local function our_processes(host)
  local proctree = require("minime.proctree")
  local roots = vim.deepcopy(M.agents)
  local seen = host and proctree.read(host)
  if seen then
    roots[host] = seen.start
  end
  return proctree.snapshot(roots, M.tag)
end

--- The host died: its agents and their commands would outlive it. SIGTERM them, SIGKILL what
--- is left half a second later.
local function end_orphans()
  local proctree = require("minime.proctree")
  local procs = our_processes()
  M.agents = {}
  proctree.terminate(procs)
  vim.defer_fn(function()
    proctree.signal(procs, "sigkill")
  end, 500)
end

--- Close every pending permission prompt and question of the dead host, unanswered (an answer
--- would start a new host, which never asked). The waiting ones first, so that none shows in
--- the place of the closed shown one.
local function close_asks()
  local askers = package.loaded["minime.ui.ask.askers"]
  for _, asker in ipairs(askers and askers.all() or {}) do
    local ids = asker:pending()
    for i = #ids, 1, -1 do
      pcall(asker.close, asker, ids[i])
    end
  end
  pcall(function()
    require("minime.ui.turn").refresh() -- its title no longer says a prompt waits
  end)
end

local used = false
--- From the host's first start (or, host = "rplugin", the first message to it) keys are timed
--- (a prompt never takes the focus right after one) and the focus is watched (notify.os): no
--- prompt and no turn's end can come before. Not from Neovim's start: the start-up budget.
local function in_use()
  if not used then
    used = true
    require("minime.ui.last_key")
    require("minime.ui.os_notify").watch()
  end
end

function M.start()
  if M.chan then
    return M.chan
  end
  in_use()
  local python = M.python()
  partial = ""
  local ok, chan = pcall(vim.fn.jobstart, { python, "-m", "minime.nvim" }, {
    rpc = true,
    env = M.env(),
    on_stderr = function(_, data)
      push_stderr(data)
    end,
    on_exit = function(_, code)
      M.chan = nil
      push_stderr({ "" }) -- a last line the stream's end did not end yet
      end_orphans()
      if not M.stopping and not said_dead then
        said_dead = true
        local why, missing = stopped_why(python, code)
        vim.schedule(function()
          -- Nothing will end its turns or read the answers to its prompts and questions any
          -- more: each turn says so, each float closes (the next ask starts a new host).
          pcall(require("minime.ui.turn").fail_running, why)
          close_asks()
          require("minime.ui.say").say(
            "minime: " .. why .. (missing and "" or "; the next ask starts it again"),
            missing and vim.log.levels.ERROR or vim.log.levels.WARN
          )
        end)
      end
      M.stopping = false
    end,
  })
  if not ok or chan <= 0 then
    error(("cannot start the Python host with %s (set `python` in setup)"):format(python), 0)
  end
  M.chan = chan
  said_dead = false
  M.send_setup()
  return chan
end

--- What the host needs of the options (no Lua functions cross).
function M.send_setup()
  local o = config.options
  local ok, specs = pcall(function()
    return require("minime.tools").user_tool_specs()
  end)
  local tools = ok and specs or {}
  M.notify("setup", {
    builtin_tools = require("minime.tools").builtin_specs(),
    permission_rules = o.permission_rules,
    user_tools = tools,
    fs = o.fs ~= false,
    additional_directories = vim.tbl_map(function(dir)
      return (vim.fs.normalize(vim.fn.fnamemodify(vim.fn.expand(dir), ":p")):gsub("(.)/$", "%1"))
    end, type(o.additional_directories) == "table" and o.additional_directories or {}),
  })
end

---@param op string
---@param payload table
function M.notify(op, payload)
  in_use()
  if config.options.host == "rplugin" then
    -- The manifest defines MiniMeNotify on first call (a FuncUndefined autocmd).
    if
      vim.fn.exists("*MiniMeNotify") == 0 and vim.fn.exists("#FuncUndefined#MiniMeNotify") == 0
    then
      error("the rplugin host is not registered: run :UpdateRemotePlugins and restart", 0)
    end
    if not M.rplugin_ready then
      M.rplugin_ready = true
      M.send_setup()
    end
    vim.fn.MiniMeNotify(op, payload)
    return
  end
  local chan = M.chan or M.start()
  vim.rpcnotify(chan, "minime", op, payload)
end

--- End the host, every agent and all they started: nothing of ours outlives the editor.
--- SIGTERM, up to half a second for them to go, SIGKILL.
function M.shutdown()
  local proctree = require("minime.proctree")
  local host = M.chan and pcall(vim.fn.jobpid, M.chan) and vim.fn.jobpid(M.chan) or nil
  M.stopping = M.chan ~= nil
  local procs = our_processes(host)
  M.agents = {}
  proctree.terminate(procs)
  vim.wait(500, function()
    return next(proctree.alive(procs)) == nil
  end, 10)
  proctree.signal(procs, "sigkill")
  if M.chan then
    pcall(vim.fn.jobstop, M.chan)
    M.chan = nil
  end
end

return M
