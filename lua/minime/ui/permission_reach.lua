--- What each of the agent's permission options reaches, in words its kind implies — and, for
--- an agent whose definition says more (`permission_reach` in lua/minime/agents/<name>.lua:
--- mm remembers "Always allow" per tool for the session), in its own words. Never a claim the
--- agent's definition or ACP does not make: ACP says only that an "always" option is
--- remembered, so for an agent that says no more it is "its own rule".
local M = {}

local function str(x)
  return type(x) == "string" and x or ""
end

--- Words for agents whose definition gives none: `label` names the agent.
local GENERIC = {
  allow_once = function()
    return "allow once"
  end,
  reject_once = function()
    return "reject once"
  end,
  allow_always = function(_, label)
    return ("%s will not ask again for this kind of request — its own rule"):format(label)
  end,
  reject_always = function(_, label)
    return ("%s will reject this kind of request without asking — its own rule"):format(label)
  end,
}

--- The `permission_reach` table of the definition named `req.agent`, if it has one.
---@param req table
---@return table?
local function own_words(req)
  local name = str(req.agent)
  if name == "" or name == "inline" then
    return nil
  end
  local ok, def = pcall(require("minime.agents").load, name)
  local reach = ok and type(def) == "table" and def.permission_reach
  return type(reach) == "table" and reach or nil
end

--- The words for option kind `kind` of request `req`, or nil for a kind ACP does not define.
---@param req table {agent?, agent_label?, title, ...}
---@param kind string
---@param own? table the definition's words (own_words(req)), looked up once per float
---@return string?
function M.words(req, kind, own)
  local fn = own and own[kind]
  if type(fn) == "function" then
    local ok, words = pcall(fn, req)
    if ok and type(words) == "string" then
      return words
    end
  elseif type(fn) == "string" then
    return fn
  end
  local generic = GENERIC[kind]
  local label = str(req.agent_label) ~= "" and req.agent_label or "the agent"
  return generic and generic(req, label)
end

M.own_words = own_words

return M
