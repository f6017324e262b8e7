--- The conversation's window, a float or the panel (`window.layout`, minime.ui.turn.panel):
--- where it sits and what its title says, its window options (wrap, folds), following the
--- stream, and its keys. Knows nothing of what the buffer holds.
local config = require("minime.config")
local panel = require("minime.ui.turn.panel")
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
  -- A file never opens in the conversation's window (:cc, :edit go to a code window, or fail).
  winfixbuf = true,
  -- A float opened from the panel inherits its 'winbar' (the title, drawn twice then); the
  -- panel sets its own again (panel.restate).
  winbar = "",
}

--- Whether the float or panel shows `layout`'s way ("split" for the panel).
---@return boolean
local function split_layout()
  return config.options.window.layout == "split"
end

--- Whether the turn's window is open in this tab page (forgetting a window closed from
--- outside). A float left in another tab page is closed there (minime.ui.window); a panel
--- stays in its tab page, and the one of this page (if any) is the turn's window now.
---@param t minime.turn.Turn
---@return boolean
function M.visible(t)
  if t.win and not window.here(t.win) then
    if api.nvim_win_is_valid(t.win) and not panel.is_split(t.win) then
      window.close(t.win)
    end
    t.win = nil
  end
  if t.win == nil or api.nvim_win_get_buf(t.win) ~= t.buf then
    t.win = api.nvim_buf_is_valid(t.buf) and panel.find(t.buf) or nil
  end
  return t.win ~= nil
end

--- The session's state in words: what the title says.
---@param t minime.turn.Turn
---@return string
function M.state(t)
  if t.running then
    local askers = package.loaded["minime.ui.ask.askers"]
    return askers and askers.waiting_for(t.key) or "running"
  elseif t.error then
    return "error"
  elseif t.stop_reason == "cancelled" then
    return "cancelled"
  elseif t.stop_reason then
    return text.reasons[t.stop_reason] or t.stop_reason
  end
  return t.past and #t.past > 0 and "done" or "idle"
end

--- The session's mode for the title ("mode: <name>", lua/minime/modes.lua), or nil.
---@param t minime.turn.Turn
---@return string?
function M.mode(t)
  local modes = package.loaded["minime.modes"]
  return modes and modes.label(t.key) or nil
end

