--- :checkhealth minime — Neovim, the host's Python and its packages (here), the agent, a live
--- `initialize` and the editor tools (health_agent.lua). Every failure says how to fix it.
---
--- The Python side runs `python -m minime.nvim.health` once (rplugin/python3/minime/nvim/health.py),
--- which prints JSON lines; :checkhealth is synchronous, so it is waited for with a deadline.
local M = {}

local h = vim.health

--- Seconds the agent has to answer `initialize` in the live check.
M.live_timeout = 20

local TESTED_SDK = "0.12.1"
local MIN_PYTHON = { 3, 11 }

local function fix(...)
  return { ... }
end

local function version_at_least(text, min)
  local parts = vim.tbl_map(tonumber, vim.split(text or "", ".", { plain = true }))
  for i, want in ipairs(min) do
    local have = parts[i] or 0
    if have ~= want then
      return have > want
    end
  end
  return true
end

--- Run the Python side; its JSON lines as one table ({python, packages, agent_file, live}).
---@return table report, string? failure
local function run_python(python, args)
  local cmd = { python, "-m", "minime.nvim.health", vim.json.encode(args) }
  local ok, proc = pcall(vim.system, cmd, {
    text = true,
    env = require("minime.host").env(),
    cwd = args.cwd,
  })
  if not ok then
    return {}, tostring(proc)
  end
  local res = proc:wait((M.live_timeout + 10) * 1000)
  local report = {}
  for _, line in ipairs(vim.split(res.stdout or "", "\n", { trimempty = true })) do
    local decoded, item = pcall(vim.json.decode, line)
    if decoded and type(item) == "table" then
      report = vim.tbl_extend("force", report, item)
    end
  end
  if res.code ~= 0 then
    local err = vim.split(vim.trim(res.stderr or ""), "\n")
    local last = err[#err] or ""
    if res.code == 124 or res.signal == 9 then
      return report, ("no answer within %d s"):format(M.live_timeout + 10)
    end
    return report, ("exit %d%s"):format(res.code, last ~= "" and (": " .. last) or "")
  end
  return report, nil
end

local function check_neovim()
  h.start("minime: Neovim")
  local min = require("minime").min_version
  local v = vim.version()
  local text = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-" .. min) == 1 then
    h.ok(("Neovim %s (needs %s or newer)"):format(text, min))
  else
    h.error(
      ("Neovim %s is too old: minime needs %s or newer"):format(text, min),
      fix("Upgrade Neovim.")
    )
  end
end

--- The interpreter the host runs with, and whether it is the plugin's own.
local function host_python()
  local config = require("minime.config")
  if config.options.host == "rplugin" then
    local prog = vim.g.python3_host_prog
    return (prog and prog ~= "") and vim.fn.expand(prog) or "python3", "Neovim's python3 provider"
  end
  local python = require("minime.host").python()
  local own = config.root() .. "/.venv/bin/python"
  return python, python == own and "the plugin's own .venv" or nil
end

---@return boolean usable
local function check_python(report, failure, python, origin)
  h.start("minime: Python host")
  local install = "Run :MiniMeInstall (or ./scripts/setup in the plugin's directory)."
  local py = report.python
  if not py then
    h.error(
      ("%s cannot run the host's health check: %s"):format(python, failure or "no output"),
      fix(install, "Or set `python` in setup() to an interpreter with minime's packages.")
    )
    return false
  end
  local where = origin and (" — " .. origin) or ""
  if version_at_least(py.version, MIN_PYTHON) then
    h.ok(("Python %s: %s%s"):format(py.version, py.executable, where))
  else
    h.error(
      ("Python %s at %s is too old: minime needs 3.11 or newer"):format(py.version, py.executable),
      fix("Set `python` in setup() to Python 3.11+, or run :MiniMeInstall with PYTHON=python3.11.")
    )
  end
  local missing = {}
  local labels = { ["agent-client-protocol"] = "the ACP SDK (agent-client-protocol)" }
  for _, name in ipairs({ "pynvim", "agent-client-protocol", "msgspec", "pyyaml" }) do
    local version = (report.packages or {})[name]
    local label = labels[name] or name
    if type(version) ~= "string" then
      missing[#missing + 1] = label
    elseif name == "agent-client-protocol" and version ~= TESTED_SDK then
      h.warn(
        ("%s %s: minime is tested with %s"):format(label, version, TESTED_SDK),
        fix("another version may differ in what minime relies on; " .. install)
      )
    else
      h.ok(("%s %s"):format(label, version))
    end
  end
  -- One error, naming the Python and all it lacks: the one fix is to install them.
  if #missing > 0 then
    h.error(
      ("%s lacks minime's packages: %s"):format(py.executable, table.concat(missing, ", ")),
      fix(install)
    )
  end
  local usable = #missing == 0
  return usable
end

function M.check()
  check_neovim()
  local cwd = vim.fn.getcwd()
  local ok, agent, problems = pcall(require("minime.agents").resolve, cwd, { collect = true })
  if not ok then
    agent, problems = nil, { { message = tostring(agent) } }
  end
  local python, origin = host_python()
  local report = {}
  local failure
  if vim.fn.executable(python) == 1 then
    report, failure = run_python(python, {
      command = agent and agent.cmd,
      env = agent and agent.env,
      agent_file = agent and agent.agent_file,
      discovery = agent and agent.discovery,
      editor_tools = agent and agent.editor_tools,
      cwd = cwd,
      live = agent ~= nil and #problems == 0,
      timeout = M.live_timeout,
    })
  else
    failure = python .. " is not executable"
  end
  local usable = check_python(report, failure, python, origin)
  if usable then
    local agent_checks = require("minime.health_agent")
    agent_checks.check_agent(report, failure, agent, problems)
    agent_checks.check_editor_tools(report, failure, agent)
  else
    h.start("minime: agent")
    h.warn("not checked: the host's Python lacks its packages (above)")
  end
  require("minime.health_budget").check(agent)
end

return M
