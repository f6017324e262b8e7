--- The errors and warnings a turn caused, under it (the host's `diagnostics` event, from
--- minime.feedback.diagnostics): per file "⚠ 2 new errors in src/parser.py" and its lines,
--- each opened with <CR> in a code window; `f` on any of them sends them (:MiniMeFix).
local buffer = require("minime.ui.turn.buffer")
local document = require("minime.ui.turn.document")
local printable = require("minime.ui.printable")
local text = require("minime.ui.turn.text")

local api = vim.api
local str = text.str

local M = {}

---@class minime.turn.DiagnosticsBlock
---@field mark integer ns_pos extmark on its header line
---@field n integer its lines
---@field path string the file, absolute
---@field lines integer[] the file's line of each item (1-based), in the block's order

--- "2 new errors", "1 new error, 3 new warnings".
local function counted(errors, warnings)
  local parts = {}
  if errors > 0 then
    parts[#parts + 1] = ("%d new error%s"):format(errors, errors == 1 and "" or "s")
  end
  if warnings > 0 then
    parts[#parts + 1] = ("%d new warning%s"):format(warnings, warnings == 1 and "" or "s")
  end
  return table.concat(parts, ", ")
end

--- The blocks of `t`'s buffer now (a reset starts a new buffer, and a new list).
---@param t minime.turn.Turn
---@return minime.turn.DiagnosticsBlock[]
local function blocks(t)
  if not t.diagnostics or t.diagnostics.buf ~= t.buf then
    t.diagnostics = { buf = t.buf, list = {} }
  end
  return t.diagnostics.list
end

--- The `diagnostics` event: one block per file.
---@param t minime.turn.Turn
function M.show(t, ev)
  for _, file in ipairs(type(ev.files) == "table" and ev.files or {}) do
    local path = str(file.path)
    local lines, rows, errors, warnings = { "" }, {}, 0, 0
    for _, item in ipairs(type(file.items) == "table" and file.items or {}) do
      local severity = str(item.severity)
      if severity == "error" then
        errors = errors + 1
      else
        warnings = warnings + 1
      end
      local line, col = tonumber(item.line) or 1, tonumber(item.col) or 1
      lines[#lines + 1] = ("  %d:%d %s: %s"):format(
        line,
        col,
        severity,
        printable.line(str(item.message), 300)
      )
      rows[#rows + 1] = line
    end
    if #rows > 0 then
      lines[1] = ("⚠ %s in %s"):format(counted(errors, warnings), printable.line(path, 200))
      local row = document.add_lines(t, "diagnostics", lines)
      local group = errors > 0 and "DiagnosticError" or "DiagnosticWarn"
      buffer.hl(t, row, 0, row, #lines[1], group)
      buffer.hl(t, row + 1, 0, row + #lines - 1, #lines[#lines], "MiniMeNotice")
      local list = blocks(t)
      list[#list + 1] = {
        mark = api.nvim_buf_set_extmark(t.buf, buffer.ns_pos, row, 0, { right_gravity = false }),
        n = #lines,
        path = path:sub(1, 1) == "/" and path or (t.cwd .. "/" .. path),
        lines = rows,
      }
    end
  end
end

--- The block at `row` (1-based) of the conversation `buf`, and the file line that row names.
---@param buf integer
---@param row integer
---@return minime.turn.DiagnosticsBlock?, integer?
function M.at(buf, row)
  local t = buffer.by_buf[buf]
  if not t then
    return nil
  end
  for _, block in ipairs(blocks(t)) do
    local mark = api.nvim_buf_get_extmark_by_id(buf, buffer.ns_pos, block.mark, {})
    local first = mark[1] and mark[1] + 1
    if first and row >= first and row < first + block.n then
      return block, block.lines[math.max(row - first, 1)]
    end
  end
  return nil
end

--- <CR> on a line of a block: its file at that line, in a code window.
---@param buf integer
---@param row integer
---@return boolean
function M.jump(buf, row)
  local block, line = M.at(buf, row)
  return block ~= nil and require("minime.ui.follow").jump(block.path, line or 1)
end

return M