--- The title (the agent, the state and the cwd) and the footer (the keys) of the window.
---@param t minime.turn.Turn
---@return string title, string footer
local function words(t)
  local where = vim.fn.fnamemodify(t.cwd, ":~")
  if #where > 40 then
    where = "…" .. where:sub(-39)
  end
  -- The state first: a narrow float cuts the title's end (the cwd), never the state.
  local parts = { M.state(t), t.agent or "minime" }
  local modes = package.loaded["minime.modes"]
  local title = modes and modes.title(t.key)
  if title then -- the agent's words (session_info_update): printable, one short line
    parts[#parts + 1] = require("minime.ui.printable").line(title, 40)
  end
  local mode = M.mode(t)
  if mode and mode ~= "" then
    parts[#parts + 1] = mode
  end
  parts[#parts + 1] = where
  local footer = t.running and " i reply · q hide · <C-c> cancel " or " i reply · q hide "
  local waiting = t.queued and #t.queued or 0
  if waiting > 0 then -- said here too: a folded tool at the end hides the lines under it
    footer = (" ⧗ %d queued ·"):format(waiting) .. footer
  end
  local usage = require("minime.budget").usage(t.key) -- the agent's figures, the budget's
  if usage then
    footer = " " .. usage .. " ·" .. footer
  end
  return " " .. table.concat(parts, " · ") .. " ", footer
end

--- The float's config: at the editor's right edge, full height (`window.layout = "float"`,
--- or "side"), or centred ("center"); its title and footer `words`.
---@param t minime.turn.Turn
function M.config(t)
  local c = config.options.window
  local title, footer = words(t)
  local center = c.layout == "center"
  local opts = {
    width = c.width or (center and 0.8 or 0.4),
    height = c.height,
    border = c.border,
    zindex = 45,
    title = title,
    footer = footer,
  }
  -- Neovim cuts a title wider than the float at its end: the cwd goes first, the state never.
  return center and window.centered(opts) or window.side(opts)
end

--- Put the cursor on the last line; the asks queued under it (virtual lines below the last
--- line, minime.ui.turn.queued) are scrolled into view too, which the cursor alone never does.
---@param t minime.turn.Turn
function M.follow(t)
  local last = api.nvim_buf_line_count(api.nvim_win_get_buf(t.win))
  local row = math.min(t.row + 1, last)
  api.nvim_win_set_cursor(t.win, { row, 0 })
  if row == last and t.queued and #t.queued > 0 then
    api.nvim_win_call(t.win, function()
      vim.cmd("normal! zb")
    end)
  end
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

--- Open the float on the turn's buffer, at its end (entered as `window.focus` says, unless
--- `enter` says otherwise).
---@param t minime.turn.Turn
---@param enter? boolean
---@return boolean shown
function M.show(t, enter)
  if enter == nil then
    enter = config.options.window.focus
  end
  local win = split_layout() and panel.open(t.buf, enter) or nil
  if win then
    t.win = win
    M.set_options(win)
    M.restate(t)
  else -- the float (also where the panel has no room)
    local ok, float = window.quietly(window.open_float, t.buf, enter, M.config(t))
    if not ok then -- E36: a screen too small even for a float (a huge 'cmdheight')
      require("minime.ui.say").say(
        "minime: no room for the conversation — make room and :MiniMeToggle",
        vim.log.levels.WARN
      )
      return false
    end
    t.win = float
    t.last_win = float
    M.set_options(float)
  end
  M.follow(t)
  return true
end

--- Say the state again in the window's title and footer (its state or the editor's size
--- changed).
---@param t minime.turn.Turn
---@param resized? boolean
function M.restate(t, resized)
  if panel.is_split(t.win) then
    if resized then
      panel.resize(t.win)
    end
    local title, footer = words(t)
    panel.restate(t.win, title, footer)
  else
    window.reconfig(t.win, M.config(t))
  end
end

--- `win` shows the turn's new buffer (a reset): its options again, a panel's title too.
---@param t minime.turn.Turn
---@param win integer
function M.adopt(t, win)
  M.set_options(win)
  if panel.is_split(win) then
    panel.set_options(win)
    local title, footer = words(t)
    panel.restate(win, title, footer)
  end
end

--- Show `t` in the window `from` shows (a panel or a float of this tab page) in its place:
--- switching threads switches the buffer, never opens a second panel.
---@param from minime.turn.Turn
---@param t minime.turn.Turn
function M.switch(from, t)
  local win = from.win
  local fixed = vim.wo[win].winfixbuf
  vim.wo[win].winfixbuf = false -- set again by adopt: the window holds the conversation shown
  -- The buffer brings its window options back ('winbar' of the panel it was last in): a
  -- window squeezed to one row has no room for it (E36). Then `from` stays, and is hidden.
  if not window.quietly(api.nvim_win_set_buf, win, t.buf) then
    vim.wo[win].winfixbuf = fixed
    return
  end
  from.win = nil
  t.win = win
  if not panel.is_split(win) then
    t.last_win = win
    window.reconfig(win, M.config(t))
  end
  M.adopt(t, win)
  M.follow(t)
end

---@param t minime.turn.Turn
function M.hide(t)
  if M.visible(t) then
    if panel.is_split(t.win) then
      panel.close(t.win)
    else
      window.close(t.win)
    end
  end
  t.win = nil
end

--- `q` hides the float (the turn goes on), `<C-c>` cancels the turn, `i` (and `<CR>` on the
--- last line) opens the input to reply, `<CR>` on a tool line (even the last) or a new error its
--- location, `f` on new errors sends them. Through the
--- public module at each press: its `close`, `on_cancel` and `on_reply` hooks are called.
---@param buf integer
---@param key string
function M.map_keys(buf, key)
  vim.keymap.set("n", "q", function()
    require("minime.ui.turn").close(key)
  end, { buffer = buf, nowait = true, desc = "minime: hide the turn (it goes on)" })
  vim.keymap.set("n", "<C-c>", function()
    require("minime.ui.turn").on_cancel(key)
  end, { buffer = buf, desc = "minime: cancel the turn" })
  vim.keymap.set("n", "i", function()
    require("minime.ui.turn").on_reply(key)
  end, { buffer = buf, nowait = true, desc = "minime: reply (the next ask here)" })
  vim.keymap.set("n", "<CR>", function()
    local row = api.nvim_win_get_cursor(0)[1]
    if require("minime.ui.turn.tools").jump(buf, row) then -- a tool line (the last one too)
      return
    elseif require("minime.ui.turn.diagnostics").jump(buf, row) then -- a new error's line
      return
    elseif row == api.nvim_buf_line_count(0) then
      require("minime.ui.turn").on_reply(key)
    else
      vim.cmd("normal! " .. vim.v.count1 .. "+")
    end
  end, { buffer = buf, desc = "minime: on the last line, reply; on a tool line, its file" })
  -- `f` on the errors a turn caused sends them (:MiniMeFix); elsewhere it is `f`.
  vim.keymap.set({ "n", "x", "o" }, "f", function()
    if vim.fn.mode() == "n" and require("minime.ui.turn.diagnostics").at(buf, vim.fn.line(".")) then
      vim.schedule(function()
        require("minime.feedback.diagnostics").fix(key)
      end)
      return ""
    end
    return "f"
  end, { buffer = buf, expr = true, desc = "minime: on new errors, send them (:MiniMeFix)" })
  -- On an ask's `> …` lines: rewind the files to before it, or edit and resend it; elsewhere
  -- the keys are Vim's (`e` moves to the end of a word).
  for lhs, verb in pairs({ r = "rewind_at", e = "edit_at" }) do
    vim.keymap.set("n", lhs, function()
      local row = api.nvim_win_get_cursor(0)[1]
      if not require("minime.rewind.keys")[verb](buf, row) then
        vim.cmd("normal! " .. vim.v.count1 .. lhs)
      end
    end, {
      buffer = buf,
      nowait = true,
      desc = lhs == "r" and "minime: on an ask, rewind the files to before it"
        or "minime: on an ask, edit and resend it (files and conversation go back)",
    })
  end
end

return M
