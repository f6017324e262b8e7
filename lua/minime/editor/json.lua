--- Compact JSON text of a built-in tool's value, as the host would write it: object fields in
--- one fixed order (FIELD_ORDER, the same list as _FIELD_ORDER in
--- rplugin/python3/minime/nvim/editor_tools.py; unknown fields after them, by name), an empty
--- table as [] (vim.empty_dict() as {}), no spaces, non-ASCII text as is.
---
--- Why in Lua: handing the host one string instead of a table of tables costs ~0.3 ms for
--- 1000 buffers where the table costs ~19 ms (Neovim's Lua-to-msgpack conversion and pynvim's
--- decoding of 1000 maps). `require('minime.tools').call` uses it when ctx.json is true.
local M = {}

M.FIELD_ORDER = {
  "title",
  "cwd",
  "path",
  "filetype",
  "start_line",
  "start",
  "line",
  "col",
  "end_line",
  "end",
  "end_col",
  "total_lines",
  "lines",
  "modified",
  "current",
  "visible",
  "severity",
  "source",
  "code",
  "type",
  "mode",
  "message",
  "text",
  "buffers",
  "diagnostics",
  "items",
}

local encode_string = vim.json.encode
local concat, sort, floor, format = table.concat, table.sort, math.floor, string.format
local empty_dict_mt = getmetatable(vim.empty_dict())

--- A string as a JSON string. Neovim's encoder (lua-cjson) writes DEL as "\u007f" and, before
--- 0.11, "/" as "\/": valid JSON, but the host writes both plainly (the model reads paths).
local function unescape(text, escape, plain)
  return (
    text:gsub("(\\*)\\" .. escape, function(backslashes)
      -- After an odd run of backslashes this backslash is itself escaped: not an escape.
      return #backslashes % 2 == 0 and backslashes .. plain or nil
    end)
  )
end

local function str(s)
  local out = encode_string(s)
  if out:find("\\/") then
    out = unescape(out, "/", "/")
  end
  if out:find("\\u007f") then
    out = unescape(out, "u007f", "\127")
  end
  return out
end

local function number(n)
  if n ~= n or n == math.huge or n == -math.huge then
    return "null"
  end
  if n == floor(n) and n >= -2 ^ 53 and n <= 2 ^ 53 then
    return format("%d", n)
  end
  for _, digits in ipairs({ "%.15g", "%.16g" }) do
    local s = format(digits, n)
    if tonumber(s) == n then
      return s
    end
  end
  return format("%.17g", n)
end

local FIELDS = M.FIELD_ORDER
local RANK, KEYS, KEYS_SEP = {}, {}, {} -- name -> rank, '"name":', ',"name":'
for i, name in ipairs(FIELDS) do
  RANK[name] = i
  KEYS[i] = str(name) .. ":"
  KEYS_SEP[i] = "," .. KEYS[i]
end

local encode

--- Whether a non-empty table is a list (keys 1..n), as Neovim decides when it converts one.
local function is_list(t)
  local n = #t
  if n == 0 then
    return false
  end
  local count = 0
  for _ in pairs(t) do
    count = count + 1
    if count > n then
      return false
    end
  end
  return true
end

function encode(x, out)
  local kind = type(x)
  if kind == "string" then
    out[#out + 1] = str(x)
  elseif kind == "number" then
    out[#out + 1] = number(x)
  elseif kind == "boolean" then
    out[#out + 1] = x and "true" or "false"
  elseif kind == "table" then
    if next(x) == nil then
      out[#out + 1] = getmetatable(x) == empty_dict_mt and "{}" or "[]"
    elseif is_list(x) then
      out[#out + 1] = "["
      for i = 1, #x do
        if i > 1 then
          out[#out + 1] = ","
        end
        encode(x[i], out)
      end
      out[#out + 1] = "]"
    else
      -- The known fields in their order (a lookup each: cheaper than sorting per object), then
      -- any others by name.
      out[#out + 1] = "{"
      local total = 0
      for _ in pairs(x) do
        total = total + 1
      end
      local found = 0
      for i = 1, #FIELDS do
        local v = x[FIELDS[i]]
        if v ~= nil then
          found = found + 1
          out[#out + 1] = found > 1 and KEYS_SEP[i] or KEYS[i]
          encode(v, out)
          if found == total then
            break
          end
        end
      end
      if found < total then
        local others = {}
        for k in pairs(x) do
          if type(k) ~= "string" or not RANK[k] then
            others[#others + 1] = tostring(k)
          end
        end
        sort(others)
        for _, k in ipairs(others) do
          local v = x[k]
          if v == nil then
            v = x[tonumber(k)]
          end
          found = found + 1
          out[#out + 1] = (found > 1 and "," or "") .. str(k) .. ":"
          encode(v, out)
        end
      end
      out[#out + 1] = "}"
    end
  else -- nil, vim.NIL (userdata), functions: what the host would see as null
    out[#out + 1] = "null"
  end
end

--- `s` as a JSON string, written as M.encode writes strings.
M.string = str

--- Whether `names` (field names) are in the order M.encode writes them: a tool that writes its
--- JSON text itself (open_buffers, for speed) checks its template with this once.
---@param names string[]
---@return boolean
function M.in_order(names)
  for i = 2, #names do
    if not (RANK[names[i - 1]] and RANK[names[i]] and RANK[names[i - 1]] < RANK[names[i]]) then
      return false
    end
  end
  return true
end

--- The JSON text of `value`.
---@param value any
---@return string
function M.encode(value)
  local out = {}
  encode(value, out)
  return concat(out)
end

return M
