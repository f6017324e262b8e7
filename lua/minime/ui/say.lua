--- Every message the plugin gives the user goes through `say`: one line that fits the command
--- line, so none is a hit-enter prompt (at 80x24 a path or a tool title made most of them one).
--- The whole text is kept for :MiniMeLog ("# messages"). Shortened only with a UI attached: a
--- headless Neovim (a script) has no screen to fit and gets the text whole. Messages quote the
--- agent (its name, modes, options, errors): each is made printable first (ui/printable).
local M = {}

--- The last messages, whole (for :MiniMeLog).
---@type string[]
M.history = {}
local KEEP = 200

--- `text` on one line, cut to `width` display cells with "…".
---@param text string
---@param width integer
---@return string
function M.fit(text, width)
  local line = text:gsub("%s*\n%s*", " ")
  if vim.fn.strdisplaywidth(line) <= width then
    return line
  end
  local n = vim.fn.strchars(line)
  local cut = math.max(width - 1, 1)
  while cut > 1 and vim.fn.strdisplaywidth(vim.fn.strcharpart(line, 0, cut)) > width - 1 do
    cut = cut - 1
  end
  return vim.fn.strcharpart(line, 0, math.min(cut, n)) .. "…"
end

-- The last message said, as shown, while it may still be on the command line.
---@type string?
local shown = nil

--- Clear the command line if it still shows `text` (said by `say`, nothing said since): a
--- "permission asked" once the prompt is answered.
---@param text string
function M.withdraw(text)
  if shown ~= nil and shown == text and #vim.api.nvim_list_uis() > 0 then
    shown = nil
    vim.api.nvim_echo({ { "" } }, false, {})
  end
end

--- Tell the user `text` (level: a vim.log.levels value). Returns the text as shown.
---@param text string
---@param level? integer
---@return string
function M.say(text, level)
  text = require("minime.ui.printable").text(tostring(text))
  M.history[#M.history + 1] = text
  if #M.history > KEEP then
    table.remove(M.history, 1)
  end
  if #vim.api.nvim_list_uis() > 0 then
    -- Right after a prompt (vim.ui.select's inputlist: :MiniMeReject's "Delete …?") the
    -- message would scroll below it into a hit-enter prompt: the screen is redrawn first.
    pcall(vim.cmd.redraw)
    -- v:echospace: the columns a message has without scrolling (showcmd, ruler excluded).
    text = M.fit(text, math.max(vim.v.echospace, 20))
  end
  shown = text
  vim.notify(text, level or vim.log.levels.INFO)
  return text
end

return M
