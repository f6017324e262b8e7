--- A reviewed file's hunks in its buffer: each one an extmark over the agent's lines (DiffAdd)
--- with the baseline's lines above it as virtual lines (DiffDelete), like mini.diff's overlay.
---
--- Inline rather than diff mode against a scratch buffer: the user's window, layout and 'diff'
--- windows are left as they are, the hunks follow the user's edits (extmarks move with the
--- text), and only the agent's hunks are drawn, never the whole file's differences.
local api = vim.api

local M = {}

M.ns = api.nvim_create_namespace("minime_review")

---@class minime.review.Hunk
---@field path string
---@field buf integer
---@field mark? integer extmark id in M.ns (none for a whole file)
---@field base string[] the baseline's lines the hunk replaced
---@field base_start integer where they start in the baseline (0-based)
---@field agent string[] the lines the review found in their place
---@field kind? "created"|"deleted" a whole file the agent made or removed (no mark; review/files.lua)

--- The rows the hunk covers now: first (0-based) and count (0 for lines only removed).
---@param h minime.review.Hunk
---@return integer? row, integer count
function M.range(h)
  if h.kind then
    return 0, 0
  end
  local m = api.nvim_buf_get_extmark_by_id(h.buf, M.ns, h.mark, { details = true })
  if not m or not m[1] then
    return nil, 0
  end
  local d = m[3] or {}
  if #h.agent == 0 then
    -- A point: removed lines go back before its row, or after the last line (virt_lines below).
    return d.virt_lines_above == false and m[1] + 1 or m[1], 0
  end
  return m[1], math.max((d.end_row or m[1]) - m[1] + 1, 1)
end

local function virt(lines)
  return vim.tbl_map(function(line)
    return { { line == "" and " " or line, "DiffDelete" } }
  end, lines)
end

--- Draw a hunk: `row` (0-based) its first line in the buffer now, `n` its lines there.
---@return integer mark
function M.draw(buf, row, n, base)
  local count = api.nvim_buf_line_count(buf)
  local opts = { virt_lines = #base > 0 and virt(base) or nil, virt_lines_above = true }
  if n == 0 then
    if row >= count then -- removed at the end: below the last line
      row, opts.virt_lines_above = count - 1, false
    end
    opts.sign_text, opts.sign_hl_group = "-", "DiffDelete"
    return api.nvim_buf_set_extmark(buf, M.ns, math.max(row, 0), 0, opts)
  end
  local last = row + n - 1
  opts.end_row = last
  opts.end_col = #(api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or "")
  -- Both ends stay on the hunk's own text: a line replaced inside it (`cc`) or added before
  -- its first line (`O`) counts as inside, so the change is seen and never reverted blindly.
  opts.right_gravity, opts.end_right_gravity = false, false
  opts.line_hl_group = "DiffAdd"
  opts.sign_text, opts.sign_hl_group = "+", "DiffAdd"
  return api.nvim_buf_set_extmark(buf, M.ns, row, 0, opts)
end

--- The hunks between `base` and the buffer's lines now, drawn.
---@param path string
---@param buf integer
---@param base string[]
---@return minime.review.Hunk[]
function M.place(path, buf, base)
  local now = api.nvim_buf_get_lines(buf, 0, -1, false)
  local found = {}
  local a, b = table.concat(base, "\n") .. "\n", table.concat(now, "\n") .. "\n"
  for _, d in
    ipairs(vim.diff(a, b, { result_type = "indices" }) --[[@as integer[][] ]])
  do
    local sa, ca, sb, cb = d[1], d[2], d[3], d[4]
    local row = cb == 0 and sb or sb - 1
    local base_start = ca == 0 and sa or sa - 1
    found[#found + 1] = {
      path = path,
      buf = buf,
      mark = M.draw(buf, row, cb, vim.list_slice(base, base_start + 1, base_start + ca)),
      base = vim.list_slice(base, base_start + 1, base_start + ca),
      base_start = base_start,
      agent = vim.list_slice(now, row + 1, row + cb),
    }
  end
  return found
end

--- The hunk's lines as they are now, or nil (its mark is gone).
---@param h minime.review.Hunk
---@return string[]?
function M.lines_now(h)
  local row, n = M.range(h)
  if not row or not api.nvim_buf_is_loaded(h.buf) then
    return nil
  end
  return api.nvim_buf_get_lines(h.buf, row, row + n, false)
end

--- Whether the user changed the hunk since the review found it.
---@param h minime.review.Hunk
function M.changed(h)
  if h.kind then
    return require("minime.review.files").changed(h)
  end
  local now = M.lines_now(h)
  return now == nil or not vim.deep_equal(now, h.agent)
end

--- Put the baseline's lines back in the buffer, as one undo step.
---@param h minime.review.Hunk
function M.restore(h)
  local row, n = M.range(h)
  api.nvim_buf_call(h.buf, function()
    vim.bo.undolevels = vim.bo.undolevels -- a new undo step starts here
  end)
  api.nvim_buf_set_lines(h.buf, row, row + n, false, h.base)
end

---@param h minime.review.Hunk
function M.undraw(h)
  if not h.mark then
    return
  end
  pcall(api.nvim_buf_del_extmark, h.buf, M.ns, h.mark)
end

--- The hunk of `list` at `line` (1-based) of `buf`.
---@param list minime.review.Hunk[]
---@return minime.review.Hunk?
function M.at(list, buf, line)
  local name = api.nvim_buf_get_name(buf)
  local real = name ~= "" and require("minime.editor.paths").realpath(name) or nil
  for _, h in ipairs(list) do
    -- A whole file by its name too: one no longer resolvable (a link put where it was) is
    -- still the entry's, and its reject says why it is refused.
    if h.kind and (h.path == real or h.path == name) then
      return h
    elseif not h.kind and h.buf == buf then
      local row, n = M.range(h)
      if row and line - 1 >= row and line - 1 < row + math.max(n, 1) then
        return h
      end
    end
  end
  return nil
end

return M
