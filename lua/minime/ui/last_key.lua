--- When the user last typed a key, in any mode: a permission prompt never takes focus right
--- after one. One assignment per key, from the plugin's first use on: the command line
--- reaching `:MiniMe` (minime.warm) or the host's first start, before which no prompt can come (not
--- at Neovim's start: start-up budget, bench/README.md).
local M = {}

local at = -math.huge

--- Milliseconds (hrtime) of the last key; -math.huge before any.
---@return number
function M.ms()
  return at
end

vim.on_key(function()
  at = vim.uv.hrtime() / 1e6
end, vim.api.nvim_create_namespace("minime.last_key"))

return M
