--- One file per agent (the nvim-lspconfig habit): lua/minime/agents/<name>.lua on 'runtimepath'
--- returns a plain table that says how to start that agent (:h minime-agents). `setup{ agent }`
--- names one (default "mm") or is one inline; resolve() turns it into what an ask starts, and
--- :checkhealth reports the same thing, so the two never disagree.
local M = {}

local DIR = "lua/minime/agents/"

--- A value on one line, for an error message.
local function shown(value)
  return vim.inspect(value, { newline = " ", indent = "" })
end

--- The names of the definitions on 'runtimepath': the shipped ones and any of yours.
---@return string[]
function M.names()
  local names = {}
  for _, path in ipairs(vim.api.nvim_get_runtime_file(DIR .. "*.lua", true)) do
    local name = vim.fn.fnamemodify(path, ":t:r")
    if name ~= "init" and not vim.tbl_contains(names, name) then
      names[#names + 1] = name
    end
  end
  table.sort(names)
  return names
end

--- The definition called `name` and the file it came from (the first on 'runtimepath').
---@param name string
---@return table definition, string path
function M.load(name)
  if type(name) ~= "string" or not name:match("^[%w_%-]+$") or name == "init" then
    error(("`agent` must be a name or { cmd = {...}, env = {...} }, got %s"):format(shown(name)), 0)
  end
  local path = vim.api.nvim_get_runtime_file(DIR .. name .. ".lua", false)[1]
  if not path then
    error(
      ('unknown agent "%s": the agents are %s (or add lua/minime/agents/%s.lua, see :h minime-agents)'):format(
        name,
        table.concat(M.names(), ", "),
        name
      ),
      0
    )
  end
  -- Read afresh each time (not require): an edited definition applies at the next ask.
  local chunk, err = loadfile(path)
  local ok, def = false, err
  if chunk then
    ok, def = pcall(chunk)
  end
  if not ok or type(def) ~= "table" then
    local why = ok and ("it returns %s, not a table"):format(type(def)) or tostring(def)
    error(('agent "%s" (%s): %s'):format(name, path, why), 0)
  end
  return def, path
end

--- A definition's field: the value, or what its function returns for `ctx`. A definition
--- raises a string, or { message = "...", fix = { "how to fix it", ... } } for :checkhealth.
---@return any value, {message: string, fix?: string[]}? problem
local function field(def, key, ctx)
  local value = def[key]
  if type(value) ~= "function" then
    return value, nil
  end
  local ok, result = pcall(value, ctx)
  if ok then
    return result, nil
  end
  if type(result) == "table" and result.message then
    return nil, { message = tostring(result.message), fix = result.fix }
  end
  return nil, { message = tostring(result) }
end

local function is_list_of_strings(value)
  if type(value) ~= "table" or #value == 0 then
    return false
  end
  for _, item in ipairs(value) do
    if type(item) ~= "string" then
      return false
    end
  end
  return true
end

local function is_map_of_strings(value)
  return type(value) == "table"
    and not vim.iter(pairs(value)):any(function(k, v)
      return type(k) ~= "string" or type(v) ~= "string"
    end)
end

--- Sets resolved.cmd and resolved.exe; the problem with `cmd`, if any.
local function check_cmd(resolved, cmd, install)
  if cmd == nil then
    return { message = ("%s: no cmd: the agent's command line is needed"):format(resolved.label) }
  end
  if not is_list_of_strings(cmd) then
    return {
      message = ("%s: cmd must be a list of strings, got %s"):format(resolved.label, shown(cmd)),
    }
  end
  resolved.cmd = cmd
  local exe = vim.fn.exepath(vim.fn.expand(cmd[1]))
  if exe == "" then
    local how = install()
    return {
      message = ("%s: %s is not executable"):format(resolved.label, cmd[1]),
      fix = { how and ("Install it: " .. how) or "Fix `agent` in setup() (see :h minime-agents)." },
    }
  end
  resolved.exe = exe
  return nil
end

---@class minime.ResolvedAgent
---@field name string the definition's name, or "inline" for setup{ agent = { cmd = ... } }
---@field label string how messages name the agent
---@field source? string the definition's file
---@field cmd string[] the command line
---@field exe? string cmd[1] found on PATH
---@field env? table<string, string> added to the agent's environment
---@field discovery? string "meta"|"request" asked for; nil: the agent file's, else "meta"
---@field agent_file? string mm's agent file: its acp.clientTools.discovery wins (read by the host)
---@field demo? table the offline demo agent stands in ({ notice, why, fix })
---@field mode? string the session mode set when a session opens (setup's, else the definition's)
---@field editor_tools string "client"|"mcp"|"none": how the agent reaches the editor tools
---@field mcp_servers table[] the definition's own MCP servers, then setup's (the host checks them)
---@field tool_names string how the agent names the editor tools to its model ("client_%s" for
--- mm; over MCP its definition's `tool_names`, else "%s": the bare name, which every agent's
--- own name ends with): the tools' texts name each other so
---@field mcp_hint? string what to check when the agent never starts the editor's MCP server
---@field budget? {cost?: number, tokens?: integer} the definition's budget, else setup's

--- The agent an ask in `cwd` starts: `opts.agent` (a definition's name: a thread made with
--- :MiniMeNew <agent>), else the `agent` option. Raises the first problem as a plain message;
--- with `opts.collect` returns every problem instead (what :checkhealth lists).
---@param cwd string
---@param opts? {collect?: boolean, agent?: string}
---@return minime.ResolvedAgent resolved, {message: string, fix?: string[]}[] problems
function M.resolve(cwd, opts)
  local options = require("minime.config").options
  local ctx = { cwd = cwd, config = options }
  local agent = opts and opts.agent or options.agent
  -- setup's mode, discovery and editor_tools are the configured agent's: another definition
  -- named for a thread keeps its own.
  local own = agent == options.agent
  if agent == nil then
    agent = "mm"
  end
  local def, source, name
  if type(agent) == "table" then
    def, name = agent, "inline"
  else
    def, source = M.load(agent)
    name = agent
  end
  local resolved = { name = name, source = source }
  local problems = {}
  local function take(key)
    local value, problem = field(def, key, ctx)
    if
      problem
      and not vim.iter(problems):any(function(p)
        return p.message == problem.message
      end)
    then
      problems[#problems + 1] = problem
    end
    return value
  end
  local label = take("label")
  resolved.label = type(label) == "string" and label or (name == "inline" and "agent.cmd" or name)
  local cmd = take("cmd")
  if cmd ~= nil or #problems == 0 then
    local problem = check_cmd(resolved, cmd, function()
      return take("install")
    end)
    problems[#problems + 1] = problem
  end
  local env = take("env")
  if env ~= nil and not is_map_of_strings(env) then
    problems[#problems + 1] = {
      message = ("%s: env must be a table of strings, got %s"):format(resolved.label, shown(env)),
    }
  elseif env and next(env) then
    resolved.env = env -- an empty one is none (it would travel as a list)
  end
  resolved.agent_file = take("agent_file")
  local demo = take("demo")
  if demo and type(demo) ~= "table" then
    demo = { notice = "using " .. resolved.label }
  end
  resolved.demo = demo or nil
  -- setup{ mode } wins over the definition's: the session mode set when a session opens.
  local mode = own and options.mode or nil
  if mode == nil then
    mode = take("mode")
  end
  if mode ~= nil and type(mode) ~= "string" then
    problems[#problems + 1] = {
      message = ("mode must be a mode id (a string), got %s"):format(shown(mode)),
    }
    mode = nil
  end
  resolved.mode = mode
  -- nil: the agent file's word (agent_file), else "meta"; said so the host can tell a conflict.
  local discovery = own and options.discovery or take("discovery")
  if discovery ~= nil and discovery ~= "meta" and discovery ~= "request" then
    problems[#problems + 1] = {
      message = ('discovery must be "meta" or "request", got %s'):format(shown(discovery)),
    }
  end
  resolved.discovery = discovery
  -- setup{ editor_tools } wins over the definition's. A definition that says nothing gets
  -- mm's client tools if it names mm's agent file, else the MCP server.
  local editor_tools = own and options.editor_tools
    or take("editor_tools")
    or (resolved.agent_file and "client" or "mcp")
  if not vim.tbl_contains({ "client", "mcp", "none" }, editor_tools) then
    problems[#problems + 1] = {
      message = ('editor_tools must be "client", "mcp" or "none", got %s'):format(
        shown(editor_tools)
      ),
    }
    editor_tools = "none"
  end
  resolved.editor_tools = editor_tools
  local tool_names = take("tool_names")
  if editor_tools == "client" then
    tool_names = "client_%s" -- what mm makes of a client tool's name
  elseif
    tool_names ~= nil
    and (type(tool_names) ~= "string" or select(2, tool_names:gsub("%%s", "")) ~= 1)
  then
    problems[#problems + 1] = {
      message = ("tool_names must be a name with one %%s (the tool's), got %s"):format(
        shown(tool_names)
      ),
    }
    tool_names = nil
  end
  resolved.tool_names = tool_names or "%s"
  local hint = take("mcp_hint")
  resolved.mcp_hint = type(hint) == "string" and hint or nil
  local servers = {}
  for _, list in ipairs({ take("mcp_servers") or {}, options.mcp_servers or {} }) do
    if type(list) ~= "table" then
      problems[#problems + 1] = {
        message = ("mcp_servers must be a list of servers, got %s"):format(shown(list)),
      }
    else
      vim.list_extend(servers, list)
    end
  end
  resolved.mcp_servers = servers
  resolved.budget = require("minime.budget").resolve(take("budget"), options.budget, problems)
  if problems[1] and not (opts and opts.collect) then
    error(problems[1].message, 0)
  end
  return resolved, problems
end

return M
