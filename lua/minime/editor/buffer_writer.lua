--- Writing the agent's text through a loaded buffer: only the changed hunks are replaced, so
--- what the user set up on the lines around them stays where it was — manual folds (and
--- whether they are closed), marks, extmarks, the cursor on its text — and the change is one
--- undo step (every hunk is set in one go, without returning to the main loop). Then the buffer
--- is saved with exactly that text (see save_as_given), which clears 'modified'.
---
---   buffer_writer.write(buf, content)  -- throws { message } when the save fails
local api = vim.api

local M = {}

-- Above this many bytes (old + new) the hunks are not computed (vim.diff would hold the editor
-- for tens of milliseconds): the whole buffer is replaced, folds there may be lost.
M.MAX_DIFF_BYTES = 1024 * 1024

--- Save `buf` with exactly its text: BufWritePre/FileWritePre hooks (format on save, strip
--- trailing blanks) do not run and 'fixeol' adds no newline the agent did not write, so the
--- file holds what the agent asked for (its next read and its own diff agree with the disk).
--- BufWritePost still runs (the language server's didSave, git signs).
local function save_as_given(buf)
  local ignore, fixeol = vim.o.eventignore, vim.bo[buf].fixeol
  vim.o.eventignore = (ignore == "" and "" or ignore .. ",") .. "BufWritePre,FileWritePre"
  vim.bo[buf].fixeol = false
  local ok, err = pcall(api.nvim_buf_call, buf, function()
    vim.cmd("silent keepalt lockmarks write!")
  end)
  vim.o.eventignore = ignore
  vim.bo[buf].fixeol = fixeol
  if not ok then
    error(err, 0)
  end
end

--- `content` as buffer lines, and whether it ends with a newline.
---@return string[] lines, boolean eol
local function to_lines(content)
  local lines = vim.split(content, "\n", { plain = true })
  local eol = #lines > 1 and lines[#lines] == ""
  if eol then
    lines[#lines] = nil
  end
  return lines, eol
end

--- The hunks turning `old` into `new` (vim.diff indices: start_a, count_a, start_b, count_b),
--- or nil when the texts are too large to compare here.
local function hunks(old, new)
  local a = table.concat(old, "\n") .. "\n"
  local b = table.concat(new, "\n") .. "\n"
  if #a + #b > M.MAX_DIFF_BYTES then
    return nil
  end
  local diff = vim.text and vim.text.diff or vim.diff
  local ok, result = pcall(diff, a, b, { result_type = "indices" })
  return ok and result or nil
end

--- Where a cursor on row `row` of the old text goes: past a hunk it moves with its line; inside
--- one it keeps its offset in it, within the hunk's new lines.
local function moved_row(row, list)
  local delta = 0
  for _, h in ipairs(list) do
    local sa, ca, sb, cb = h[1], h[2], h[3], h[4]
    local first = ca > 0 and sa or sa + 1 -- an insertion goes after line sa
    if row < first then
      break
    elseif row >= first + ca then
      delta = delta + cb - ca
    else
      local start = cb > 0 and sb or sb + 1
      return math.max(1, start + math.min(row - first, math.max(cb - 1, 0)))
    end
  end
  return row + delta
end

--- Replace the text of `buf` with `content`, changing only the lines that differ, and save it.
---@param buf integer
---@param content string
function M.write(buf, content)
  local new, eol = to_lines(content)
  local old = api.nvim_buf_get_lines(buf, 0, -1, false)
  local list = hunks(old, new)
  local cursors = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    cursors[win] = api.nvim_win_get_cursor(win)
  end
  if list then
    for i = #list, 1, -1 do -- bottom up: the rows of the hunks above stay valid
      local sa, ca, sb, cb = unpack(list[i])
      local first = ca > 0 and sa - 1 or sa
      api.nvim_buf_set_lines(buf, first, first + ca, false, vim.list_slice(new, sb, sb + cb - 1))
    end
  else
    api.nvim_buf_set_lines(buf, 0, -1, false, new)
  end
  if vim.bo[buf].eol ~= eol then
    vim.bo[buf].eol = eol
  end
  local count = api.nvim_buf_line_count(buf)
  for win, cursor in pairs(cursors) do
    local row = math.min(list and moved_row(cursor[1], list) or cursor[1], count)
    local width = #(api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or "")
    pcall(api.nvim_win_set_cursor, win, { row, math.min(cursor[2], width) })
  end
  local ok, err = pcall(save_as_given, buf)
  if not ok then
    error({ message = "the buffer was changed but could not be written: " .. tostring(err) }, 0)
  end
end

return M
