--- Every vim.ui.select and vim.ui.input of the plugin goes through here: the prompt and each
--- item as `format_item` shows it are made printable (minime.ui.printable). What a picker does
--- with them is the user's choice: fzf-lua hands items to a terminal program, the default
--- select prints them on the message line; an agent's ESC, newline or 3,000-character mode
--- name in them reached the screen as it was.
local printable = require("minime.ui.printable")

local M = {}

--- Characters of a prompt and of an item, at most.
M.PROMPT = 200
M.ITEM = 300

--- vim.ui.select(items, opts, on_choice), its prompt and items printable.
---@param items any[]
---@param opts table vim.ui.select's options
---@param on_choice fun(item: any?, idx: integer?)
function M.select(items, opts, on_choice)
  local format = opts.format_item or tostring
  local shown = vim.tbl_extend("force", opts, {
    prompt = opts.prompt and printable.line(opts.prompt, M.PROMPT),
    format_item = function(item)
      return printable.line(format(item), M.ITEM)
    end,
  })
  vim.ui.select(items, shown, on_choice)
end

--- vim.ui.input(opts, on_confirm), its prompt printable (its default is the text to edit,
--- shown where the user types: left as it is).
---@param opts table vim.ui.input's options
---@param on_confirm fun(text: string?)
function M.input(opts, on_confirm)
  local shown = vim.tbl_extend("force", opts, {
    prompt = opts.prompt and printable.line(opts.prompt, M.PROMPT),
  })
  vim.ui.input(shown, on_confirm)
end

return M
