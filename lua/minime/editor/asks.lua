--- The selection each ask was made with, kept in Lua where it is born (`:'<,'>MiniMeAsk`). The
--- host decides which ask a turn runs and says so (`accept`), so an ask refused while a turn
--- runs changes nothing the running turn's tools see, and an ask queued behind it keeps its own
--- selection until its turn starts.
local M = {}

local born = {} -- ask id -> { selection = table|nil, cwd = string }, until accepted or superseded
local running = {} -- cwd (as the host keys it) -> { selection = table|nil }
local last_id = 0

--- Remember the selection of a new ask; its id goes with the ask to the host.
---@param selection table|nil
---@param cwd string the ask's cwd
---@return integer
function M.new(selection, cwd)
  last_id = last_id + 1
  born[last_id] = { selection = selection, cwd = vim.uv.fs_realpath(cwd) or cwd }
  return last_id
end

--- The host started a turn for ask `id` in `cwd`: its tools see that ask's selection from now.
--- Older asks of that cwd not accepted by now never will be (the host takes a cwd's asks in
--- order: those were refused or dropped), so they are forgotten; other cwds' wait on.
function M.accept(cwd, id)
  running[cwd] = born[id] or {}
  for known, ask in pairs(born) do
    if known <= id and (ask.cwd == cwd or known == id) then
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
