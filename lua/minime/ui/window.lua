-- Shared helpers for the minime floats: sizing, scratch buffers, highlight groups.
local M = {}

local api = vim.api

-- Default highlight groups, linked so colorschemes style them; users override with :hi.
local links = {
  MiniMePrompt = "Special",
  MiniMeTool = "Function",
  MiniMeToolKind = "Type",
  MiniMeToolOutput = "Comment",
  MiniMeStatusPending = "DiagnosticWarn",
  MiniMeStatusRunning = "DiagnosticInfo",
  MiniMeStatusDone = "DiagnosticOk",
  MiniMeStatusFailed = "DiagnosticError",
  MiniMePlanDone = "Comment",
  MiniMePlanActive = "DiagnosticInfo",
  MiniMeNotice = "DiagnosticInfo",
  MiniMeQueued = "Comment",
  MiniMeDone = "Comment",
  MiniMeError = "DiagnosticError",
  MiniMeFold = "Folded",
  MiniMeOptionAllow = "DiagnosticOk",
  MiniMeOptionReject = "DiagnosticError",
  MiniMeOptionKey = "Number",
  MiniMeTitle = "Title",
}

function M.highlights()
  for name, target in pairs(links) do
    api.nvim_set_hl(0, name, { link = target, default = true })
  end
  -- Thinking is dimmed: Comment's colours, and a grey where it has none for a 256-colour
  -- terminal ('notermguicolors'), as in Neovim's default colorscheme, where a link showed
  -- thinking as plain text.
  local comment = api.nvim_get_hl(0, { name = "Comment", link = false })
  api.nvim_set_hl(0, "MiniMeThinking", {
    default = true,
    fg = comment.fg,
    ctermfg = comment.ctermfg or 244,
    italic = comment.italic,
  })
end

M.highlights()
api.nvim_create_autocmd("ColorScheme", {
  group = api.nvim_create_augroup("minime.ui.highlights", { clear = true }),
  callback = M.highlights,
})

--- Resolve a size: a fraction (<= 1) of `total`, or an absolute count; clamped to [min, total].
---@param value number
---@param total integer
---@param min integer
---@return integer
function M.size(value, total, min)
  local n = value <= 1 and math.floor(total * value) or math.floor(value)
  return math.max(math.min(n, total), math.min(min, total))
end

--- The editor area a float may use (minus the command line and the border).
---@return integer width, integer height
function M.area()
  local height = vim.o.lines - vim.o.cmdheight - 2
  if vim.o.laststatus > 0 then
    height = height - 1
  end
  return vim.o.columns - 2, math.max(height, 1)
end

---@class minime.ui.FloatOpts
---@field width number fraction of the editor (<= 1) or columns
---@field height number fraction of the editor (<= 1) or lines
---@field border string|string[]
---@field zindex? integer
---@field title? string
---@field footer? string

--- Config for a float centred in the editor.
---@param opts minime.ui.FloatOpts
---@param lines? integer content height: the float shrinks to it when smaller
---@return vim.api.keyset.win_config
function M.centered(opts, lines)
  local aw, ah = M.area()
  local width = M.size(opts.width, aw, 20)
  local height = M.size(opts.height, ah, 1)
  if lines then
    height = math.max(1, math.min(height, lines))
  end
  local cfg = {
    relative = "editor",
    width = width,
    height = height,
    row = math.max(0, math.floor((ah - height) / 2)),
    col = math.max(0, math.floor((aw - width) / 2)),
    border = opts.border,
    zindex = opts.zindex,
    style = "minimal",
  }
  if opts.border ~= "none" and opts.border ~= "" then
    cfg.title = opts.title
    cfg.title_pos = opts.title and "center" or nil
    cfg.footer = opts.footer
    cfg.footer_pos = opts.footer and "right" or nil
  end
  return cfg
end

--- Config for a float along the editor's right edge, full height (a side panel): its
--- border's right edge is the editor's; `opts.height` is not used.
---@param opts minime.ui.FloatOpts
---@return vim.api.keyset.win_config
function M.side(opts)
  local edge = (opts.border == "none" or opts.border == "") and 0 or 2
  local aw, ah = M.area() -- both less a border of 2
  aw, ah = aw + 2 - edge, ah + 2 - edge
  local width = M.size(opts.width, aw, 20)
  local cfg = M.centered(opts)
  cfg.width, cfg.height, cfg.row, cfg.col = width, ah, 0, aw - width
  return cfg
