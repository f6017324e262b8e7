--- Editor tools lent to the agent (the model sees `client_<name>`), run by the Python host with
--- one exec_lua per call:
---
---   require("minime.tools").call(name, args, cwd, reply)
---     -> { ok = true, value = <table or string> } | { ok = false, error = "<message>" }
---      | { ok = true, pending = true }: the answer comes later through `reply` (see M.call)
---
--- The host passes the session's cwd; the tool's `ctx` is then built here from the options as
--- they are (config.tool_ctx) and the running ask's selection (editor/asks.lua). Tests and
--- benchmarks may pass a ctx table instead of the cwd:
--- `ctx` = { cwd = string, deny = string[]|nil, max_lines = n|nil, max_bytes = n|nil,
---           max_line_bytes = n|nil, selection = table|nil } (see editor/scope.lua,
--- editor/text.lua, tools/selection.lua). A built-in tool's table is handed over as its compact
--- JSON text (M.encode: a big table costs far more to cross msgpack than one string), its
--- objects' fields in the order its file declares (`fields`); a user tool returns a string
--- (sent as is) or a table (encoded by the host). `call` never throws: a tool's
--- `error({ message = ... }, 0)` becomes that message, and so does a user tool's
--- `error("...")` (without its "file.lua:12: " prefix); any other error of a built-in tool is a
--- bug and becomes a short "internal error", its traceback kept for whoever debugs it:
---   :lua =require("minime.tools").last_error
local M = {}

--- The built-in tools: each file of this folder but this one, `<name>.lua` returning
--- { description, input_schema, fields, handler = function(args, ctx) }. `fields` names its
--- parameters and its answer's fields in the order the model reads them (a Lua table has no
--- order; the others follow by name). Adding a tool is adding a file. Their names are
--- reserved. Only this folder counts (not 'runtimepath').
M.BUILTIN = {}

