--- Questions from the agent (ACP `elicitation/create`, form mode): one float at a time, the
--- others wait. The float's life is minime.ui.ask's, the permission prompts' own: it follows
--- their focus rules (minime.ui.permission_focus decides: it never takes keys meant for the
--- code; keys typed in its first moments do nothing), shows again in the tab page entered, and
--- :MiniMePermission reaches it. This module is what a question shows and what its keys answer.
---
--- `open(req, on_answer)` with req = {id, cwd, session_id, message, fields = {{name, required,
--- type, title?, description?, default?, enum?, oneOf?, items?, minimum?, maximum?}, ...}}.
--- A form whose only required-or-choice field is one enum (Claude's AskUserQuestion: the
--- question, and an optional "Other" text) is answered by one key, the number of the choice;
--- `o` types the other answer instead. Any other form is filled in with `<CR>`: one
--- vim.ui.select / vim.ui.input step per field, required ones enforced (elicitation_form.lua).
--- `q`/`<Esc>` decline. `on_answer(action, content)` is called exactly once ("accept" |
--- "decline"), never after `close(id)` (the host withdrew the question: the turn was cancelled).
local ask = require("minime.ui.ask")
local form = require("minime.ui.elicitation_form")
local keys = require("minime.ui.ask.keys")
local window = require("minime.ui.window")

local api = vim.api
local str, label = form.str, form.label

local M = {}

---@class minime.elicitation.Question: minime.ask.Ask
---@field on_answer fun(action: string, content?: table)
---@field choices? {value: any, label: string, description?: string}[] the one-key choices
---@field pick? table the enum field the choices answer
---@field other? table an optional text field that answers instead (`o`)

local function message_lines(q)
  return vim.split(str(q.req.message), "\n", { plain = true })
end

--- The question, then its choices (one key each) or its fields (filled in with <CR>).
---@param q minime.elicitation.Question
---@return string[]
local function lines_of(q)
  local lines = message_lines(q)
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
      local kind = form.kind_of(field)
      local line = ("  %s%s (%s)"):format(
        window.oneline(label(field)),
        field.required and "*" or "",
        kind
      )
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

local function win_config(q, lines, state)
  local widest = 40
  for _, l in ipairs(lines) do
    widest = math.max(widest, api.nvim_strwidth(l) + 1)
  end
  local footer = q.choices and (" 1-%d choose · q decline "):format(#q.choices)
    or " <CR> answer · q decline "
  return window.centered({
    width = math.min(widest, math.floor((window.area()) * 0.8)),
    height = 0.6,
    border = "rounded",
    zindex = 60,
    title = " minime · the agent asks " .. state.suffix,
    footer = footer,
  }, #lines)
end

local questions

--- Keys of the float besides q/<Esc>: the choices' numbers, <CR> and `o`; or <CR> the form.
---@param q minime.elicitation.Question
---@param first integer the row before the first choice
local function map_keys(q, first)
  if not q.choices then
    keys.map(q, "<CR>", function()
      form.fill_in(q, function(content)
        questions:answer(q, "accept", content)
      end)
    end, "answer the form")
    return
  end
  keys.picks(q, {
    first = first,
    items = q.choices,
    noun = "choice",
    label = function(c)
      return c.label
    end,
    pick = function(c)
      questions:answer(q, "accept", { [q.pick.name] = c.value })
    end,
  })
  if q.other then
    keys.map(q, "o", function()
      q.filling = true
      form.ask_field(q.other, function(text)
        q.filling = false
        if text ~= nil then
          questions:answer(q, "accept", { [q.other.name] = text })
        end
      end)
    end, "type another answer")
  end
end

questions = ask.new({
  kind = "elicitation",
  words = {
    noun = "question",
    waiting = "waiting for your answer",
    asked = "the agent asks",
    refuse = "decline",
    refused = "declined",
    answer_failed = "the answer could not be sent",
  },
  render = function(q)
    q.pick, q.other = form.one_key(q.req)
    q.choices = q.pick and select(2, form.kind_of(q.pick)) or nil
    return lines_of(q), nil, #message_lines(q) + 1
  end,
  win_config = win_config,
  keys = map_keys,
  refusal = function()
    return "decline"
  end,
  title = function(q)
    return str(q.req.message)
  end,
  cursor = function(win, lines, first)
    pcall(api.nvim_win_set_cursor, win, { math.min(first + 1, #lines), 0 })
  end,
})

-- open(req, on_answer), close(id), pending(), waiting(key), win(), live(), focus(), errors:
-- every asking float's (minime.ui.ask.askers.surface). on_answer(action, content) is called
-- exactly once, unless close(req.id) (the host withdrew the question).
require("minime.ui.ask.askers").surface(questions, M)

--- Enter the shown question's float (:MiniMePermission). Returns whether there was one.
M.enter = M.focus

return M
