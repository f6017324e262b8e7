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

--- Close a window if it is still valid (never errors, e.g. for the last window).
---@param win integer?
function M.close(win)
  if win and api.nvim_win_is_valid(win) then
    pcall(api.nvim_win_close, win, true)
  end
end

--- Make a string safe for one buffer line: no newlines.
---@param s any
---@return string
function M.oneline(s)
  if s == nil or s == vim.NIL then
    return ""
  end
  return (tostring(s):gsub("\r?\n", " "))
end

return M
