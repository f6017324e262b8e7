--- The completion of the input float and of :MiniMeAsk's command line: one entry point each,
--- asking its sources in turn (the agent's slash commands: minime.ui.complete_commands; `@`
--- mentions: minime.ui.complete_mentions). A
--- source is a table with
---   start(line, col, cwd) -> integer|nil   the 0-based column its word starts at, or nil
---   items(base, cwd) -> table[]            complete-items for the word typed so far
---   cmdline(lead, line, pos, cwd) -> string[]|nil   :MiniMeAsk's matches, or nil
--- The input buffer's 'omnifunc' and 'completefunc' are M.func, so built-in completion
--- (<C-x><C-o>, <C-x><C-u>), blink.cmp and nvim-cmp (their omni sources) all reach them.
local M = {}

M.sources = { "minime.ui.complete_commands", "minime.ui.complete_mentions" }

-- The source whose start() answered the last findstart call, and the screen column its word
-- starts at (where the menu opens).
local current, start_col

--- `text` cut at its start to `room` display cells: whole path components dropped first
--- ("…/nvim/agent_pool.py"), characters only when its last component alone is too long.
---@param text string
---@param room integer
---@return string
local function cut_start(text, room)
  local width = vim.fn.strdisplaywidth
  if width(text) <= room then
    return text
  end
  local from = 1
  while true do
    local slash = text:find("/", from, true)
    if not slash or slash == #text then
      break
    end
    local tail = text:sub(slash + 1)
    if width(tail) + 2 <= room then
      return "…/" .. tail
    end
    from = slash + 1
  end
  local n = vim.fn.strchars(text)
  local keep = room - 1
  while keep > 1 and width(vim.fn.strcharpart(text, n - keep)) > room - 1 do
    keep = keep - 1
  end
  return "…" .. vim.fn.strcharpart(text, n - keep)
end

--- The items shown in the columns right of `col`: Neovim's menu was cut at the screen's right
--- edge, where long paths all read alike (`rplugin/python3/minime/`). Where they do not fit,
--- the `menu` column ([file], [dir]) goes first, then each `abbr` is cut at its start; the
--- `word` inserted stays whole.
---@param items table[]
---@param col integer the screen column (1-based) the menu starts at
---@return table[]
function M.fit(items, col)
  local width = vim.fn.strdisplaywidth
  local menu, widest = 0, 0
  for _, item in ipairs(items) do
    menu = math.max(menu, width(item.menu or ""))
    widest = math.max(widest, width(item.abbr or item.word))
  end
  -- The menu's padding: a space before the text, one before `menu`, the scrollbar.
  local room = vim.o.columns - col - 3
  if widest + (menu > 0 and menu + 1 or 0) > room then
    for _, item in ipairs(items) do
      item.menu = nil
    end
  elseif menu > 0 then
    room = room - menu - 1
  end
  room = math.max(room, 12)
  for _, item in ipairs(items) do
    item.abbr = cut_start(item.abbr or item.word, room)
  end
  return items
end

local function cwd_of(buf)
  local cwd = vim.b[buf].minime_cwd
  return type(cwd) == "string" and cwd or vim.fn.getcwd()
end

--- 'omnifunc' / 'completefunc' of the input buffer (:h complete-functions).
---@param findstart integer
---@param base string
function M.func(findstart, base)
  local buf = vim.api.nvim_get_current_buf()
  local cwd = cwd_of(buf)
  if findstart == 1 then
    local row, col = unpack(vim.api.nvim_win_get_cursor(0))
    local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
    for _, name in ipairs(M.sources) do
      local source = require(name)
      local start = source.start(line:sub(1, col), row, cwd)
      if start then
        current = source
        start_col = vim.fn.screenpos(0, row, start + 1).col
        return start
      end
    end
    current = nil
    return -3 -- nothing to complete here: leave completion quietly
  end
  if not current then
    return {}
  end
  local items = current.items(base, cwd)
  -- Paths (mentions) are cut to fit; a command keeps its description, Neovim's menu cuts it.
  local paths = current == package.loaded["minime.ui.complete_mentions"]
  return paths and start_col and start_col > 0 and M.fit(items, start_col) or items
end

--- :MiniMeAsk's -complete=customlist function.
function M.cmdline(lead, line, pos)
  local cwd = vim.fn.getcwd()
  for _, name in ipairs(M.sources) do
    local found = require(name).cmdline(lead, line, pos, cwd)
    if found then
      return found
    end
  end
  return {}
end

--- Set the completion of an input buffer for an ask in `cwd`.
---@param buf integer
---@param cwd? string
function M.attach(buf, cwd)
  vim.b[buf].minime_cwd = cwd or vim.fn.getcwd()
  if cwd then -- the cwd's file list, ready by the first `@` (git's index, off the main loop)
    pcall(require("minime.ui.complete_mentions").prefetch, cwd)
  end
  vim.bo[buf].omnifunc = "v:lua.require'minime.ui.complete'.func"
  vim.bo[buf].completefunc = "v:lua.require'minime.ui.complete'.func"
end

return M
