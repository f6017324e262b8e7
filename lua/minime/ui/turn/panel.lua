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

--- The panel's width in columns now: `window.width` of the editor (nil: 0.4), at least 20.
---@return integer
function M.width()
  return window.size(config.options.window.width or 0.4, vim.o.columns, 20)
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
  local ok, win = window.quietly(api.nvim_open_win, buf, enter, {
    split = "right",
    win = -1, -- the whole editor's right, not one window's
    width = M.width(),
  })
  if not ok then
    return nil
  end
  M.set_options(win)
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
    window.close(win)
  else
    pcall(api.nvim_win_call, win, function()
      vim.cmd("enew")
    end)
  end
end

return M
