--- mm, the mini-me agent (the default): `mm -acp -config <agent file>`.
--- The binary: the `mm` option, else $MM_BIN, else `mm` on PATH; none of them at all: the
--- bundled offline demo agent (demo/mm), labelled as such. The agent file: the `config` option
--- (a path or function(cwd)), else the first of <cwd>/agent.yaml, <cwd>/.mm/agent.yaml,
--- stdpath("config")/minime/agent.yaml. Client-tool discovery is what that file says
--- (acp.clientTools.discovery): `agent_file` asks the host to read it.

local function root()
  return require("minime.config").root()
end

--- The mm binary, or nil when none is found.
local function binary(ctx)
  local wanted = ctx.config.mm or vim.env.MM_BIN or "mm"
  local found = vim.fn.exepath(vim.fn.expand(wanted))
  return found ~= "" and found or nil
end

--- No mm anywhere and none asked for: the offline demo agent stands in.
local function is_demo(ctx)
  return not ctx.config.mm and binary(ctx) == nil
end

--- The first agent file that applies to ctx.cwd, or nil.
local function lookup(ctx)
  local config = ctx.config.config
  if type(config) == "function" then
    config = config(ctx.cwd)
  end
  if config then
    return vim.fn.fnamemodify(vim.fn.expand(config), ":p")
  end
  for _, candidate in ipairs({
    ctx.cwd .. "/agent.yaml",
    ctx.cwd .. "/.mm/agent.yaml",
    vim.fn.stdpath("config") .. "/minime/agent.yaml",
  }) do
    if vim.uv.fs_stat(candidate) then
      return candidate
    end
  end
  return nil
end

-- Per resolve (one ctx): the `config` option's function runs once, however many fields ask.
local found_files = setmetatable({}, { __mode = "k" })

--- The agent file for ctx.cwd, or nil.
local function find_file(ctx)
  if found_files[ctx] == nil then
    found_files[ctx] = lookup(ctx) or false
  end
  return found_files[ctx] or nil
end

local function agent_file(ctx)
  local file = find_file(ctx)
  if file then
    return file
  end
  if is_demo(ctx) then
    return root() .. "/demo/agent.yaml" -- the demo's own
  end
  error({
    message = ("no agent file found for %s: set `config` in require('minime').setup{} (see :h minime-config)"):format(
      ctx.cwd
    ),
    fix = {
      "Set `config` in setup() to mm's agent file, or create one of",
      "<cwd>/agent.yaml, <cwd>/.mm/agent.yaml, "
        .. vim.fn.stdpath("config")
        .. "/minime/agent.yaml",
    },
  }, 0)
end

--- What mm's "Always allow" / "Never" reach: mm remembers them per tool for the session
--- (spec go-client-minime.md: "this tool, for the session"), whatever the arguments. The tool
--- is in mm's title: "bash: <command>", "client: <tool>", "<tool>: <detail>".
local function tool_of(req)
  local title = type(req.title) == "string" and req.title or ""
  if vim.startswith(title, "bash: ") then
    return "any bash command"
  end
  local client = title:match("^client: (.+)$")
  if client then
    return client .. " with any arguments"
  end
  local tool = title:match("^([%w_%-]+): ")
  return tool and ("any %s call"):format(tool) or "this tool"
end

return {
  -- The words a permission float shows after mm's options (ui/permission_reach.lua).
  permission_reach = {
    allow_always = function(req)
      return ("mm will not ask again for %s in this session"):format(tool_of(req))
    end,
    reject_always = function(req)
      return ("mm will reject %s in this session without asking"):format(tool_of(req))
    end,
  },
  label = function(ctx)
    return is_demo(ctx) and "the offline demo agent (demo/mm)" or "mm"
  end,
  cmd = function(ctx)
    local bin = is_demo(ctx) and (root() .. "/demo/mm") or binary(ctx)
    if not bin then
      error({
        message = ("mm not found: %s is not executable (set `mm` or $MM_BIN)"):format(
          ctx.config.mm
        ),
        fix = { "Fix `mm` in setup(), or remove it to use $MM_BIN, then `mm` on PATH" },
      }, 0)
    end
    return { bin, "-acp", "-config", agent_file(ctx) }
  end,
  agent_file = agent_file,
  -- mm reads the editor tools through its own client-tools extension (_meta, tools/list).
  editor_tools = "client",
  demo = function(ctx)
    if is_demo(ctx) then
      return {
        notice = "no mm found — using the offline demo agent",
        why = "mm not found ($MM_BIN, PATH): asks go to the offline demo agent (demo/mm)",
        fix = { "Install mm and put it on PATH, or set `mm` in setup() or $MM_BIN" },
      }
    end
  end,
}