end

--- A scratch buffer: not listed, no file, no swap, no undo history.
---@param kind string value of b:minime
---@param bufhidden? string default "wipe"
---@return integer buf
function M.scratch(kind, bufhidden)
  local buf = api.nvim_create_buf(false, true)
  local bo = vim.bo[buf]
  bo.bufhidden = bufhidden or "wipe"
  bo.swapfile = false
  bo.undolevels = -1
  vim.b[buf].minime = kind
  return buf
end

-- Every float of the plugin is opened here (`open_float`) and closed here (`close`), and lives
-- only in the tab page the user is in. Neovim 0.11.4 crashes on a float left in another tab
-- page: wiping the buffer of that page's last other window frees a frame it still reads
-- (winframe_remove, SIGSEGV; fixed after 0.11.4, neovim/neovim#37244), and closing the float
-- from another tab while it is that page's current and previous window leaves the page's
-- current window pointing at freed memory (E315 at the next redraw, then SIGSEGV or a double
-- free). So leaving a tab page closes the plugin's floats in it (TabLeave, before the page is
-- left: no float is ever in a page the user is not in), their owners' WinClosed handlers ask
-- `moved(win)` to tell that from the user closing it, and `on_tab_enter` hooks show them again
-- in the page entered. The current window is left before it is closed, so a closed float never
-- leaves its window as both the current and the previous one.
local floats = {} ---@type table<integer, true>
local moved = {} ---@type table<integer, true>
local pending = {} ---@type table<integer, true> closed once their tab page is the current one
local followers = {} ---@type fun(moved: table<integer, true>)[]

--- Failures of the tab page hooks (never thrown at the user; tests read them).
---@type string[]
M.errors = {}

--- Whether `win` is a valid window of the current tab page.
---@param win integer?
---@return boolean
function M.here(win)
  return win ~= nil
    and api.nvim_win_is_valid(win)
    and api.nvim_win_get_tabpage(win) == api.nvim_get_current_tabpage()
end

-- A float's title and footer go to the terminal as they are (an ESC in them reached it raw,
-- a NUL cut them): every float's config passes through here, title and footer printable.
local function printable_words(cfg)
  local line = require("minime.ui.printable").line
  for _, part in ipairs({ "title", "footer" }) do
    local words = cfg[part]
    if type(words) == "table" then
      for _, chunk in ipairs(words) do
        chunk[1] = line(chunk[1], math.huge)
      end
    elseif words ~= nil then
      cfg[part] = line(words, math.huge)
    end
  end
  return cfg
end

--- Open a float of the plugin (nvim_open_win) in the current tab page.
---@param buf integer
---@param enter boolean
---@param cfg vim.api.keyset.win_config
---@return integer win
function M.open_float(buf, enter, cfg)
  local win = api.nvim_open_win(buf, enter, printable_words(cfg))
  floats[win] = true
  return win
end

--- A float's new config (nvim_win_set_config), its title and footer printable.
---@param win integer
---@param cfg vim.api.keyset.win_config
function M.reconfig(win, cfg)
  api.nvim_win_set_config(win, printable_words(cfg))
end

--- `pcall(fn, ...)` under `:silent!`: opening a window where a tab page's command line took
--- the room (Neovim grows 'cmdheight' on a small screen with many windows) gives E36 from
--- inside the call, and the message escaped the pcall into the command that ran it.
---@return boolean ok, any ...
function M.quietly(fn, ...)
  local args, out = { ... }, { false, "not run" }
  M.quiet_call = function()
    out = { pcall(fn, unpack(args, 1, table.maxn(args))) }
  end
  pcall(vim.cmd, "silent! lua require('minime.ui.window').quiet_call()")
  M.quiet_call = nil
  return unpack(out, 1, table.maxn(out))
end

--- Whether `win` was closed by its tab page being left (not by the user): its owner shows it
--- again from an `on_tab_enter` hook.
---@param win integer?
---@return boolean
function M.moved(win)
  return win ~= nil and moved[win] == true
end

