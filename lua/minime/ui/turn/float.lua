--- The turn's float: where it sits and what its border says, its window options (wrap,
--- folds), following the stream, and its keys. Knows nothing of what the buffer holds.
local config = require("minime.config")
local text = require("minime.ui.turn.text")
local window = require("minime.ui.window")

local api = vim.api

local M = {}

local win_options = {
  wrap = true,
  linebreak = true,
  breakindent = true,
  smoothscroll = true,
  -- Markdown's markers (`**`, fences' backticks) hidden: minime.ui.turn.markdown conceals them
  -- with extmarks (not a tree-sitter highlighter, whose conceal_lines re-parsed per line); the
  -- cursor's line too in normal mode, where one reads.
  conceallevel = 2,
  concealcursor = "nc",
  foldenable = true,
  foldlevel = 0,
  foldmethod = "expr",
  foldexpr = "v:lua.require'minime.ui.turn'.foldexpr()",
  foldtext = "v:lua.require'minime.ui.turn'.foldtext()",
  fillchars = "eob: ,fold: ",
}

--- Whether the turn's float is open (forgetting a window closed from outside).
---@param t minime.turn.Turn
---@return boolean
function M.visible(t)
  if t.win and not api.nvim_win_is_valid(t.win) then
    t.win = nil
  end
  return t.win ~= nil
end

--- The float's config: centered (the `window` option as it is now), its title the cwd, its
--- footer the turn's state.
---@param t minime.turn.Turn
function M.config(t)
  local c = config.options.window
  local where = vim.fn.fnamemodify(t.cwd, ":~")
  if #where > 60 then
    where = "…" .. where:sub(-59)
  end
  local footer
  if t.running then
    footer = " running · q hide · <C-c> cancel "
  elseif t.error then
    footer = " failed "
  else
    footer = " " .. (text.reasons[t.stop_reason] or t.stop_reason or "idle") .. " "
  end
  return window.centered({
    width = c.width,
    height = c.height,
    border = c.border,
    zindex = 45,
    title = " minime · " .. where .. " ",
    footer = footer,
  })
end

--- Put the cursor on the last line.
---@param t minime.turn.Turn
function M.follow(t)
  api.nvim_win_set_cursor(t.win, { t.row + 1, 0 })
end

--- Whether the end of the text is in view: then the float follows the stream (the cursor can
--- sit on a closed fold's start).
---@param t minime.turn.Turn
---@return boolean
function M.at_end(t)
  return api.nvim_win_get_cursor(t.win)[1] > t.row or vim.fn.line("w$", t.win) > t.row
end

--- The float's window-local options.
---@param win integer
function M.set_options(win)
  for name, value in pairs(win_options) do
    api.nvim_set_option_value(name, value, { win = win, scope = "local" })
  end
end

--- Open the float on the turn's buffer, at its end.
---@param t minime.turn.Turn
function M.show(t)
  t.win = api.nvim_open_win(t.buf, config.options.window.focus, M.config(t))
  M.set_options(t.win)
  M.follow(t)
end

---@param t minime.turn.Turn
function M.hide(t)
  if M.visible(t) then
    window.close(t.win)
  end
  t.win = nil
end

--- `q` hides the float (the turn goes on), `<C-c>` cancels the turn. Through the public module
--- at each press: its `close` and `on_cancel` hook are what is called.
---@param buf integer
---@param key string
function M.map_keys(buf, key)
  vim.keymap.set("n", "q", function()
    require("minime.ui.turn").close(key)
  end, { buffer = buf, nowait = true, desc = "minime: hide the turn (it goes on)" })
  vim.keymap.set("n", "<C-c>", function()
    require("minime.ui.turn").on_cancel(key)
  end, { buffer = buf, desc = "minime: cancel the turn" })
end

return M
