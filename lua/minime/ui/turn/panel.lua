--- The conversation as a real window (`window.layout = "split"`): a vertical split at the
--- editor's right, beside the code instead of over it. Each tab page may show it in a window
--- of its own (the same buffer); leaving a tab page leaves its panel there, a normal window.
--- Its title is the window's 'winbar', its keys its 'statusline' (minime.ui.turn.float words
--- both). Closing it never touches the conversation: the buffer is 'bufhidden' hide.
local config = require("minime.config")
local window = require("minime.ui.window")

local api = vim.api

local M = {}

-- What a code window's options would add to the panel and is noise there.
local panel_options = {
  number = false,
  relativenumber = false,
  signcolumn = "no",
  foldcolumn = "0",
  statuscolumn = "",
  colorcolumn = "",
  cursorline = false,
  spell = false,
  list = false,
  winfixwidth = true,
}

-- The width the user gave the panel (a resize of its window), kept for its next opening
-- while `window.width` is the one it overrode.
---@type {width: integer, over: number?}?
M.chosen = nil
-- Per panel window: the width it was opened at, and the code columns' widths before it came.
---@type table<integer, {width: integer, columns: {win: integer, width: integer}[]}>
local opened = {}

--- The panel's width in columns now: the one the user gave it, else `window.width` of the
--- editor (nil: 0.4); at least 20, and room left for the code.
---@return integer
function M.width()
  local option = config.options.window.width
  local chosen = M.chosen and M.chosen.over == option and M.chosen.width or nil
  local wanted = chosen or window.size(option or 0.4, vim.o.columns, 20)
  return math.max(math.min(wanted, vim.o.columns - 21), math.min(20, vim.o.columns))
end

