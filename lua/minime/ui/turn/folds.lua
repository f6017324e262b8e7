--- The float's folds: 'foldexpr' (a fold per thinking block and per tool with a body, read
--- from the ns_fold regions) and 'foldtext' (a tool's header with its
--- highlights, or the first line of the thinking).
local buffer = require("minime.ui.turn.buffer")
local tools = require("minime.ui.turn.tools")

local api = vim.api
local ns_fold, fold_rows, by_buf = buffer.ns_fold, buffer.fold_rows, buffer.by_buf

local M = {}

-- The rows of a fold mark: first and last (nil when it is no fold: one line, a tool without a
-- body yet).
local function span(m)
  local first, d = m[2], m[4]
  local last = d.end_row or first
  if last > first and (d.end_col or 0) == 0 then
    last = last - 1 -- ends at the start of a line: that line is not in it
  end
  if last > first then
    return first, last
  end
end

--- The fold regions of `buf` as sorted rows {first1, last1, ...}.
---@param buf integer
---@return integer[]
local function regions(buf)
  local rows = {}
  for _, m in ipairs(api.nvim_buf_get_extmarks(buf, ns_fold, 0, -1, { details = true })) do
    local first, last = span(m)
    if first then
      rows[#rows + 1], rows[#rows + 2] = first, last
    end
  end
  fold_rows[buf] = rows
  return rows
end

--- The fold level of row `l` from the marks on that row alone (the marktree finds them).
local function level_at(buf, l)
  local level = "0"
  local marks = api.nvim_buf_get_extmarks(
    buf,
    ns_fold,
    { l, 0 },
    { l, -1 },
    { details = true, overlap = true }
  )
  for _, m in ipairs(marks) do
    local first, last = span(m)
    if first == l then
      return ">1"
    elseif first and first < l and l <= last then
      level = "1"
    end
  end
  return level
end

-- Per buffer, foldexpr calls answered row by row since the regions were last read.
local row_calls = {}

-- Row by row while few lines are asked after an edit (a tool line added: Neovim asks about
-- the lines around it), then from all the regions, read once (a window shown: every line).
-- Reading all the regions after each edit cost O(tools) per edit: 24 ms per batch of 20 tool
-- lines once the conversation held 200 tools.
local ROW_CALLS_BEFORE_READING_ALL = 200

--- 'foldexpr' of the float (runs per line).
---@return string
function M.expr()
  local buf = api.nvim_get_current_buf()
  local rows = fold_rows[buf]
  if not rows then
    local n = (row_calls[buf] or 0) + 1
    if n <= ROW_CALLS_BEFORE_READING_ALL then
      row_calls[buf] = n
      return level_at(buf, vim.v.lnum - 1)
    end
    row_calls[buf] = 0
    rows = regions(buf)
  end
  -- Binary search for the last region starting at or before the line.
  local l = vim.v.lnum - 1
  local lo, hi = 1, #rows / 2
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local first = rows[2 * mid - 1]
    if first == l then
      return ">1"
    elseif first < l then
      if rows[2 * mid] >= l then
        return "1"
      end
      lo = mid + 1
    else
      hi = mid - 1
    end
  end
  return "0"
end

--- The chunks of the closed fold's text.
---@return table
local function chunks_of_fold()
  local buf = api.nvim_get_current_buf()
  local t = by_buf[buf]
  local first, n = vim.v.foldstart, vim.v.foldend - vim.v.foldstart + 1
  local line = api.nvim_buf_get_lines(buf, first - 1, first, false)[1] or ""
  local marks = api.nvim_buf_get_extmarks(buf, ns_fold, { first - 1, 0 }, { first - 1, -1 }, {})
  local region = t and marks[1] and t.regions[marks[1][1]]
  if type(region) == "table" then
    local _, spans = tools.header(region)
    local chunks, pos = {}, 0
    for _, s in ipairs(spans) do
      if s[1] > pos then
        chunks[#chunks + 1] = { line:sub(pos + 1, s[1]), "MiniMeFold" }
      end
      chunks[#chunks + 1] = { line:sub(s[1] + 1, s[2]), s[3] }
      pos = s[2]
    end
    -- The status first (after the gear): a narrow float cuts the end of the line, and the
    -- status is what a closed fold must show.
    local status = table.remove(chunks)
    table.remove(chunks) -- the space before it
    local gear = chunks[1][1]:match("^⚙ ") or ""
    chunks[1][1] = chunks[1][1]:sub(#gear + 1)
    table.insert(chunks, 1, { gear, chunks[1][2] })
    table.insert(chunks, 2, status)
    table.insert(chunks, 3, { " ", "MiniMeFold" })
    chunks[#chunks + 1] = { ("  ▸ %d line%s"):format(n - 1, n == 2 and "" or "s"), "MiniMeFold" }
    return chunks
  end
  return {
    { "▸ thinking ", "MiniMeFold" },
    { require("minime.ui.printable").line(vim.trim(line), 200), "MiniMeThinking" },
    { ("  (%d lines)"):format(n), "MiniMeFold" },
  }
end

--- 'foldtext' of the float: chunks of its fold's first line, each printable (fold text is
--- not a buffer's text: a UI that draws it itself gets it as it is).
---@return string|table
function M.text()
  local line = require("minime.ui.printable").line
  local chunks = chunks_of_fold()
  for _, chunk in ipairs(chunks) do
    chunk[1] = line(chunk[1], math.huge)
  end
  return chunks
end

return M
