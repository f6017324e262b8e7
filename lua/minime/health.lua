--- :checkhealth minime — Neovim, the host's Python and its packages, the agent, and a live
--- `initialize`. Every failure says how to fix it.
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

--- Capabilities as short words: `loadSession`, `session: list, resume`, `prompt: image`.
local function capability_words(caps)
  local words = {}
  if type(caps) ~= "table" then
    return words
  end
  if caps.loadSession then
    words[#words + 1] = "loadSession"
  end
  local groups = {
    { "sessionCapabilities", "session", true },
    { "promptCapabilities", "prompt", false },
    { "mcpCapabilities", "mcp", false },
  }
  for _, g in ipairs(groups) do
    local t = caps[g[1]]
    if type(t) == "table" then
      local on = {}
      for k, v in pairs(t) do
        -- In sessionCapabilities an object ({}) means "supported"; elsewhere true does.
        if v == true or (g[3] and type(v) == "table") then
          on[#on + 1] = k
        end
      end
      table.sort(on)
      if #on > 0 then
        words[#words + 1] = g[2] .. ": " .. table.concat(on, ", ")
      end
    end
  end
  return words
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

--- What the agent's file says: found, parsed, its discovery, and whether setup() agrees.
local function check_agent_file(report, failure, agent)
  local file = report.agent_file
  if not file then
    h.error("the agent file could not be checked: " .. (failure or "no answer"))
  elseif file.error then
    h.error(
      ("agent file %s: %s"):format(file.path, file.error),
      fix("Fix the file, or point `config` in setup() at mm's agent file")
    )
  else
    local mode = type(file.discovery) == "string" and file.discovery or "meta"
    local said = type(file.discovery) == "string" and "acp.clientTools.discovery" or "mm's default"
    h.ok(("agent file: %s (discovery %s: %s)"):format(file.path, mode, said))
    if file.enabled == false then
      h.warn(
        "client tools are off in the agent file (acp.clientTools.enabled: false): "
          .. "the agent cannot read the editor",
        fix("Set acp.clientTools.enabled: true in the agent file.")
      )
    end
    local wanted = agent.discovery
    if wanted and wanted ~= mode then
      h.warn(
        ("discovery = %q in setup() disagrees with the agent file (%q): "):format(wanted, mode)
          .. "the plugin follows the file",
        fix(
          "Remove `discovery` from setup(),",
          ("or set acp.clientTools.discovery: %s in %s."):format(wanted, file.path)
        )
      )
    elseif wanted then
      h.ok(("discovery = %q in setup() agrees with the agent file"):format(wanted))
    end
  end
end

--- The agent as lua/minime/agents/ resolved it (what an ask would start), then the live check.
---@param agent? minime.ResolvedAgent nil: its definition could not be loaded
---@param problems {message: string, fix?: string[]}[]
local function check_agent(report, failure, agent, problems)
  h.start("minime: agent")
  if not agent then
    h.error(
      problems[1].message,
      fix("Set `agent` in setup() to one of them (see :h minime-agents).")
    )
    return
  end
  local source = agent.source or "inline, from setup()"
  h.ok(('agent "%s": %s (%s)'):format(agent.name, agent.label, source))
  if agent.demo then
    h.warn(agent.demo.why or agent.demo.notice or agent.label, agent.demo.fix)
  end
  for _, problem in ipairs(problems) do
    h.error(problem.message, problem.fix)
  end
  if agent.cmd and agent.exe then
    h.ok(("%s: %s (%s)"):format(agent.label, table.concat(agent.cmd, " "), agent.exe))
  end
  if agent.mode then
    h.info(
      ('session mode "%s": set when a session opens, if the agent offers it (:MiniMeMode changes it)'):format(
        agent.mode
      )
    )
  end
  if agent.agent_file then
    check_agent_file(report, failure, agent)
  elseif agent.name == "inline" then
    h.info("mm and its agent file are not used: `agent.cmd` is set")
  else
    h.info(('mm and its agent file are not used: agent = "%s"'):format(agent.name))
  end

  if #problems > 0 then
    return -- what an ask would start is not known: said above
  end
  local live = report.live
  if not live then
    h.error(
      "live check: the agent did not answer initialize: " .. (failure or "no answer"),
      fix("Run the agent's command in a shell to see what it says.")
    )
    return
  end
  if live.error then
    h.error(
      "live check: the agent did not start: " .. live.error,
      fix(
        ("Run `%s` in a shell to see what it says;"):format(table.concat(agent.cmd, " ")),
        ":MiniMeLog shows its stderr after an ask."
      )
    )
    return
  end
  local info = type(live.agent_info) == "table" and live.agent_info or {}
  local who = info.name and vim.trim(("%s %s"):format(info.name, info.version or ""))
    or "the agent (it sent no agentInfo)"
  if info.title and info.title ~= info.name then
    who = who .. (" (%s)"):format(info.title)
  end
  local seconds = tonumber(live.seconds) or 0
  if live.session_error then
    h.ok(("live check: %s answered initialize in %.1f s"):format(who, seconds))
    h.error(
      "live check: the agent could not open a session (session/new): " .. live.session_error,
      fix(
        "An agent that starts but opens no session usually lacks a login, a key or a model;",
        ("run `%s` in a shell, or see its documentation."):format(table.concat(agent.cmd, " "))
      )
    )
  else
    h.ok(
      ("live check: %s answered initialize in %.1f s, opened a session in %.1f s, then stopped"):format(
        who,
        seconds,
        tonumber(live.session_seconds) or 0
      )
    )
  end
  local words = capability_words(live.capabilities)
  h.info("capabilities: " .. (#words > 0 and table.concat(words, "; ") or "none beyond prompts"))
  local methods = {}
  for _, m in ipairs(type(live.auth_methods) == "table" and live.auth_methods or {}) do
    local how = m.type == "terminal" and ", in a terminal" or ""
    methods[#methods + 1] = ("%s (%s%s)"):format(tostring(m.name), tostring(m.id), how)
  end
  if #methods > 0 then
    h.info("login methods (:MiniMeLogin): " .. table.concat(methods, ", "))
  end
end

local HOW = {
  client = "mm's client-tools extension",
  mcp = "an MCP server of each session",
  none = "nothing: the agent cannot read the editor",
}

--- Which path each agent's editor tools take, and whether the editor's MCP server starts.
---@param agent? minime.ResolvedAgent
local function check_editor_tools(report, failure, agent)
  h.start("minime: editor tools")
  if not agent then
    return
  end
  local options = require("minime.config").options
  local said = options.editor_tools and "setup{ editor_tools }" or "its definition"
  local line = ('agent "%s" gets the editor tools over %s (editor_tools = "%s", from %s)'):format(
    agent.name,
    HOW[agent.editor_tools] or "?",
    agent.editor_tools,
    said
  )
  if agent.editor_tools == "none" then
    h.warn(line, fix('Set editor_tools = "mcp" (any ACP agent) or "client" (mm) in setup().'))
  else
    h.ok(line)
  end
  local others = {}
  local agents = require("minime.agents")
  for _, name in ipairs(agents.names()) do
    local ok, def = pcall(agents.load, name)
    local value = ok and (options.editor_tools or def.editor_tools) or nil
    if type(value) ~= "string" then
      value = (ok and def.agent_file) and "client" or "mcp"
    end
    others[#others + 1] = ("%s: %s"):format(name, value)
  end
  h.info("per agent: " .. table.concat(others, ", "))
  if agent.editor_tools == "mcp" then
    local bridge = report.bridge
    if bridge and bridge.seconds then
      h.ok(
        ("the editor's MCP server starts: tools/list answered in %d ms"):format(
          bridge.seconds * 1000
        )
      )
    else
      h.error(
        "the editor's MCP server did not start: "
          .. ((bridge and bridge.error) or failure or "no answer"),
        fix("Run :MiniMeInstall; the agent runs the bridge with the host's Python.")
      )
    end
  end
  local live = report.live or {}
  local http = vim.tbl_get(live, "capabilities", "mcpCapabilities", "http")
  for _, server in ipairs(agent.mcp_servers or {}) do
    local remote = type(server) == "table" and server.url ~= nil
    if remote and live.capabilities and not http then
      h.warn(
        ("MCP server %s is not passed: the agent does not take http servers"):format(
          tostring(server.name)
        ),
        fix("Run it as a stdio server ({ name, command, args }) instead.")
      )
    else
      h.ok(
        ("MCP server %s: passed to every session"):format(
          tostring(type(server) == "table" and server.name)
        )
      )
    end
  end
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
    check_agent(report, failure, agent, problems)
    check_editor_tools(report, failure, agent)
  else
    h.start("minime: agent")
    h.warn("not checked: the host's Python lacks its packages (above)")
  end
end

return M
