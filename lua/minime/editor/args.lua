--- Checking the model's arguments, and the one way a tool reports a failure the model can act on.
---
--- Convention: a tool raises `error({ message = "..." }, 0)` (through `fail`) for anything the
--- model should read; `require('minime.tools').call` turns it into `{ ok = false, error = ... }`.
--- Any other Lua error is a bug and reaches the model only as a short "internal error".
local M = {}

---@param message string
function M.fail(message)
  error({ message = message }, 0)
end

-- JSON null arrives as vim.NIL; a missing argument and a null one mean the same.
local function absent(value)
  return value == nil or value == vim.NIL
end

local function show(value)
  if type(value) == "string" then
    return string.format("%q", #value > 40 and value:sub(1, 40) .. "..." or value)
  end
  return type(value) == "table" and "an object or array" or tostring(value)
end

--- The table of arguments (JSON null or nothing: no argument).
function M.table(args)
  if absent(args) then
    return {}
  end
  if type(args) ~= "table" then
    M.fail("the arguments must be a JSON object")
  end
  return args
end

--- A string argument; nil when absent and not required.
---@return string|nil
function M.string(args, key, required)
  local value = args[key]
  if absent(value) then
    if required then
      M.fail(string.format("missing argument %s (a string)", key))
    end
    return nil
  end
  if type(value) ~= "string" then
    M.fail(string.format("%s must be a string, got %s", key, show(value)))
  end
  if value == "" then
    M.fail(string.format("%s must not be empty", key))
  end
  return value
end

--- A line number (integer >= 1); nil when absent. Digit strings ("12") are accepted: small
--- models send them, and the meaning is not in doubt.
---@return integer|nil
function M.line(args, key)
  local value = args[key]
  if absent(value) then
    return nil
  end
  local n = value
  if type(value) == "string" and value:match("^%s*%d+%s*$") then
    n = tonumber(value)
  end
  if type(n) ~= "number" or n ~= math.floor(n) or n ~= n or n == math.huge then
    M.fail(
      string.format("%s must be a whole number (a line number, 1-based), got %s", key, show(value))
    )
  end
  if n > 2147483647 then
    M.fail(string.format("%s is too large: %s", key, show(value)))
  end
  if n < 1 then
    M.fail(
      string.format("%s must be 1 or more (lines are numbered from 1), got %s", key, tostring(n))
    )
  end
  return n
end

--- One of `values`; nil when absent.
---@param values string[]
---@return string|nil
function M.enum(args, key, values)
  local value = args[key]
  if absent(value) then
    return nil
  end
  if type(value) == "string" then
    local lower = value:lower()
    for _, v in ipairs(values) do
      if lower == v then
        return v
      end
    end
  end
  M.fail(
    string.format("%s must be one of %s, got %s", key, table.concat(values, ", "), show(value))
  )
end

return M
