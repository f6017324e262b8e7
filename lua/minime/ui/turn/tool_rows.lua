--- Where a tool's lines are: its header row, found by its ns_fold mark, and before each edit
--- checked against what the turn drew there. Only apply() edits the conversation (it is
--- 'nomodifiable' and Insert mode is kept out of it: minime.ui.turn.buffer), but a user may
--- `:setlocal modifiable` and edit it: a tool whose header or body is no longer where its mark
--- says starts over on a fresh line at the end — a resync (minime.ui.turn.resyncs) — rather
--- than an edit of the wrong lines failing or overwriting the user's text.
local buffer = require("minime.ui.turn.buffer")
local document = require("minime.ui.turn.document")

local api = vim.api

local M = {}

--- The row of a tool's header line (nil if its mark is gone).
---@param t minime.turn.Turn
---@param tool minime.turn.Tool
---@return integer?
function M.header(t, tool)
  return api.nvim_buf_get_extmark_by_id(t.buf, buffer.ns_fold, tool.region, {})[1]
end

--- A fresh line at the end for a tool's header, and its mark there; returns its row.
---@param t minime.turn.Turn
---@param tool minime.turn.Tool
---@return integer
function M.place(t, tool)
  document.start_block(t, "tool")
  local h = t.row
  tool.region = buffer.set_fold_mark(t, h, 0, { right_gravity = false })
  t.regions[tool.region] = tool
  return h
end

--- Whether the body's last lines still end where the turn drew them: the input's last line
--- `input_len` bytes long, the output's `output_len` (an edit from outside, e.g. the indent
--- Insert mode's end removes from the line under the cursor, leaves the rows but not the
--- lengths, and the next edit of the body would start past a line's end).
local function body_intact(t, tool, h)
  for _, last in ipairs({
    { tool.input_n, tool.input_n, tool.input_len },
    { tool.output_n, tool.input_n + tool.output_n, tool.output_len },
  }) do
    if last[1] > 0 then
      local line = api.nvim_buf_get_lines(t.buf, h + last[2], h + last[2] + 1, false)[1]
      if not line or #line ~= last[3] then
        return false
      end
    end
  end
  return true
end

--- The header row of a tool about to be edited, whose body takes `rows` lines: where its mark
--- is when that line is the header drawn and the body ends where it did; else (the buffer was
--- edited behind the turn) a fresh place at the end, the tool's lines there still to draw.
---@param t minime.turn.Turn
---@param tool minime.turn.Tool
---@param rows integer
---@return integer
function M.checked(t, tool, rows)
  local m = api.nvim_buf_get_extmark_by_id(t.buf, buffer.ns_fold, tool.region, { details = true })
  local h = m[1]
  if h then
    local line = api.nvim_buf_get_lines(t.buf, h, h + 1, false)[1]
    local drawn = line == (tool.line or "") and (rows == 0 or m[3].end_row == h + rows)
    if drawn and body_intact(t, tool, h) then
      return h
    end
  end
  local resyncs = require("minime.ui.turn").resyncs
  resyncs[#resyncs + 1] = ("tool %q: its lines at row %s were edited, drawn again at the end"):format(
    tool.title,
    tostring(h)
  )
  pcall(api.nvim_buf_del_extmark, t.buf, buffer.ns_fold, tool.region)
  t.regions[tool.region] = nil
  tool.line, tool.hlen, tool.input_n, tool.input_len, tool.output_n, tool.output_len =
    nil, 0, 0, 0, 0, 0
  return M.place(t, tool)
end

return M
