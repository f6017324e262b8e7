--- Where a float that asks something goes: never over the cursor or the line being typed
--- (a centred permission float once hid an insert-mode line from column 44 on). It stays
--- centred when that covers neither; else it moves to the taller side of that line, above or
--- below, and shrinks to fit there.
local api = vim.api

local M = {}

--- Screen rows (0-based, first and last) of the cursor's line in window `win`, the row after
--- it too (an insert-mode cursor after a line's last screen column goes there); nil when the
--- cursor is not on the editor's grid (the command line) or `win` is gone.
---@param win integer?
---@return integer[]? rows {first, last}
function M.cursor_rows(win)
  if not (win and api.nvim_win_is_valid(win)) or api.nvim_get_mode().mode:sub(1, 1) == "c" then
    return nil
  end
  local cursor = api.nvim_win_get_cursor(win)
  local lnum, col = cursor[1], cursor[2]
  local last_col = #(
    api.nvim_buf_get_lines(api.nvim_win_get_buf(win), lnum - 1, lnum, false)[1] or ""
  )
  local first = vim.fn.screenpos(win, lnum, 1).row
  local last = vim.fn.screenpos(win, lnum, math.max(1, math.max(last_col, col))).row
  if first == 0 then
    -- Not drawn where screenpos looks (scrolled sideways, concealed): the window's cursor line.
    local top = vim.fn.win_screenpos(win)[1]
    if top == 0 then
      return nil
    end
    first = top + api.nvim_win_call(win, vim.fn.winline) - 1
  end
  last = math.max(first, last)
  return { first - 1, last } -- 0-based; `last` (1-based) is the 0-based row after the line
end

--- `cfg` (an editor-relative float config, border included in its rows) moved so that its
--- rows miss `rows` ({first, last}, 0-based); unchanged when they already do or rows is nil.
---@param cfg vim.api.keyset.win_config
---@param rows integer[]?
---@return vim.api.keyset.win_config
function M.clear_of(cfg, rows)
  if not rows then
    return cfg
  end
  local edge = (cfg.border == nil or cfg.border == "none" or cfg.border == "") and 0 or 2
  local outer = cfg.height + edge
  local first, last = rows[1], rows[2]
  if cfg.row + outer <= first or cfg.row > last then
    return cfg
  end
  local limit = vim.o.lines - vim.o.cmdheight -- the rows above the command line
  local above, below = first, limit - last - 1
  if below >= above then
    cfg.height = math.max(1, math.min(cfg.height, below - edge))
    cfg.row = last + 1 + math.max(0, math.floor((below - cfg.height - edge) / 2))
  else
    cfg.height = math.max(1, math.min(cfg.height, above - edge))
    cfg.row = math.max(0, math.floor((above - cfg.height - edge) / 2))
  end
  return cfg
end

return M
