--- :checkhealth minime, the agent's part: the agent as resolved (what an ask would start),
--- its agent file, the live `initialize` and session/new the Python side ran
--- (rplugin/python3/minime/nvim/health.py), and the path the editor tools take. The report
--- and its failure come from minime.health, which runs the Python side once for every part.
local M = {}

-- The report quotes the agent (its agentInfo, errors, login methods, capability names): each
-- message is one printable line (minime.ui.printable), so no line break of the agent's makes
-- a line of the report ("- OK …") and no escape reaches a UI that draws the report itself.
local h = setmetatable({}, {
  __index = function(_, level)
    return function(message, advice)
      return vim.health[level](require("minime.ui.printable").line(message, math.huge), advice)
    end
  end,
})

local function fix(...)
  return { ... }
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
function M.check_agent(report, failure, agent, problems)
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
function M.check_editor_tools(report, failure, agent)
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

return M