--- Run `fn(moved)` (scheduled) after each tab page is entered; `moved` holds the floats the
--- last TabLeave closed.
---@param fn fun(moved: table<integer, true>)
function M.on_tab_enter(fn)
  followers[#followers + 1] = fn
end

--- A window of the current tab page to stand in while `win` closes: `back` if given and fit,
--- else the previous window, else the first one that is not a float.
local function stand_in(win, back)
  if back ~= win and M.here(back) then
    return back
  end
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and prev ~= win and api.nvim_win_get_config(prev).relative == "" then
    return prev
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if w ~= win and api.nvim_win_get_config(w).relative == "" then
      return w
    end
  end
end

--- Close a window if it is still valid (never errors, e.g. for the last window). The current
--- window is left first (for `back` when given); a window of another tab page that is that
--- page's current window is closed when the page is entered again.
---@param win integer?
---@param back? integer the window to stand in while it closes
function M.close(win, back)
  if not (win and api.nvim_win_is_valid(win)) then
    if win then
      floats[win] = nil
    end
    return
  end
  local tab = api.nvim_win_get_tabpage(win)
  if tab ~= api.nvim_get_current_tabpage() and api.nvim_tabpage_get_win(tab) == win then
    pending[win] = true
    return
  end
  if win == api.nvim_get_current_win() then
    local other = stand_in(win, back)
    if other then
      pcall(api.nvim_set_current_win, other)
    end
  end
  if pcall(api.nvim_win_close, win, true) then
    floats[win], pending[win] = nil, nil
  elseif api.nvim_win_is_valid(win) then
    vim.schedule(function() -- refused now (a text lock): once Neovim allows it
      M.close(win)
    end)
  end
end

local group = api.nvim_create_augroup("minime.ui.window", { clear = true })
api.nvim_create_autocmd("TabLeave", {
  group = group,
  callback = function()
    local tab = api.nvim_get_current_tabpage()
    for win in pairs(floats) do
      if not api.nvim_win_is_valid(win) then
        floats[win] = nil
      elseif api.nvim_win_get_tabpage(win) == tab then
        moved[win] = true
        M.close(win)
      end
    end
  end,
})
api.nvim_create_autocmd("TabEnter", {
  group = group,
  callback = function()
    vim.schedule(function()
      -- None should be left in another page; one that was (its close refused in TabLeave)
      -- goes now, or when its page is entered if it is that page's current window.
      local here = api.nvim_get_current_tabpage()
      for win in pairs(floats) do
        if api.nvim_win_is_valid(win) and api.nvim_win_get_tabpage(win) ~= here then
          M.close(win)
        end
      end
      for win in pairs(pending) do
        if not api.nvim_win_is_valid(win) then
          pending[win] = nil
        elseif M.here(win) then
          M.close(win)
        end
      end
      local now = moved
      moved = {}
      for _, fn in ipairs(followers) do
        local ok, err = pcall(fn, now)
        if not ok then
          M.errors[#M.errors + 1] = tostring(err)
        end
      end
    end)
  end,
})

--- Make a string safe for one buffer line: no newlines.
---@param s any
---@return string
function M.oneline(s)
  if s == nil or s == vim.NIL then
    return ""
  end
  return (tostring(s):gsub("\r?\n", " "))
end

--- Delete `buf` without closing a window: each window showing it shows another buffer first
--- (its alternate one if listed, else the last listed one used, else a new empty one). Deleting
--- a buffer closes its windows, and the user's code window is never the plugin's to close.
---@param buf integer
function M.delete_buffer(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    api.nvim_win_call(win, function()
      local alt = vim.fn.bufnr("#")
      if alt > 0 and alt ~= buf and vim.bo[alt].buflisted then
        api.nvim_win_set_buf(win, alt)
        return
      end
      local recent = vim.tbl_filter(function(info)
        return info.bufnr ~= buf
      end, vim.fn.getbufinfo({ buflisted = 1 }))
      table.sort(recent, function(a, b)
        return a.lastused > b.lastused
      end)
      if recent[1] then
        api.nvim_win_set_buf(win, recent[1].bufnr)
      else
        vim.cmd("enew")
      end
    end)
  end
  pcall(api.nvim_buf_delete, buf, { force = true })
end

return M
