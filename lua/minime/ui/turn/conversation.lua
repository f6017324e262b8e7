--- The conversation: one buffer per cwd holds every turn of the session in order. A new turn
--- appends its prompt; reset (and a loaded session) starts an empty buffer. Old turns' tool
--- output is trimmed so that a conversation kept open all day does not grow without bound.
local buffer = require("minime.ui.turn.buffer")
local document = require("minime.ui.turn.document")
local text = require("minime.ui.turn.text")

local api = vim.api
local str, present, split = text.str, text.present, text.split

local M = {}

--- Turns whose tool output stays whole; older ones keep the first TRIM_LINES lines of each
--- tool's output (folded under its header, as before) and a line saying how many went.
M.KEEP = 20
M.TRIM_LINES = 5
--- Past this many lines, the oldest turns leave the float (a line says how many and how to
--- see them: :MiniMeSessions reopens the whole session), keeping at least the last two.
M.MAX_LINES = 20000

---@class minime.turn.Past
---@field mark integer ns_pos extmark on the turn's first prompt line
---@field tools table<string, minime.turn.Tool> the turn's tools (t.tools while it ran)
---@field trimmed? boolean
---@field ask? integer its checkpoint's number among the thread's asks (ui/turn/asks.lua)
---@field stale? boolean a resend left it behind

--- Empty the conversation: a fresh buffer (the old one, with any highlighter, is wiped).
---@param t minime.turn.Turn
function M.reset(t)
  buffer.renew(t)
  t.past, t.dropped = {}, nil
  t.running, t.stop_reason, t.error, t.done = false, nil, nil, nil
  t.quote_next = nil
  t.md_from, t.md_scan, t.md_fence = nil, nil, nil -- its rows went with the old buffer
end

--- Cut one tool's output to its first `keep` lines and a note.
---@param t minime.turn.Turn
---@param tool minime.turn.Tool
---@param keep integer
local function trim_tool(t, tool, keep)
  local cut = tool.output_n - keep
  if cut <= 1 then
    return
  end
  local h = api.nvim_buf_get_extmark_by_id(t.buf, buffer.ns_fold, tool.region, {})[1]
  if not h then
    return
  end
  local ni = tool.input_n
  local first = h + ni + keep -- the last kept line (the header or input when keep is 0)
  local last = h + ni + tool.output_n
  local from = api.nvim_buf_get_lines(t.buf, first, first + 1, false)[1] or ""
  local note = ("    … %d lines of output trimmed (an older turn)"):format(cut)
  local function region(end_row, end_col, grow)
    buffer.set_fold_mark(t, h, 0, {
      id = tool.region,
      end_row = end_row,
      end_col = end_col,
      right_gravity = false,
      end_right_gravity = grow,
    })
  end
  -- The region must cover the new lines when the edit makes foldexpr look at them.
  region(last, tool.output_len, true)
  api.nvim_buf_clear_namespace(t.buf, buffer.ns_hl, first + 1, last + 1)
  buffer.splice(t, first, #from, last, tool.output_len, { "", note })
  tool.output_n, tool.output_len = keep + 1, #note
  region(first + 1, #note, false)
  buffer.hl(t, first + 1, 0, first + 1, #note, "MiniMeToolOutput")
end

--- Trim the turns older than the last KEEP (each once).
---@param t minime.turn.Turn
local function trim_old(t)
  for i = #t.past - M.KEEP, 1, -1 do
    local past = t.past[i]
    if past.trimmed then
      break
    end
    past.trimmed = true
    for _, tool in pairs(past.tools) do
      pcall(trim_tool, t, tool, M.TRIM_LINES)
    end
  end
end

--- Drop the oldest turns while the float holds more than MAX_LINES; one line at the top says
--- how many went.
---@param t minime.turn.Turn
local function drop_old(t)
  local past = t.past
  local n = 0
  while #past > 2 + n and api.nvim_buf_line_count(t.buf) > M.MAX_LINES do
    local next_row = api.nvim_buf_get_extmark_by_id(t.buf, buffer.ns_pos, past[n + 2].mark, {})[1]
    if not next_row or next_row <= 2 then
      break
    end
    n = n + 1
    t.dropped = (t.dropped or 0) + 1
    local note = ("… %d earlier turn%s not shown (:MiniMeSessions reopens the session)"):format(
      t.dropped,
      t.dropped == 1 and "" or "s"
    )
    -- The note and a blank line replace everything above the next kept turn's prompt.
    buffer.splice(t, 0, 0, next_row - 1, 0, { note, "" })
    for _, ns in ipairs({ buffer.ns_fold, buffer.ns_pos }) do
      for _, m in ipairs(api.nvim_buf_get_extmarks(t.buf, ns, { 0, 0 }, { 1, 0 }, {})) do
        api.nvim_buf_del_extmark(t.buf, ns, m[1])
        t.regions[m[1]] = nil
      end
    end
    api.nvim_buf_clear_namespace(t.buf, buffer.ns_hl, 0, 2)
    buffer.hl(t, 0, 0, 0, #note, "MiniMeNotice")
  end
  for _ = 1, n do
    table.remove(past, 1)
  end
end

--- A new turn: its quoted prompt goes at the end of the conversation.
---@param t minime.turn.Turn
function M.begin(t, ev)
  if ev.fresh == true then
    M.reset(t)
  end
  t.past = t.past or {}
  local lines = split((str(ev.prompt):gsub("\r\n", "\n")))
  for i, l in ipairs(lines) do
    lines[i] = l == "" and ">" or "> " .. l
  end
  local empty = t.row == 0 and t.col == 0
  if not empty then
    document.start_block(t, "prompt")
  end
  local row = t.row
  buffer.append(t, table.concat(lines, "\n"))
  buffer.hl(t, row, 0, t.row, t.col, "MiniMePrompt")
  t.block, t.plan, t.tools, t.done = "prompt", nil, {}, nil
  t.thinking, t.quote_next, t.message_id = nil, nil, nil
  t.past[#t.past + 1] = {
    mark = api.nvim_buf_set_extmark(t.buf, buffer.ns_pos, row, 0, { right_gravity = false }),
    tools = t.tools,
  }
  t.cwd = present(ev.cwd) and str(ev.cwd) or t.key
  t.session_id = present(ev.session_id) and str(ev.session_id) or t.session_id
  if present(ev.agent) then
    t.agent = require("minime.ui.printable").line(str(ev.agent), 60)
  end
  t.running, t.stop_reason, t.error = true, nil, nil
  trim_old(t)
  drop_old(t)
end

--- Row (0-based) where the last turn's prompt starts (0 with none).
---@param t minime.turn.Turn
---@return integer
function M.last_start(t)
  local past = t.past and t.past[#t.past]
  local row = past and api.nvim_buf_get_extmark_by_id(t.buf, buffer.ns_pos, past.mark, {})[1]
  return row or 0
end

--- Rows (0-based) where each turn's prompt starts, oldest first.
---@param t minime.turn.Turn
---@return integer[]
function M.starts(t)
  local rows = {}
  for _, past in ipairs(t.past or {}) do
    rows[#rows + 1] = api.nvim_buf_get_extmark_by_id(t.buf, buffer.ns_pos, past.mark, {})[1]
  end
  return rows
end

return M
