--- A one-line input float (the prompt box).
---
--- <CR> (insert or normal mode) submits the line. <Esc> cancels in normal mode and also in
--- insert mode: for a one-line box a second <Esc> to get out would only be a trap. <C-c>
--- cancels too, and so does closing the float (:q). Leaving it (a permission prompt taking
--- focus, <C-w>w) keeps it and its text.
local window = require("minime.ui.window")

local api = vim.api

local M = {}

-- Its width (a fraction (<= 1) of the editor, or columns) and border: not options.
local LAYOUT = { width = 0.6, border = "rounded" }

---@class minime.input.Opts
---@field prompt_title? string shown in the border
---@field default? string initial text
---@field on_submit fun(text: string) called with the line as typed (possibly '')
---@field on_cancel? fun()

--- Open the input float and start insert mode. Returns its window.
---@param opts minime.input.Opts
---@return integer win
function M.open(opts)
  local buf = window.scratch("input")
  vim.bo[buf].undolevels = -123456 -- the global value: undo works while typing
  local default = window.oneline(opts.default)
  api.nvim_buf_set_lines(buf, 0, -1, false, { default })

  local title = opts.prompt_title and vim.trim(window.oneline(opts.prompt_title))
  title = title and (" " .. title .. " ") or nil
  local cfg = window.centered({
    width = LAYOUT.width,
    height = 1,
    border = LAYOUT.border,
    zindex = 70,
    title = title,
    footer = " <CR> send · <Esc> cancel ",
  }, 1)
  local prev = api.nvim_get_current_win()
  local win = api.nvim_open_win(buf, true, cfg)
  api.nvim_win_set_cursor(win, { 1, #default })
  vim.cmd("startinsert!")

  local done = false
  ---@param fn? fun(...)
  local function finish(fn, ...)
    if done then
      return
    end
    done = true
    vim.cmd.stopinsert()
    window.close(win)
    if api.nvim_win_is_valid(prev) then
      pcall(api.nvim_set_current_win, prev)
    end
    if fn then
      fn(...)
    end
  end
  local function submit()
    finish(opts.on_submit, api.nvim_buf_get_lines(buf, 0, 1, false)[1] or "")
  end
  local function cancel()
    finish(opts.on_cancel)
  end

  local map = function(modes, lhs, fn, desc)
    vim.keymap.set(modes, lhs, fn, { buffer = buf, nowait = true, desc = "minime: " .. desc })
  end
  map({ "n", "i" }, "<CR>", submit, "send")
  map({ "n", "i" }, "<Esc>", cancel, "cancel")
  map({ "n", "i" }, "<C-c>", cancel, "cancel")
  -- Closed some other way: a cancel (scheduled: callbacks may open windows).
  api.nvim_create_autocmd("WinClosed", {
    pattern = tostring(win),
    once = true,
    callback = function()
      vim.schedule(cancel)
    end,
  })
  return win
end

return M