local builtin = {}
do
  local dir = vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))
  for file, kind in vim.fs.dir(dir) do
    local name = file:match("^(.+)%.lua$")
    if name and name ~= "init" and kind == "file" then
      M.BUILTIN[#M.BUILTIN + 1] = name
      builtin[name] = true
    end
  end
  table.sort(M.BUILTIN)
end

-- The user tools are the `tools` option, read when needed; this is only its index, rebuilt
-- when setup() gave a new list (setup() already said what is wrong with a bad one).
local indexed = { list = nil, tools = {}, order = {} }

--- The user tools of the `tools` option as it is now: by name, and in order.
---@return table<string, table> tools, string[] order
local function user_tools()
  local list = require("minime.config").options.tools
  if list ~= indexed.list then
    local ok, tools, order = pcall(M.check_user_tools, list)
    indexed = ok and { list = list, tools = tools, order = order }
      or { list = list, tools = {}, order = {} }
  end
  return indexed.tools, indexed.order
end

local json_encode = vim.json.encode
local empty_dict_mt = getmetatable(vim.empty_dict())

-- The JSON text of `x` into `out`, each object's fields ranked by `rank` (name -> position;
-- fields without one follow, by name): vim.json.encode writes every value, this the order.
local function encode_into(x, rank, out)
  if type(x) ~= "table" or next(x) == nil or getmetatable(x) == empty_dict_mt then
    out[#out + 1] = json_encode(x) -- an empty table: [] (vim.empty_dict(): {})
  elseif vim.islist(x) then
    for i = 1, #x do
      out[#out + 1] = i == 1 and "[" or ","
      encode_into(x[i], rank, out)
    end
    out[#out + 1] = "]"
  else
    local keys = {}
    for k in pairs(x) do
      keys[#keys + 1] = tostring(k)
    end
    table.sort(keys, function(a, b)
      local ra, rb = rank[a] or math.huge, rank[b] or math.huge
      if ra ~= rb then
        return ra < rb
      end
      return a < b
    end)
    for i, k in ipairs(keys) do
      local v = x[k]
      if v == nil then
        v = x[tonumber(k)]
      end
      out[#out + 1] = (i == 1 and "{" or ",") .. json_encode(k) .. ":"
      encode_into(v, rank, out)
    end
    out[#out + 1] = "}"
  end
end

-- name -> position of a list of field names.
local function ranks(fields)
  local rank = {}
  for i, name in ipairs(type(fields) == "table" and fields or {}) do
    rank[name] = i
  end
  return rank
end

local tool_ranks = {} ---@type table<string, table<string, integer>>

--- The compact JSON text of `value`, objects' fields in the order of `fields` (then by name).
---@param value any
---@param fields string[]|nil
---@return string
function M.encode(value, fields)
  local out = {}
  encode_into(value, ranks(fields), out)
  return table.concat(out)
end

--- Tool `tool` as the model of the agent that called it sees it (`ctx.tool_names`, from its
--- definition: lua/minime/agents/; mm's `client_<tool>` by default), for the notes a tool
--- writes into its answer. Its descriptions and errors the host renames (nvim/tool_names.py).
---@param tool string
---@param ctx table
---@return string
function M.name(tool, ctx)
  local names = type(ctx) == "table" and type(ctx.tool_names) == "string" and ctx.tool_names
    or "client_%s"
  return (names:gsub("%%s", (tool:gsub("%%", "%%%%")), 1))
end

--- The traceback of the last unexpected error of a tool, for whoever debugs it.
M.last_error = nil

-- The name the model sees, as mm derives it (two names that give the same one collide).
local function model_name(name)
  return (("client_" .. name):gsub("[^%w]+", "_"):gsub("^_+", ""):gsub("_+$", ""))
end

local function internal_error(name)
  return "internal error in the editor while running " .. name .. " (not caused by the arguments)"
end

local function message_of(err)
  if type(err) == "table" and type(err.message) == "string" then
    return err.message
  end
  return nil
end

-- The answer of a tool that ended: `ok`, with its value or its error (see M.call).
local function settle(name, is_user, ctx, ok, result, traceback)
  if not ok then
    local message = message_of(result)
    if message and not is_user then
      -- A built-in tool's error may quote a language server's, which names any file.
      local made, scope = pcall(require("minime.editor.scope").new, ctx)
      return { ok = false, error = made and scope:scrub(message) or message }
    elseif message then
      return { ok = false, error = message }
    end
    M.last_error = traceback or tostring(result)
    if is_user and type(result) == "string" then
      -- A user's own error("...") is meant for the model; drop the "file.lua:12: " prefix.
      return { ok = false, error = (result:gsub("^[^\n]-:%d+: ", "")) }
    end
    return { ok = false, error = internal_error(name) }
  end
  if not is_user and type(result) == "table" then
    local rank = tool_ranks[name]
    if not rank then
      rank = ranks(require("minime.tools." .. name).fields)
      tool_ranks[name] = rank
    end
    local out = {}
    local encoded = pcall(encode_into, result, rank, out)
    if encoded then
      result = table.concat(out) -- else the table, which the host encodes
    end
  elseif is_user then
    if result == nil or result == vim.NIL then
      result = ""
    elseif type(result) ~= "table" and type(result) ~= "string" then
      result = tostring(result)
    end
  end
  return { ok = true, value = result }
end

-- The ctx of a call the host makes for `cwd` in `thread`: the options as they are now, the
-- cwd, and the selection of the ask the thread's running turn was started with.
local function ctx_for(cwd, thread)
  local ctx = require("minime.config").tool_ctx(cwd)
  ctx.cwd = cwd
  ctx.thread = thread
  ctx.selection = require("minime.editor.asks").selection(thread)
  return ctx
end

--- When the last call came (vim.uv.now()): the disk refresh waits for a pause in the calls.
---@type integer?
M.last_call = nil

--- Run tool `name`; never throws. A tool that waits (async.wait: a file read off the main
--- loop) answers `{ ok = true, pending = true }` at once and its real answer later, through
--- `reply`: a function(answer), or the id the host gave (notification "tool_result").
--- `thread`: the thread whose agent calls (the host's calls name it; its ask's selection).
--- `names`: how the calling agent's model names the tools (see M.name).
---@return { ok: boolean, value?: any, error?: string, pending?: boolean }
function M.call(name, args, ctx, reply, thread, names)
  M.last_call = vim.uv.now()
  if type(ctx) == "string" then
    ctx = ctx_for(ctx, type(thread) == "string" and thread or nil)
    ctx.tool_names = type(names) == "string" and names or nil
  elseif type(ctx) ~= "table" then
    ctx = {}
  end
  if args == vim.NIL then
    args = nil
  end
  -- In meta discovery every session gets the same list: disabled_tools is enforced per call.
  if type(ctx.disabled) == "table" and vim.tbl_contains(ctx.disabled, name) then
    return { ok = false, error = ("%s is turned off in this directory"):format(tostring(name)) }
  end
  local fn, is_user
  if type(name) == "string" and builtin[name] then
    local loaded, mod = pcall(require, "minime.tools." .. name)
    if not loaded or type(mod) ~= "table" or type(mod.handler) ~= "function" then
      M.last_error = tostring(mod)
      return { ok = false, error = internal_error(name) }
    end
    fn = mod.handler
  elseif type(name) == "string" and user_tools()[name] then
    fn, is_user = user_tools()[name].handler, true
  else
    return { ok = false, error = "unknown tool: " .. tostring(name) }
  end
  local answer = require("minime.editor.async").answer(function()
    return fn(args or {}, ctx)
  end, function(ok, result, traceback)
    return settle(name, is_user, ctx, ok, result, traceback)
  end, reply)
  if answer.pending and reply == nil then
    return { ok = false, error = internal_error(name) .. " (no one to answer later)" }
  end
  return answer
end

local function fix_schema(schema)
  -- An empty Lua table crosses msgpack as an array; JSON Schema wants objects here.
  if type(schema) ~= "table" then
    return schema
  end
  local out = {}
  for k, v in pairs(schema) do
    if (k == "properties" or k == "items") and type(v) == "table" and next(v) == nil then
      out[k] = vim.empty_dict()
    elseif k == "properties" and type(v) == "table" then
      local props = {}
      for pk, pv in pairs(v) do
        props[pk] = (type(pv) == "table" and next(pv) == nil) and vim.empty_dict() or fix_schema(pv)
      end
      out[k] = props
    else
      out[k] = type(v) == "table" and fix_schema(v) or v
    end
  end
  return out
end

--- Check the user tools `list`, each { name, description?, input_schema?, handler } where
--- `handler(args, ctx)` returns a string or a table; returns them by name and in order.
--- Throws on an invalid entry (setup() runs it, where the user reads the error).
---@param list table[]
---@return table<string, table> tools, string[] order
function M.check_user_tools(list)
  local tools, order, seen = {}, {}, {}
  for _, name in ipairs(M.BUILTIN) do
    seen[model_name(name)] = "the built-in tool " .. name
  end
  for i, tool in ipairs(list or {}) do
    local where = string.format("minime: user tool %d", i)
    if type(tool) ~= "table" then
      error(where .. ": not a table", 2)
    end
    if type(tool.name) ~= "string" or not tool.name:find("%w") then
      error(where .. ": name must be a string with a letter or digit", 2)
    end
    where = string.format("minime: user tool %q", tool.name)
    local visible = model_name(tool.name)
    if seen[visible] then
      error(string.format("%s: its name %s is taken by %s", where, visible, seen[visible]), 2)
    end
    if type(tool.handler) ~= "function" then
      error(where .. ": handler must be a function(args, ctx)", 2)
    end
    if tool.description ~= nil and type(tool.description) ~= "string" then
      error(where .. ": description must be a string", 2)
    end
    local schema = tool.input_schema
    if schema ~= nil and (type(schema) ~= "table" or (schema.type or "object") ~= "object") then
      error(where .. ': input_schema must be a table with type = "object"', 2)
    end
    seen[visible] = "user tool " .. tool.name
    tools[tool.name] = tool
    order[#order + 1] = tool.name
  end
  return tools, order
end

--- Declarations of the built-in tools for the host: { { name, description, input_schema } },
--- input_schema as JSON text: "type" first, the parameters in the tool's `fields` order (a Lua
--- table has none, the model reads one), the rest by name.
function M.builtin_specs()
  local specs = {}
  for _, name in ipairs(M.BUILTIN) do
    local tool = require("minime.tools." .. name)
    specs[#specs + 1] = {
      name = name,
      description = tool.description,
      input_schema = M.encode(fix_schema(tool.input_schema), { "type", unpack(tool.fields or {}) }),
    }
  end
  return specs
end

--- Declarations of the user tools for the host: { { name, description, input_schema } }.
function M.user_tool_specs()
  local specs = {}
  local tools, order = user_tools()
  for _, name in ipairs(order) do
    local tool = tools[name]
    specs[#specs + 1] = {
      name = name,
      description = tool.description or vim.NIL,
      input_schema = tool.input_schema and fix_schema(tool.input_schema) or vim.NIL,
    }
  end
  return specs
end

return M
