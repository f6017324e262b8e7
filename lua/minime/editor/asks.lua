--- The selection each ask was made with, kept in Lua where it is born (`:'<,'>MiniMeAsk`). The
--- host decides which ask a turn runs and says so (`accept`), so an ask refused while a turn
--- runs changes nothing the running turn's tools see.
local M = {}

local born = {} -- ask id -> { selection = table|nil }, until accepted or superseded
local running = {} -- cwd (as the host keys it) -> { selection = table|nil }
local last_id = 0

--- Remember the selection of a new ask; its id goes with the ask to the host.
---@param selection table|nil
---@return integer
function M.new(selection)
  last_id = last_id + 1
  born[last_id] = { selection = selection }
  return last_id
end

--- The host started a turn for ask `id` in `cwd`: its tools see that ask's selection from now.
--- Older asks not accepted by now never will be (refused): they are dropped.
function M.accept(cwd, id)
  running[cwd] = born[id] or {}
  for known in pairs(born) do
    if known <= id then
      born[known] = nil
    end
  end
end

--- The selection of the turn running in `cwd`, or nil.
function M.selection(cwd)
  local ask = running[cwd]
  return ask and ask.selection or nil
end

return M
