--- The pending permission prompts: the one shown (at most one) and those waiting behind it, in
--- the order asked. Only minime.ui.permission changes it; the queries answer the host and the
--- conversation's title.
local str = require("minime.ui.permission_view").str

local M = {}

---@type minime.permission.Prompt?
M.shown = nil
---@type minime.permission.Prompt[]
M.waiting = {}

---@param p minime.permission.Prompt
function M.push(p)
  M.waiting[#M.waiting + 1] = p
end

--- The oldest waiting prompt, now the shown one (nil when none waits or one is shown).
---@return minime.permission.Prompt?
function M.show_next()
  if M.shown or #M.waiting == 0 then
    return nil
  end
  M.shown = table.remove(M.waiting, 1)
  return M.shown
end

--- Take the prompt of request `id` out: it and whether it was the shown one (nil if unknown).
---@return minime.permission.Prompt?, boolean
function M.remove(id)
  id = str(id)
  local shown = M.shown
  if shown and str(shown.req.id) == id then
    M.shown = nil
    return shown, true
  end
  for i, p in ipairs(M.waiting) do
    if str(p.req.id) == id then
      return table.remove(M.waiting, i), false
    end
  end
  return nil, false
end

--- Every pending prompt, the shown one first.
---@return minime.permission.Prompt[]
function M.all()
  local all = { M.shown }
  vim.list_extend(all, M.waiting)
  return all
end

--- Ids of the pending prompts, the shown one first.
---@return any[]
function M.ids()
  return vim.tbl_map(function(p)
    return p.req.id
  end, M.all())
end

--- Whether a prompt of a turn in `cwd` waits for an answer.
---@param cwd string
---@return boolean
function M.has_cwd(cwd)
  for _, p in ipairs(M.all()) do
    if str(p.req.cwd) == cwd then
      return true
    end
  end
  return false
end

return M
