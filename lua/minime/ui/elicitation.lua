--- Questions from the agent (ACP `elicitation/create`, form mode): one float at a time, the
--- others wait. The float follows the permission prompts' focus rules
--- (minime.ui.permission_focus decides: it never takes keys meant for the code; keys typed in
--- its first moments do nothing) and :MiniMePermission reaches it.
---
--- `open(req, on_answer)` with req = {id, cwd, session_id, message, fields = {{name, required,
--- type, title?, description?, default?, enum?, oneOf?, items?, minimum?, maximum?}, ...}}.
--- A form whose only required-or-choice field is one enum (Claude's AskUserQuestion: the
--- question, and an optional "Other" text) is answered by one key, the number of the choice;
--- `o` types the other answer instead. Any other form is filled in with `<CR>`: one
--- vim.ui.select / vim.ui.input step per field, required ones enforced. `q`/`<Esc>` decline.
--- `on_answer(action, content)` is called exactly once ("accept" | "decline"), never after
--- `close(id)` (the host withdrew the question: the turn was cancelled).
local focus = require("minime.ui.permission_focus")
local window = require("minime.ui.window")

local api = vim.api

local M = {}

---@class minime.elicitation.Question
---@field req table
---@field on_answer fun(action: string, content?: table)
---@field choices? {value: any, label: string, description?: string}[] the one-key choices
---@field pick? table the enum field the choices answer
---@field other? table an optional text field that answers instead (`o`)
---@field live_at? number
---@field delay_timer? uv.uv_timer_t
---@field buf? integer
---@field win? integer
---@field prev_win? integer
---@field done? boolean
---@field filling? boolean a vim.ui step is open

---@type minime.elicitation.Question[]
local waiting = {}
---@type minime.elicitation.Question?
local shown

local function str(v)
  return type(v) == "string" and v or (v == nil or v == vim.NIL) and "" or tostring(v)
end

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

--- "enum" | "multi" | "boolean" | "number" | "integer" | "string"
local function kind_of(field)
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

--- The one-key shape: exactly one enum field, and every other field optional text.
local function one_key(req)
  local pick, other
  for _, field in ipairs(req.fields or {}) do
    local kind, choices = kind_of(field)
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

local function label(field)
  local title = str(field.title)
  return title ~= "" and title or str(field.name)
end

