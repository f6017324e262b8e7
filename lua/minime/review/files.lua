--- Whole files in a review: one the agent created (rejected: removed, after a confirmation),
--- deleted (rejected: its baseline text written back), or changed before the turn named it
--- with no baseline known (`unsure`: nothing to put back). One quickfix entry each, no marks.
---
--- The path is checked when it is written or unlinked, not before a question waits for the
--- user: a directory swapped for a link out of the cwd meanwhile must not lead the unlink (or
--- the write) there. A file is restored through editor/file_writer.lua: created O_EXCL, never
--- through a symlink, the open file checked to be the path meant.
local api, uv = vim.api, vim.uv

local M = {}

local function say(text, level)
  require("minime.ui.say").say("minime: " .. text, level or vim.log.levels.INFO)
end

---@param kind "created"|"deleted"|"unsure"
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
  elseif h.kind == "unsure" then
    return "changed during the turn before the agent named it: no baseline to compare with"
  end
  return ("deleted by the agent (-%d lines; :MiniMeReject here restores it)"):format(#h.base)
end

--- Whether the file is no longer as the review found it.
---@param h minime.review.Hunk
function M.changed(h)
  if h.kind == "unsure" then
    return false
  elseif h.kind == "deleted" then
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

--- Why `path` (a real path the review found) is not the regular file it was, or (`absent`)
--- not a free name in the directory it was in: a directory on the way became a link, the file
--- a link, a FIFO, a directory. nil when it still is. Checked at the write or unlink.
---@param path string
---@param absent? boolean the file is to be created
---@return string?
function M.moved(path, absent)
  local dir = vim.fs.dirname(path)
  if uv.fs_realpath(dir) ~= dir then
    return "its directory is no longer where it was (a link?)"
  end
  local st = uv.fs_lstat(path)
  if absent and st then
    return "something is there again"
  elseif not absent and (not st or st.type ~= "file") then
    return st and ("it is now a %s"):format(st.type) or "it is gone"
  end
  return nil
end

--- Write the baseline of a deleted file back (a new file only, see the header).
local function restore(h, rel)
  local problem = M.moved(h.path, true)
    or require("minime.editor.file_writer").write(h.path, table.concat(h.base, "\n") .. "\n")
  if problem then
    return say(("cannot restore %s: %s"):format(rel, problem), vim.log.levels.WARN)
  end
  local buf = require("minime.editor.paths").loaded_buffer(h.path)
  if buf and not vim.bo[buf].modified then
    pcall(api.nvim_buf_call, buf, function()
      vim.cmd("silent edit!")
    end)
  end
  return true
end

--- Put the baseline back: remove a created file (once the user confirms), write a deleted one.
---@param h minime.review.Hunk
---@param done fun(said: string) called once it is done (not when the user keeps the file),
--- with what it did in words
function M.reject(h, done)
  local rel = vim.fn.fnamemodify(h.path, ":~:.")
  if h.kind == "unsure" then
    return say(
      ("no baseline of %s is known: nothing to put back (:MiniMeAccept drops it)"):format(rel),
      vim.log.levels.WARN
    )
  elseif h.kind == "deleted" then
    return restore(h, rel) and done("restored " .. rel)
  end
  require("minime.ui.pick").select({ "Delete " .. rel, "Keep it" }, {
    prompt = ("Delete %s, which the agent created?"):format(rel),
    kind = "minime.confirm",
  }, function(_, i)
    if i ~= 1 then
      return
    end
    -- Now, after the question: what it asked about may have been swapped meanwhile.
    local problem = M.changed(h) and "it changed since the review found it" or M.moved(h.path)
    if problem then
      return say(("not deleted %s: %s"):format(rel, problem), vim.log.levels.WARN)
    end
    local buf = require("minime.editor.paths").loaded_buffer(h.path)
    local ok, err = uv.fs_unlink(h.path)
    if not ok then
      return say("cannot delete " .. rel .. ": " .. tostring(err), vim.log.levels.WARN)
    end
    if buf then -- unmodified (M.changed said so); its windows stay, showing another buffer
      require("minime.ui.window").delete_buffer(buf)
    end
    done("deleted " .. rel)
  end)
end

return M
