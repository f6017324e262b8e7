--- Whole files in a review: one the agent created (rejected: removed, after a confirmation)
--- or deleted (rejected: its baseline text written back). One quickfix entry each, no marks.
local api, uv = vim.api, vim.uv

local M = {}

local function say(text, level)
  require("minime.ui.say").say("minime: " .. text, level or vim.log.levels.INFO)
end

---@param kind "created"|"deleted"
---@param path string
---@param base string[] the baseline's lines ({} for a created file)
---@param buf? integer a created file's buffer
---@return minime.review.Hunk
function M.record(kind, path, base, buf)
  local agent = buf and api.nvim_buf_get_lines(buf, 0, -1, false) or {}
  return { kind = kind, path = path, buf = buf or -1, base = base, base_start = 0, agent = agent }
end

---@param h minime.review.Hunk
function M.summary(h)
  if h.kind == "created" then
    return ("created by the agent (+%d lines)"):format(#h.agent)
  end
  return ("deleted by the agent (-%d lines; :MiniMeReject here restores it)"):format(#h.base)
end

--- Whether the file is no longer as the review found it.
---@param h minime.review.Hunk
function M.changed(h)
  if h.kind == "deleted" then
    return uv.fs_stat(h.path) ~= nil
  end
  local buf = require("minime.editor.paths").loaded_buffer(h.path)
  if not uv.fs_stat(h.path) then
    return true
  end
  return buf ~= nil
    and (
      vim.bo[buf].modified or not vim.deep_equal(api.nvim_buf_get_lines(buf, 0, -1, false), h.agent)
    )
end

--- Put the baseline back: remove a created file (once the user confirms), write a deleted one.
---@param h minime.review.Hunk
---@param done fun() called once it is done (not when the user keeps the file)
function M.reject(h, done)
  local rel = vim.fn.fnamemodify(h.path, ":~:.")
  if h.kind == "deleted" then
    local buf = vim.fn.bufadd(h.path)
    vim.fn.bufload(buf)
    api.nvim_buf_set_lines(buf, 0, -1, false, h.base)
    local ok, err = pcall(api.nvim_buf_call, buf, function()
      vim.cmd("silent keepalt write")
    end)
    if not ok then
      return say("cannot restore " .. rel .. ": " .. tostring(err), vim.log.levels.WARN)
    end
    say("restored " .. rel)
    return done()
  end
  require("minime.ui.pick").select({ "Delete " .. rel, "Keep it" }, {
    prompt = ("Delete %s, which the agent created?"):format(rel),
    kind = "minime.confirm",
  }, function(_, i)
    if i ~= 1 then
      return
    end
    local buf = require("minime.editor.paths").loaded_buffer(h.path)
    local ok, err = uv.fs_unlink(h.path)
    if not ok then
      return say("cannot delete " .. rel .. ": " .. tostring(err), vim.log.levels.WARN)
    end
    if buf then
      pcall(api.nvim_buf_delete, buf, { force = true }) -- unmodified: M.changed said so
    end
    say("deleted " .. rel)
    done()
  end)
end

return M
