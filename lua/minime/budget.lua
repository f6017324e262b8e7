--- Budgets (:h minime-budget): the `budget` option checked, each thread's budget as the host
--- last said it (rplugin/python3/minime/nvim/budgets.py enforces it: calls update()), its piece
--- of the statusline and the footer ("$1.62/$2.00"), and :MiniMeBudget.
local M = {}

---@class minime.budget.State events.BudgetState (rplugin/python3/minime/nvim/events.py)
---@field shown string "$1.62/$2.00 · 53k/100k tokens"
---@field state string ok|warned|reached
---@field agent string
---@field cost? boolean it counts the cost
---@field unenforced? string why part of it cannot be enforced for this agent

---@type table<string, minime.budget.State> thread id -> its budget
local states = {}

--- The budget an agent runs with: its definition's `budget`, else setup's; checked (a
--- problem is added to `problems`, and that budget is none).
---@param own any the definition's
---@param setup any setup's
---@param problems table[]
---@return {cost?: number, tokens?: integer}?
function M.resolve(own, setup, problems)
  local budget = own ~= nil and own or setup
  if budget == nil then
    return nil
  end
  local function bad(why)
    problems[#problems + 1] = {
      message = why .. " (:h minime-budget)",
      fix = { "budget = { cost = 2.00 } (the agent's currency), { tokens = 200000 }, or both" },
    }
  end
  if type(budget) ~= "table" then
    return bad(("budget must be a table, got %s"):format(type(budget)))
  end
  local out = {}
  for key, value in pairs(budget) do
    if key ~= "cost" and key ~= "tokens" then
      return bad(("budget has no field %s: only cost and tokens"):format(vim.inspect(key)))
    elseif type(value) ~= "number" or value <= 0 or value ~= value or value == math.huge then
      return bad(("budget.%s must be a positive number, got %s"):format(key, vim.inspect(value)))
    end
    out[key] = key == "tokens" and math.floor(value) or value
  end
  return next(out) and out or nil
end

--- Called by the host: thread `id`'s budget (nil: it has none).
---@param id string
---@param state? minime.budget.State
function M.update(id, state)
  if type(state) == "table" then
    state.state = state.state or "ok" -- fields at their default are not sent
  end
  states[id] = type(state) == "table" and state or nil
  require("minime.modes").restate(id)
end

--- The budget of `key` (a thread id, or a cwd: its current thread), or nil.
---@param key string
---@return minime.budget.State?
function M.get(key)
  return require("minime.threads").pick(states, key)
end

--- Every thread's budget (for :checkhealth).
---@return table<string, minime.budget.State>
function M.all()
  return states
end

--- What the statusline and the footer show of `key`'s session: the context and the cost as
--- the agent said them, the cost as spent of the budget when there is one ("53k/200k ·
--- $1.62/$2.00"), or nil. Printable (agent text: the currency).
---@param key string
---@return string?
function M.usage(key)
  local modes = package.loaded["minime.modes"]
  local budget = M.get(key)
  local usage = modes and modes.usage(key, budget ~= nil and budget.cost == true)
  if not budget then
    return usage
  end
  local shown = require("minime.ui.printable").line(budget.shown, 60)
  if budget.state == "reached" then
    shown = shown .. " reached"
  end
  return usage and (usage .. " · " .. shown) or shown
end

--- :MiniMeBudget [amount]: raise (or set) the current thread's budget; none: say it.
---@param amount? string
function M.command(amount)
  local threads = require("minime.threads")
  local id = threads.here() or threads.ensure()
  local ok, err = pcall(require("minime.host").notify, "budget", {
    thread = id,
    cwd = threads.cwd_of(id),
    amount = amount or "",
  })
  if not ok then
    require("minime.ui.say").say("minime: " .. tostring(err), vim.log.levels.ERROR)
  end
end

return M