--- The top-level columns of the current tab page's layout (a window of each) and their
--- widths: what the panel takes its room from, and gives it back to.
---@return {win: integer, width: integer}[]
local function columns()
  local layout = vim.fn.winlayout()
  local out = {}
  if layout[1] ~= "row" then
    return out
  end
  for _, child in ipairs(layout[2]) do
    local node = child
    while node[1] ~= "leaf" do
      node = node[2][1]
    end
    local win = node[2]
    if api.nvim_win_get_config(win).relative == "" then
      out[#out + 1] = { win = win, width = api.nvim_win_get_width(win) }
    end
  end
  return out
end

--- Give `cols` the widths `want` (left to right; the last column takes what is left).
---@param cols {win: integer, width: integer}[]
---@param want integer[]
local function set_widths(cols, want)
  for i = 1, #cols - 1 do
    if api.nvim_win_is_valid(cols[i].win) then
      pcall(api.nvim_win_set_width, cols[i].win, math.max(want[i], 1))
    end
  end
end

--- The code columns share the room the panel left them in the proportions they had (the
--- panel took its columns from the rightmost one alone: 80|79 became 80|14).
---@param before {win: integer, width: integer}[]
---@param panel integer
local function spread(before, panel)
  local total, now = 0, {}
  for _, c in ipairs(before) do
    total = total + c.width
  end
  local room = total - api.nvim_win_get_width(panel) - 1
  if #before < 2 or room < #before then
    return
  end
  for i, c in ipairs(before) do
    now[i] = math.floor(c.width * room / total + 0.5)
  end
  set_widths(before, now)
end

--- Whether `win` is a normal (not floating) window.
---@param win integer
---@return boolean
function M.is_split(win)
  return api.nvim_win_is_valid(win) and api.nvim_win_get_config(win).relative == ""
end

--- A normal window of the current tab page showing `buf`, if any.
---@param buf integer
---@return integer?
function M.find(buf)
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == buf and M.is_split(win) then
      return win
    end
  end
  return nil
end

--- A `%` in a 'winbar' or 'statusline' is an item: the text shows as it is.
---@param s string
---@return string
local function literal(s)
  return (s:gsub("%%", "%%%%"))
end

--- The title or footer as a bar shows it: printable (a NUL made strdisplaywidth throw, and
--- the turn's end with it), cut at its end to `width` cells, every `%` literal.
---@param s string
---@param width integer
---@return string
local function bar(s, width)
  local fit = require("minime.ui.say").fit
  return literal(fit(require("minime.ui.printable").line(s, math.huge), width))
end

--- Whether `win` can show a 'winbar' without asking its column for a line: it shows one
--- already, or has a line of its own for it. A window of one line in a column with none to
--- spare has no room (setting 'winbar' there is E36, even under :silent!, in v:errmsg).
---@param win integer
---@return boolean
local function room_for_winbar(win)
  return api.nvim_win_get_height(win) > 1 or vim.fn.getwininfo(win)[1].winbar == 1
end

--- Say `title` in the panel's 'winbar' and `footer` in its 'statusline', each cut at its
--- end to the panel's width (Neovim would cut the start): the state (the title's first
--- word) and the queued count (the footer's) stay. A panel squeezed to one line says both
--- in its 'statusline' (the title's half first) until it grows again.
---@param win integer
---@param title string
---@param footer string
function M.restate(win, title, footer)
  local width = api.nvim_win_get_width(win)
  local wo = vim.wo[win][0]
  title, footer = vim.trim(title), vim.trim(footer)
  if room_for_winbar(win) then
    wo.winbar = "%#MiniMeTitle#" .. bar(title, width)
    wo.statusline = bar(footer, width)
  else
    wo.winbar = ""
    local half = math.floor(width / 2)
    wo.statusline = bar(title, half) .. " │ " .. bar(footer, math.max(width - half - 3, 1))
  end
end

--- Open the panel on `buf` at the editor's right (entered if `enter`). nil where there is no
--- room for it (E36): the caller shows the float instead.
---@param buf integer
---@param enter boolean
---@return integer? win
function M.open(buf, enter)
  local before = columns()
  local width = M.width()
  -- Opened no wider than the rightmost column can give (more, and Neovim made every window
  -- the same width), then widened: the columns share what it takes (spread).
  local rightmost = before[#before] and before[#before].width - 2 or width
  local ok, win = window.quietly(api.nvim_open_win, buf, enter, {
    split = "right",
    win = -1, -- the whole editor's right, not one window's
    width = math.max(math.min(width, rightmost), 1),
  })
  if not ok then
    return nil
  end
  M.set_options(win)
  pcall(api.nvim_win_set_width, win, width)
  spread(before, win)
  opened[win] = { width = api.nvim_win_get_width(win), columns = before }
  return win
end

--- The panel's own window-local options (a buffer new to a window takes the window's
--- defaults: set again after the panel's buffer is replaced).
---@param win integer
function M.set_options(win)
  for name, value in pairs(panel_options) do
    api.nvim_set_option_value(name, value, { win = win, scope = "local" })
  end
end

--- The panel to its width again (the editor was resized).
---@param win integer
function M.resize(win)
  pcall(api.nvim_win_set_width, win, M.width())
  if opened[win] then
    opened[win].width = api.nvim_win_get_width(win)
  end
end

--- Before the panel `win` closes: a width the user gave it is kept for the next opening.
---@param win integer
---@return {win: integer, width: integer}[]? the code columns' widths before it opened
local function leaving(win)
  local seen = opened[win]
  opened[win] = nil
  if not seen then
    return nil
  end
  local width = api.nvim_win_get_width(win)
  if width ~= seen.width then
    M.chosen = { width = width, over = config.options.window.width }
  end
  return seen.columns
end

--- The code columns back to the widths they had before the panel opened, if they are the
--- same windows as then (none closed or added since).
---@param before {win: integer, width: integer}[]?
local function give_back(before)
  local now = columns()
  if not before or #before ~= #now then
    return
  end
  local want = {}
  for i, c in ipairs(before) do
    if now[i].win ~= c.win then
      return
    end
    want[i] = c.width
  end
  set_widths(now, want)
end

--- Close the panel `win` of the current tab page. The last window of its tab page cannot
--- close: it shows an empty buffer instead (with the options of a new buffer, not the
--- panel's), the conversation staying hidden.
---@param win integer
function M.close(win)
  if not api.nvim_win_is_valid(win) then
    return
  end
  local normal = 0
  for _, w in ipairs(api.nvim_tabpage_list_wins(api.nvim_win_get_tabpage(win))) do
    if M.is_split(w) then
      normal = normal + 1
    end
  end
  if normal > 1 then
    local before = leaving(win)
    window.close(win)
    give_back(before)
  else
    leaving(win)
    pcall(api.nvim_win_call, win, function()
      vim.wo.winfixbuf = false
      vim.cmd("enew")
    end)
  end
end

return M
