--- The fields of an agent's question (elicitation/create, form mode: a flat JSON schema) and
--- how each is answered through vim.ui: an enum or a boolean by vim.ui.select, several enum
--- values by toggling picks, text and numbers by vim.ui.input (converted, bounds checked, asked
--- again when not one). The float around them is elicitation.lua's.
local M = {}

local function str(v)
  return type(v) == "string" and v or (v == nil or v == vim.NIL) and "" or tostring(v)
end
M.str = str

--- The values an enum field offers (`enum`, or titled `oneOf`/`anyOf` items), or nil.
---@return {value: any, label: string, description?: string}[]?
local function choices_of(schema)
  if type(schema) ~= "table" then
    return nil
  end
  if type(schema.enum) == "table" then
    local names = type(schema.enumNames) == "table" and schema.enumNames or {}
    local out = {}
    for i, v in ipairs(schema.enum) do
      out[i] = { value = v, label = str(names[i] ~= nil and names[i] or v) }
    end
    return out
  end
  local list = type(schema.oneOf) == "table" and schema.oneOf
    or type(schema.anyOf) == "table" and schema.anyOf
  if not list then
    return nil
  end
  local out = {}
  for _, item in ipairs(list) do
    if type(item) == "table" and item.const ~= nil then
      out[#out + 1] = {
        value = item.const,
        label = str(item.title ~= nil and item.title or item.const),
        description = item.description ~= nil and str(item.description) or nil,
      }
    end
  end
  return out
end

--- "enum" | "multi" | "boolean" | "number" | "integer" | "string", and an enum's choices.
---@return string kind, {value: any, label: string, description?: string}[]? choices
function M.kind_of(field)
  if field.type == "array" then
    return "multi", choices_of(field.items) or {}
  end
  local choices = choices_of(field)
  if choices then
    return "enum", choices
  end
  if field.type == "boolean" or field.type == "number" or field.type == "integer" then
    return field.type
  end
  return "string"
end

--- The one-key shape: exactly one enum field (of 1 to 9 choices), every other field optional
--- text (at most one): that enum field and that text field.
function M.one_key(req)
  local pick, other
  for _, field in ipairs(req.fields or {}) do
    local kind, choices = M.kind_of(field)
    if kind == "enum" and not pick and #choices > 0 and #choices <= 9 then
      pick = field
    elseif kind == "string" and not field.required and not other then
      other = field
    else
      return nil
    end
  end
  return pick, other
end

--- What the field is called: its title, else its name.
function M.label(field)
  local title = str(field.title)
  return title ~= "" and title or str(field.name)
end

local function say(text)
  require("minime.ui.say").say("minime: " .. text, vim.log.levels.WARN)
end

--- A value typed for a field, converted to its type; nil and a reason when it is not one.
local function typed(field, kind, text)
  if kind == "number" or kind == "integer" then
    local n = tonumber(text)
    if not n or (kind == "integer" and n ~= math.floor(n)) then
      local what = kind == "integer" and "a whole number" or "a number"
      return nil, ("%s must be %s"):format(M.label(field), what)
    end
    if tonumber(field.minimum) and n < tonumber(field.minimum) then
      return nil, ("%s must be at least %s"):format(M.label(field), field.minimum)
    end
    if tonumber(field.maximum) and n > tonumber(field.maximum) then
      return nil, ("%s must be at most %s"):format(M.label(field), field.maximum)
    end
    return n
  end
  return text
end

--- Several values of an enum field: each pick toggles one, "done" ends.
local function ask_multi(choices, prompt, default, done)
  local picked = {}
  if type(default) == "table" then
    for _, v in ipairs(default) do
      picked[v] = true
    end
  end
  local function step()
    local items = vim.list_extend({ { value = vim.NIL, label = "✓ done" } }, choices)
    require("minime.ui.pick").select(items, {
      prompt = prompt .. "(each pick toggles)",
      kind = "minime.elicitation",
      format_item = function(c)
        if c.value == vim.NIL then
          return c.label
        end
        return (picked[c.value] and "[x] " or "[ ] ") .. c.label
      end,
    }, function(c)
      if c and c.value ~= vim.NIL then
        picked[c.value] = not picked[c.value] or nil
        return step()
      end
      if not c then
        return done(nil)
      end
      local values = {}
      for _, choice in ipairs(choices) do
        if picked[choice.value] then
          values[#values + 1] = choice.value
        end
      end
      done(#values > 0 and values or nil)
    end)
  end
  step()
end

--- One field through vim.ui: `done(value)`, with nil when left empty or dismissed.
function M.ask_field(field, done)
  local kind, choices = M.kind_of(field)
  local prompt = M.label(field) .. (field.required and " (required)" or "") .. ": "
  local default = field.default ~= vim.NIL and field.default or nil
  if kind == "enum" or kind == "boolean" then
    local items = choices
    if kind == "boolean" then
      items = { { value = true, label = "yes" }, { value = false, label = "no" } }
    end
    require("minime.ui.pick").select(items, {
      prompt = prompt,
      kind = "minime.elicitation",
      format_item = function(c)
        return (c.value == default and "● " or "  ") .. c.label
      end,
    }, function(c)
      done(c and c.value)
    end)
  elseif kind == "multi" then
    ask_multi(choices, prompt, default, done)
  else
    require("minime.ui.pick").input({
      prompt = prompt,
      default = default ~= nil and tostring(default) or nil,
    }, function(text)
      if text == nil or text == "" then
        return done(nil)
      end
      local value, why = typed(field, kind, text)
      if value == nil then
        say(why)
        return M.ask_field(field, done)
      end
      done(value)
    end)
  end
end

--- Every field of `q` in turn, `q.filling` meanwhile, then `done(content)`; a required one
--- left empty stops the steps (said; the float stays open). `q.done`: stops too.
---@param q {req: table, done?: boolean, filling?: boolean}
---@param done fun(content: table)
function M.fill_in(q, done)
  if q.filling then
    return
  end
  q.filling = true
  local content = {}
  local fields = q.req.fields or {}
  local function step(i)
    if q.done then
      return
    end
    local field = fields[i]
    if not field then
      q.filling = false
      return done(content)
    end
    M.ask_field(field, function(value)
      if value == nil and field.required then
        q.filling = false
        say(("%s is required: <CR> to answer again, q to decline"):format(M.label(field)))
        return
      end
      content[field.name] = value
      step(i + 1)
    end)
  end
  step(1)
end

return M
