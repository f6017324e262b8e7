--- The pending asks of one kind (permission prompts, questions): the one shown (at most one)
--- and those waiting behind it, in the order asked. Only minime.ui.ask changes it; the
--- queries answer the host, the statusline and the conversation's title.
local M = {}

local function str(x)
  return type(x) == "string" and x or (x == nil or x == vim.NIL) and "" or tostring(x)
end

---@class minime.ask.Queue
---@field shown? minime.ask.Ask
---@field waiting minime.ask.Ask[]
local Queue = {}
Queue.__index = Queue

---@return minime.ask.Queue
function M.new()
  return setmetatable({ shown = nil, waiting = {} }, Queue)
end

---@param p minime.ask.Ask
function Queue:push(p)
  self.waiting[#self.waiting + 1] = p
end

--- The oldest waiting ask, now the shown one (nil when none waits or one is shown).
---@return minime.ask.Ask?
function Queue:show_next()
  if self.shown or #self.waiting == 0 then
    return nil
  end
  self.shown = table.remove(self.waiting, 1)
  return self.shown
end

--- Take the ask of request `id` out: it and whether it was the shown one (nil if unknown).
---@return minime.ask.Ask?, boolean
function Queue:remove(id)
  id = str(id)
  local shown = self.shown
  if shown and str(shown.req.id) == id then
    self.shown = nil
    return shown, true
  end
  for i, p in ipairs(self.waiting) do
    if str(p.req.id) == id then
      return table.remove(self.waiting, i), false
    end
  end
  return nil, false
end

--- Every pending ask, the shown one first.
---@return minime.ask.Ask[]
function Queue:all()
  local all = { self.shown }
  vim.list_extend(all, self.waiting)
  return all
end

--- Ids of the pending asks, the shown one first.
---@return any[]
function Queue:ids()
  return vim.tbl_map(function(p)
    return p.req.id
  end, self:all())
end

--- Whether an ask of the conversation `key` (its thread; a request that names none: its cwd)
--- waits for an answer.
---@param key string
---@return boolean
function Queue:has_thread(key)
  for _, p in ipairs(self:all()) do
    local thread = p.req.thread
    if str((thread ~= nil and thread ~= vim.NIL) and thread or p.req.cwd) == key then
      return true
    end
  end
  return false
end

return M
