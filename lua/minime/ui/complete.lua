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

-- The source whose start() answered the last findstart call.
local current

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
        return start
      end
    end
    current = nil
    return -3 -- nothing to complete here: leave completion quietly
  end
  return current and current.items(base, cwd) or {}
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
