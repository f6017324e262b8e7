--- When the user last typed a key, in any mode: a permission prompt never takes focus right
--- after one. Started from plugin/minime.lua, so the first prompt knows too; one assignment
--- per key.
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
