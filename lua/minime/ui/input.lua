--- The input float (the prompt box): one line that grows, up to MAX_LINES, as lines are added.
---
--- <CR> (insert or normal mode) submits the whole text; <C-j> (and <S-CR> where the terminal
--- sends it) inserts a newline. <Esc> in insert mode goes to normal mode, to edit a long prompt
--- with Vim's motions; there <Esc> or q closes the float. <M-v> pastes an image from the system
--- clipboard as an `@clipboard-N.png` attachment (minime.editor.pasted_image). <C-c> closes it too, and so does
--- closing the window (:q). Closed without sending, `on_cancel` gets the text (a draft: see
--- minime.ui.drafts). Leaving it (a permission prompt taking focus, <C-w>w) keeps it and its
--- text. Anchored to a window (the conversation float), it sits over that window's bottom
--- lines, as wide as it.
local window = require("minime.ui.window")

local api = vim.api

local M = {}

-- Its width (a fraction (<= 1) of the editor, or columns) and border: not options.
local LAYOUT = { width = 0.6, border = "rounded" }
-- The float grows with its text up to this many lines (then it scrolls).
local MAX_LINES = 8

---@class minime.input.Opts
---@field prompt_title? string shown in the border
---@field default? string initial text (may hold newlines)
---@field anchor? integer a window to sit over (its bottom lines), else centred in the editor
---@field cwd? string the ask's cwd: what its completion offers (minime.ui.complete)
---@field on_submit fun(text: string) called with the text as typed, lines joined by "\n"
---@field on_cancel? fun(text: string) closed without sending: the text as typed
---@field cwd? string the ask's cwd: `@` completes its files (ui/complete_mentions.lua)

---@param opts minime.input.Opts
---@param n integer lines of text
local function win_config(opts, n)
  local height = math.max(1, math.min(n, MAX_LINES))
  local base = {
    width = LAYOUT.width,
    height = height,
    border = LAYOUT.border,
    zindex = 70,
    footer = " <CR> send · <Esc><Esc> close · <C-j> newline ",
  }
  local title = opts.prompt_title and vim.trim(window.oneline(opts.prompt_title))
  base.title = title and (" " .. title .. " ") or nil
  local anchor = opts.anchor
  if window.here(anchor) then
    local cfg = window.centered(base, height)
    local aw = api.nvim_win_get_width(anchor)
    local ah = api.nvim_win_get_height(anchor)
    cfg.relative, cfg.win = "win", anchor
    cfg.width = math.max(aw - 2, 10)
    cfg.height = math.max(1, math.min(height, ah - 2))
    cfg.row, cfg.col = math.max(ah - cfg.height - 2, 0), 0
    return cfg
  end
  return window.centered(base, height)
end

--- Put `token` in the input at its cursor (after the character under it in normal mode),
--- spaced from the words around it; the cursor goes after it.
---@param buf integer
---@param win integer
---@param token string
local function insert_token(buf, win, token)
  local row, col = unpack(api.nvim_win_get_cursor(win))
  local line = api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
  local inserting = api.nvim_get_current_win() == win and api.nvim_get_mode().mode:sub(1, 1) == "i"
  if not inserting and #line > 0 then
    col = col + #vim.fn.strcharpart(line:sub(col + 1), 0, 1)
  end
  local before, after = line:sub(col, col), line:sub(col + 1, col + 1)
  local text = ((col > 0 and not before:match("%s")) and " " or "")
    .. token
    .. ((after == "" or not after:match("%s")) and " " or "")
  api.nvim_buf_set_text(buf, row - 1, col, row - 1, col, { text })
  api.nvim_win_set_cursor(win, { row, col + #text })
end

--- Open the input float and start insert mode. Returns its window.
---@param opts minime.input.Opts
---@return integer win
function M.open(opts)
  local buf = window.scratch("input")
  vim.bo[buf].undolevels = -123456 -- the global value: undo works while typing
  local default = opts.default
  local lines = vim.split(default == nil and "" or tostring(default), "\r?\n")
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  -- <C-x><C-o> (and blink.cmp's / nvim-cmp's omni sources) complete `/commands` and `@` mentions.
  require("minime.ui.complete").attach(buf, opts.cwd)

  local prev = api.nvim_get_current_win()
  local win = window.open_float(buf, true, win_config(opts, #lines))
  api.nvim_win_set_cursor(win, { #lines, #lines[#lines] })
  vim.wo[win].wrap = true
  vim.cmd("startinsert!")

  local done = false
  -- The text as last seen: the buffer may be gone when a :q'd float is finished.
  local typed = table.concat(lines, "\n")
  local function text_now()
    if api.nvim_buf_is_valid(buf) then
      typed = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
    end
    return typed
  end
  ---@param fn? fun(...)
  local function finish(fn, ...)
    if done then
      return
    end
    done = true
    vim.cmd.stopinsert()
    window.close(win, prev)
    if window.here(prev) then
      pcall(api.nvim_set_current_win, prev)
    end
    if fn then
      fn(...)
    end
  end
  local function submit()
    finish(opts.on_submit, text_now())
  end
  local function cancel()
    finish(opts.on_cancel, text_now())
  end
  local function newline()
    local row, col = unpack(api.nvim_win_get_cursor(win))
    api.nvim_buf_set_text(buf, row - 1, col, row - 1, col, { "", "" })
    api.nvim_win_set_cursor(win, { row + 1, 0 })
  end

  -- <M-v>: an image from the system clipboard, named by a token where the cursor is then.
  local function paste_image()
    require("minime.editor.pasted_image").paste(function(token)
      if token and api.nvim_buf_is_valid(buf) and api.nvim_win_is_valid(win) then
        insert_token(buf, win, token)
      elseif token then
        require("minime.ui.say").say("minime: the input closed before the image was read")
      end
    end)
  end

  local map = function(modes, lhs, fn, desc)
    vim.keymap.set(modes, lhs, fn, { buffer = buf, nowait = true, desc = "minime: " .. desc })
  end
  map({ "n", "i" }, "<CR>", submit, "send")
  map("i", "<C-j>", newline, "new line")
  map("i", "<S-CR>", newline, "new line")
  -- <Esc> in insert mode is Vim's own: to normal mode, where <Esc> or q closes.
  map("n", "<Esc>", cancel, "close (the text is kept as a draft)")
  map("n", "q", cancel, "close (the text is kept as a draft)")
  map({ "n", "i" }, "<C-c>", cancel, "close (the text is kept as a draft)")
  map({ "n", "i" }, "<M-v>", paste_image, "paste an image from the clipboard")
  -- The float grows (and shrinks) with its text.
  api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    buffer = buf,
    callback = function()
      text_now()
      if api.nvim_win_is_valid(win) then
        window.reconfig(win, win_config(opts, api.nvim_buf_line_count(buf)))
      end
    end,
  })
  -- Closed some other way: a cancel (scheduled: callbacks may open windows).
  api.nvim_create_autocmd("WinClosed", {
    pattern = tostring(win),
    once = true,
    callback = function()
      text_now()
      vim.schedule(cancel)
    end,
  })
  return win
end

return M
