--- :checkhealth minime, the budget's part (:h minime-budget): the budget the configured agent
--- runs with, and for each thread whose budget the host enforces, whether this agent sends what
--- it counts (known once one of its turns ended: lua/minime/budget.lua keeps what the host said).
local M = {}

local h = vim.health

--- "$2.00 and 200000 tokens" (the currency is the agent's: said as a plain amount).
local function limits(budget)
  local parts = {}
  if budget.cost then
    parts[#parts + 1] = ("%.2f (cost, in the agent's currency)"):format(budget.cost)
  end
  if budget.tokens then
    parts[#parts + 1] = ("%d tokens"):format(budget.tokens)
  end
  return table.concat(parts, " and ")
end

---@param agent? minime.ResolvedAgent the configured agent, as resolved (nil: it could not be)
function M.check(agent)
  h.start("minime: budget")
  local budget = agent and agent.budget
  if budget then
    h.ok(("%s: %s per thread"):format(agent.label, limits(budget)))
  else
    h.info("no budget: setup{ budget = { cost = 2.00 } } (or a definition's `budget`) sets one")
  end
  local line = require("minime.ui.printable").line
  local known = false
  for _, state in pairs(require("minime.budget").all()) do
    if state.known then
      known = true
      local who = line(state.agent ~= "" and state.agent or "agent", 60)
      if state.unenforced then
        h.warn(line(state.unenforced, 300), {
          "a budget this agent reports nothing for is not enforced: use the other kind, or none",
        })
      else
        h.ok(("%s: enforced (%s)"):format(who, line(state.shown, 80)))
      end
    end
  end
  if budget and not known then
    h.info("whether the agent sends its cost (or token figures) is known after its first turn")
  end
end

return M
