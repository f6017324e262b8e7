--- The conversation's buffer: made (and renewed on reset), its end position tracked rather
--- than read back, every edit one nvim_buf_set_text, the extmark namespaces (markdown's are
--- minime.ui.turn.markdown's).
local float = require("minime.ui.turn.float")
local markdown = require("minime.ui.turn.markdown")
local text = require("minime.ui.turn.text")
local window = require("minime.ui.window")

local api = vim.api

local M = {}

-- Regions (thinking blocks, tools with their body) read by foldexpr; one extmark each.
M.ns_fold = api.nvim_create_namespace("minime.turn.fold")
-- Decorations (highlights) that are cleared and redrawn with their lines.
M.ns_hl = api.nvim_create_namespace("minime.turn.hl")
-- Anchors (the plan block).
M.ns_pos = api.nvim_create_namespace("minime.turn.pos")
local ns_fold, ns_hl = M.ns_fold, M.ns_hl

--- Fold regions per buffer as sorted rows {first1, last1, first2, last2, ...}, read from the
--- extmarks once after each edit: foldexpr runs per line and must not query extmarks per line.
--- Every edit here drops its buffer's entry.
---@type table<integer, integer[]>
M.fold_rows = {}
local fold_rows = M.fold_rows
--- Per buffer, foldexpr calls answered row by row since its last edit (minime.ui.turn.folds).
---@type table<integer, integer>
M.fold_asks = {}
local fold_asks = M.fold_asks

--- The buffer changed: foldexpr reads its regions again.
local function edited(buf)
  fold_rows[buf], fold_asks[buf] = nil, nil
end

--- The turn shown in each buffer (foldtext reads its regions).
---@type table<integer, minime.turn.Turn>
M.by_buf = {}

local split = text.split

function M.hl(t, row, col, end_row, end_col, group)
  api.nvim_buf_set_extmark(t.buf, ns_hl, row, col, {
    end_row = end_row,
    end_col = end_col,
    hl_group = group,
    strict = false,
  })
end

--- Append `s` at the end of the buffer with one call.
---@param t minime.turn.Turn
---@param s string
function M.append(t, s)
  if s == "" then
    return
  end
  local parts = split(s)
  edited(t.buf)
  api.nvim_buf_set_text(t.buf, t.row, t.col, t.row, t.col, parts)
  local n = #parts
  if n == 1 then
    t.col = t.col + #parts[1]
  else
    t.prev_col = n == 2 and t.col + #parts[1] or #parts[n - 1]
    t.row = t.row + n - 1
    t.col = #parts[n]
  end
end

--- Re-read the end of the buffer (after an edit reached it, or a failure).
---@param t minime.turn.Turn
function M.sync_end(t)
  local n = api.nvim_buf_line_count(t.buf)
  local lines = api.nvim_buf_get_lines(t.buf, math.max(n - 2, 0), n, false)
  t.row = n - 1
  t.col = #lines[#lines]
  t.prev_col = #lines > 1 and #lines[1] or 0
end

--- Edit inside the buffer (not at its end) with one nvim_buf_set_text; the end position is
--- read back after it (two O(1) calls), never worked out from the edit: a range computed
--- from a stale mark put it off by lines, and every later append failed.
---@param t minime.turn.Turn
function M.splice(t, srow, scol, erow, ecol, lines)
  edited(t.buf)
  api.nvim_buf_set_text(t.buf, srow, scol, erow, ecol, lines)
  M.sync_end(t)
end

--- Set an extmark in ns_fold (a region foldexpr reads).
---@return integer id
function M.set_fold_mark(t, row, col, opts)
  edited(t.buf)
  opts.strict = false
  return api.nvim_buf_set_extmark(t.buf, ns_fold, row, col, opts)
end

--- Markdown is highlighted block by block as the answer streams (minime.ui.turn.markdown),
--- never by a tree-sitter highlighter or the regex syntax on the whole buffer: see there why.
--- `on`: nothing to do. Off: stop what a FileType autocmd may have started.
---@param t minime.turn.Turn
---@param on boolean
function M.highlight(t, on)
  if on then
    return
  end
  local buf = t.buf
  if vim.treesitter.highlighter.active[buf] ~= nil then
    -- Stopping it fires FileType to bring back the regex syntax: 20-50 ms of sourcing
    -- markdown.vim and html.vim, only to clear it below.
    local ignore = vim.o.eventignore
    vim.o.eventignore = ignore == "" and "FileType" or ignore .. ",FileType"
    pcall(vim.treesitter.stop, buf)
    vim.o.eventignore = ignore
  end
  if vim.bo[buf].syntax ~= "" then
    vim.bo[buf].syntax = ""
  end
end

--- The conversation's text is the plugin's alone: Insert (or Replace) mode carried into a
--- window of it — a click or a <Cmd> mapping while typing in another window — ends there.
--- Neovim 0.11 checks 'modifiable' in Insert mode only before the insert's first change, so
--- the keys typed after such a move changed this 'nomodifiable' buffer behind the turn's
--- extmarks: an <CR> pushed a tool's header line off the mark it is found by, and the tool's
--- next redraw failed.
---@param buf integer
function M.keep_insert_out(buf)
  api.nvim_create_autocmd({ "BufEnter", "WinEnter" }, {
    buffer = buf,
    desc = "minime: the conversation is read-only, no Insert mode in it",
    callback = function()
      local mode = api.nvim_get_mode().mode
      if mode:find("^[iR]") or mode:find("^ni[IRV]") then
        vim.cmd.stopinsert()
      end
    end,
  })
end

--- Create the buffer of a turn (or a new one if the user wiped it).
---@param t minime.turn.Turn
function M.make(t)
  local buf = window.scratch("turn", "hide")
  pcall(api.nvim_buf_set_name, buf, "minime://turn/" .. t.key)
  vim.b[buf].minime_key = t.key
  vim.b[buf].minime_thread = t.key
  -- 'filetype' without FileType: the float needs no ftplugin, and loading it with the regex
  -- syntax cost ~20 ms a turn (bench/load.py), a fresh buffer being made for each turn.
  local ignore = vim.o.eventignore
  vim.o.eventignore = ignore == "" and "FileType" or ignore .. ",FileType"
  vim.bo[buf].filetype = "markdown"
  vim.o.eventignore = ignore
  vim.bo[buf].modifiable = false
  M.keep_insert_out(buf)
  float.map_keys(buf, t.key)
  require("minime.ui.turn.blocks").map_keys(buf)
  t.buf, t.row, t.col, t.prev_col = buf, 0, 0, 0
  t.block, t.thinking, t.plan = nil, nil, nil
  t.regions, t.tools = {}, {}
  M.by_buf[buf] = t
  -- `:bd` in the panel unloads the conversation: its text is kept (for the next showing, as
  -- plain text) and the user told, never erased silently.
  api.nvim_create_autocmd("BufUnload", {
    buffer = buf,
    once = true,
    callback = function()
      if M.by_buf[buf] == t and vim.v.exiting == vim.NIL then
        t.unloaded = api.nvim_buf_get_lines(buf, 0, -1, false)
        require("minime.ui.say").say(
          "minime: the conversation is hidden, not erased (:MiniMeToggle shows it again)"
        )
      end
    end,
  })
  markdown.warm()
  M.highlight(t, false) -- the regex syntax FileType loaded, or a parser a FileType autocmd started
end

--- Forget a buffer the turn no longer uses.
---@param buf integer
function M.forget(buf)
  M.by_buf[buf] = nil
  edited(buf)
end

--- Put a fresh buffer in place of the conversation's (reset): Neovim 0.11 keeps a stopped
--- tree-sitter highlighter's callbacks, so stopping and restarting it on one buffer grew Neovim
--- by ~35 KB a time (bench/load.py: 13 → 48 MiB over 1,000 turns). A wiped buffer takes them
--- along; within a conversation the highlighter, once started, is never stopped.
---@param t minime.turn.Turn
function M.renew(t)
  local old, shown = t.buf, float.visible(t) and t.win or nil
  M.forget(old)
  M.make(t)
  -- The float shown and the panels of every tab page show the new one (wiping a buffer shown
  -- in another page's only window would close that page); any other window of it closes.
  for _, win in ipairs(vim.fn.win_findbuf(old)) do
    if win == shown or api.nvim_win_get_config(win).relative == "" then
      vim.wo[win].winfixbuf = false -- the conversation's own window ('winfixbuf': float.lua)
      api.nvim_win_set_buf(win, t.buf)
      float.adopt(t, win)
    end
  end
  pcall(api.nvim_buf_delete, old, { force = true })
  pcall(api.nvim_buf_set_name, t.buf, "minime://turn/" .. t.key)
  vim.bo[t.buf].modifiable = true -- apply() is mid-batch: it locks the buffer at the end
end

return M
