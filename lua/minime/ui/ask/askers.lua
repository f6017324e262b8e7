--- Every asker (one per body: permission prompts, questions) and what is asked of all of
--- them at once: the host's end closes every pending ask, a conversation's title says what it
--- waits for. `surface` gives each body's module the same public functions, stated once.
local M = {}

---@type minime.ask.Asker[] in the order made
local askers = {}

--- A new asker (minime.ui.ask.new).
---@param a minime.ask.Asker
function M.add(a)
  askers[#askers + 1] = a
end

--- Every asker made (permission prompts, then questions: the order their bodies loaded).
---@return minime.ask.Asker[]
function M.all()
  return askers
end

--- What conversation `key` (its thread) waits for, in words ("waiting for permission"), or
--- nil when no ask of it is pending.
---@param key string
---@return string?
function M.waiting_for(key)
  for _, a in ipairs(askers) do
    if a:waiting(key) then
      return a.spec.words.waiting
    end
  end
  return nil
end

--- Put asker `a`'s public functions on a body's module `mod` (ui/permission.lua and
--- ui/elicitation.lua answer the same calls the same way): open(req, on_answer), close(id),
--- pending(), waiting(key), win(), live(), focus(), errors.
---@param a minime.ask.Asker
---@param mod table
---@return table mod
function M.surface(a, mod)
  mod.errors = a.errors
  for _, name in ipairs({ "open", "close", "pending", "waiting", "win", "live", "focus" }) do
    mod[name] = function(...)
      return a[name](a, ...)
    end
  end
  return mod
end

return M
