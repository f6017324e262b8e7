--- The selection each ask was made with, kept in Lua where it is born (`:'<,'>MiniMeAsk`). The
--- host decides which ask a turn runs and says so (`accept`), so an ask refused while a turn
--- runs changes nothing the running turn's tools see, and an ask queued behind it keeps its own
--- selection until its turn starts. Per thread: two threads of one cwd each see their own.
local M = {}

local born = {} -- ask id -> { selection = table|nil, thread = string }, until accepted or superseded
local running = {} -- thread id -> { selection = table|nil }
local last_id = 0

--- Remember the selection of a new ask; its id goes with the ask to the host.
---@param selection table|nil
---@param thread string the ask's thread
---@return integer
function M.new(selection, thread)
  last_id = last_id + 1
  born[last_id] = { selection = selection, thread = thread }
  return last_id
end

--- The host started a turn for ask `id` in `thread`: its tools see that ask's selection from
--- now. Older asks of that thread not accepted by now never will be (the host takes a thread's
--- asks in order: those were refused or dropped), so they are forgotten; other threads' wait on.
function M.accept(thread, id)
  running[thread] = born[id] or {}
  for known, ask in pairs(born) do
    if known <= id and (ask.thread == thread or known == id) then
      born[known] = nil
    end
  end
end

--- The selection of the turn running in `thread`, or nil.
---@param thread? string
function M.selection(thread)
  local ask = thread and running[thread]
  return ask and ask.selection or nil
end

return M