local function lines_of(q)
  local lines = {}
  for _, line in ipairs(vim.split(str(q.req.message), "\n", { plain = true })) do
    lines[#lines + 1] = line
  end
  lines[#lines + 1] = ""
  if q.choices then
    for i, c in ipairs(q.choices) do
      local line = ("  %d  %s"):format(i, window.oneline(c.label))
      if c.description and c.description ~= "" then
        line = line .. " — " .. window.oneline(c.description)
      end
      lines[#lines + 1] = line
    end
    if q.other then
      lines[#lines + 1] = "  o  " .. window.oneline(label(q.other)) .. ": type an answer"
    end
  else
    for _, field in ipairs(q.req.fields or {}) do
      local kind = kind_of(field)
      local line = ("  %s%s (%s)"):format(label(field), field.required and "*" or "", kind)
      if str(field.description) ~= "" then
        line = line .. " — " .. window.oneline(field.description)
      end
      if field.default ~= nil and field.default ~= vim.NIL then
        line = line .. (" [%s]"):format(window.oneline(vim.inspect(field.default)))
      end
      lines[#lines + 1] = line
    end
    lines[#lines + 1] = ""
    lines[#lines + 1] = "  <CR> answer, one field at a time (* required)"
  end
  lines[#lines + 1] = "  q  decline"
  return lines
end

local function win_config(q, lines)
  local widest = 40
  for _, l in ipairs(lines) do
    widest = math.max(widest, api.nvim_strwidth(l) + 1)
  end
  local footer = q.choices and (" 1-%d choose · q decline "):format(#q.choices)
    or " <CR> answer · q decline "
  local title = " minime · the agent asks " .. (#waiting > 0 and ("(+%d) "):format(#waiting) or "")
  local cfg = window.centered({
    width = math.min(widest, math.floor((window.area()) * 0.8)),
    height = 0.6,
    border = "rounded",
    zindex = 60,
    title = title,
    footer = footer,
  }, #lines)
  if not focus.live(q) then
    cfg.footer = { { footer, "Comment" } } -- dimmed: its keys do not work yet
  end
  return cfg
end

local show_next

local function teardown(q)
  if q.delay_timer then
    q.delay_timer:stop()
    q.delay_timer:close()
    q.delay_timer = nil
  end
  local was_current = q.win and api.nvim_get_current_win() == q.win
  window.close(q.win)
  if was_current and q.prev_win and api.nvim_win_is_valid(q.prev_win) then
    pcall(api.nvim_set_current_win, q.prev_win)
  end
  return was_current
end

local function finish(q, action, content)
  if q.done then
    return
  end
  q.done = true
  if shown == q then
    shown = nil
  end
  local answering = teardown(q)
  local ok, err = pcall(q.on_answer, action, content)
  if not ok then
    vim.notify("minime: the answer could not be sent: " .. tostring(err), vim.log.levels.ERROR)
  end
  show_next(answering)
end

--- A value typed for a field, converted to its type; nil and a reason when it is not one.
local function typed(field, kind, text)
  if kind == "number" or kind == "integer" then
    local n = tonumber(text)
    if not n or (kind == "integer" and n ~= math.floor(n)) then
      local what = kind == "integer" and "a whole number" or "a number"
      return nil, ("%s must be %s"):format(label(field), what)
    end
    if tonumber(field.minimum) and n < tonumber(field.minimum) then
      return nil, ("%s must be at least %s"):format(label(field), field.minimum)
    end
    if tonumber(field.maximum) and n > tonumber(field.maximum) then
      return nil, ("%s must be at most %s"):format(label(field), field.maximum)
    end
    return n
  end
  return text
end

--- One field through vim.ui: `done(value)`, with nil when left empty or dismissed.
local function ask_field(field, done)
  local kind, choices = kind_of(field)
  local prompt = label(field) .. (field.required and " (required)" or "") .. ": "
  local default = field.default ~= vim.NIL and field.default or nil
  if kind == "enum" or kind == "boolean" then
    local items = choices
    if kind == "boolean" then
      items = { { value = true, label = "yes" }, { value = false, label = "no" } }
    end
    vim.ui.select(items, {
      prompt = prompt,
      kind = "minime.elicitation",
      format_item = function(c)
        return (c.value == default and "● " or "  ") .. c.label
      end,
    }, function(c)
      done(c and c.value)
    end)
  elseif kind == "multi" then
    local picked = {}
    if type(default) == "table" then
      for _, v in ipairs(default) do
        picked[v] = true
      end
    end
    local function step()
      local items = vim.list_extend({ { value = vim.NIL, label = "✓ done" } }, choices)
      vim.ui.select(items, {
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
  else
    vim.ui.input({
      prompt = prompt,
      default = default ~= nil and tostring(default) or nil,
    }, function(text)
      if text == nil or text == "" then
        return done(nil)
      end
      local value, why = typed(field, kind, text)
      if value == nil then
        vim.notify("minime: " .. why, vim.log.levels.WARN)
        return ask_field(field, done)
      end
      done(value)
    end)
  end
end

--- Every field in turn; a required one left empty stops the steps (the float stays open).
local function fill_in(q)
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
      return finish(q, "accept", content)
    end
    ask_field(field, function(value)
      if value == nil and field.required then
        q.filling = false
        vim.notify(
          ("minime: %s is required: <CR> to answer again, q to decline"):format(label(field)),
          vim.log.levels.WARN
        )
        return
      end
      content[field.name] = value
      step(i + 1)
    end)
  end
  step(1)
end

local function map_keys(q, first)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, function()
      if focus.live(q) and not q.filling then
        fn()
      end
    end, { buffer = q.buf, nowait = true, desc = "minime: " .. desc })
  end
  if q.choices then
    for i, c in ipairs(q.choices) do
      map(tostring(i), function()
        finish(q, "accept", { [q.pick.name] = c.value })
      end, "answer " .. window.oneline(c.label))
    end
    if q.other then
      map("o", function()
        q.filling = true
        ask_field(q.other, function(text)
          q.filling = false
          if text ~= nil then
            finish(q, "accept", { [q.other.name] = text })
          end
        end)
      end, "type another answer")
    end
    map("<CR>", function()
      local c = q.choices[api.nvim_win_get_cursor(0)[1] - first]
      if c then
        finish(q, "accept", { [q.pick.name] = c.value })
      end
    end, "answer the choice under the cursor")
  else
    map("<CR>", function()
      fill_in(q)
    end, "answer the form")
  end
  for _, lhs in ipairs({ "q", "<Esc>" }) do
    map(lhs, function()
      finish(q, "decline")
    end, "decline")
  end
end

local function show(q, answering)
  q.pick, q.other = one_key(q.req)
  q.choices = q.pick and select(2, kind_of(q.pick)) or nil
  q.buf = window.scratch("elicitation")
  local lines = lines_of(q)
  api.nvim_buf_set_lines(q.buf, 0, -1, false, lines)
  vim.bo[q.buf].modifiable = false
  local first = #vim.split(str(q.req.message), "\n", { plain = true }) + 1
  map_keys(q, first)
  q.prev_win = api.nvim_get_current_win()
  local enter = focus.may_enter(answering)
  if enter then
    focus.start_delay(q, function()
      if not q.done and q.win and api.nvim_win_is_valid(q.win) then
        api.nvim_win_set_config(q.win, win_config(q, lines))
      end
    end)
  end
  q.win = api.nvim_open_win(q.buf, enter, win_config(q, lines))
  pcall(api.nvim_win_set_cursor, q.win, { math.min(first + 1, #lines), 0 })
  if not enter then
    vim.notify(
      ("minime: the agent asks: %s — :MiniMePermission to answer"):format(
        window.oneline(vim.fn.strcharpart(str(q.req.message), 0, 120))
      ),
      vim.log.levels.WARN
    )
  end
  api.nvim_create_autocmd("WinClosed", {
    pattern = tostring(q.win),
    once = true,
    callback = function()
      vim.schedule(function()
        finish(q, "decline") -- closed some other way (:q): declined
      end)
    end,
  })
end

show_next = function(answering)
  while not shown and #waiting > 0 do
    local q = table.remove(waiting, 1)
    shown = q
    local ok, err = pcall(show, q, answering)
    if not ok then
      -- A question that cannot be shown must still be answered, or the agent waits forever.
      vim.notify("minime: a question could not be shown (declined): " .. tostring(err))
      finish(q, "decline")
    end
  end
end

--- Ask the user; `on_answer(action, content)` is called exactly once (unless `close(req.id)`).
---@param req table see the module header
---@param on_answer fun(action: string, content?: table)
function M.open(req, on_answer)
  waiting[#waiting + 1] = { req = req, on_answer = on_answer }
  show_next()
end

--- Drop a question the host withdrew (the turn was cancelled): its float closes, or it leaves
--- the queue; on_answer is not called. Returns whether it was pending.
---@return boolean
function M.close(id)
  if shown and shown.req.id == id then
    shown.done = true
    local q = shown
    shown = nil
    teardown(q)
    show_next()
    return true
  end
  for i, q in ipairs(waiting) do
    if q.req.id == id then
      table.remove(waiting, i)
      return true
    end
  end
  return false
end

--- The float of the shown question, if any.
---@return integer?
function M.win()
  return shown and shown.win
end

--- Whether the shown question's keys work (false during its key delay, or with none shown).
---@return boolean
function M.live()
  return shown ~= nil and focus.live(shown)
end

--- Whether a question of a turn in `cwd` waits for an answer.
---@return boolean
function M.waiting(cwd)
  if shown and shown.req.cwd == cwd then
    return true
  end
  for _, q in ipairs(waiting) do
    if q.req.cwd == cwd then
      return true
    end
  end
  return false
end

--- Enter the shown question's float (:MiniMePermission), as permission_focus enters a
--- prompt's. Returns whether there was one.
---@return boolean
function M.enter()
  return focus.enter(shown)
end

return M
