--- Your review, back to the agent (:h minime-feedback): a hunk rejected (:MiniMeReject) or a
--- comment kept on one (:MiniMeComment!) goes to the host as review feedback of the review's
--- thread, which sends it with that thread's next ask (rplugin/python3/minime/nvim/feedback.py).
--- Only files under the cwd that the deny list allows; none with `review = { feedback = false }`.
local config = require("minime.config")

local M = {}

--- Whether review feedback is on (`review.feedback`, default true).
local function on()
  local review = config.options.review
  return not (type(review) == "table" and review.feedback == false)
end

local function prefixed(lines, mark)
  return vim.tbl_map(function(line)
    return mark .. line
  end, lines)
end

--- The hunk as a unified diff: the baseline's lines (-) and the agent's (+), at their lines.
---@param rel string
---@param h minime.review.Hunk
---@param agent string[] the agent's lines (as written, or as the buffer holds them now)
---@return string
function M.diff(rel, h, agent)
  local row = require("minime.review.hunks").range(h) or 0
  local lines = {
    "--- a/" .. rel,
    "+++ b/" .. rel,
    ("@@ -%d,%d +%d,%d @@"):format(h.base_start + 1, #h.base, row + 1, #agent),
  }
  if h.kind == "created" then
    lines[1] = "--- /dev/null"
  elseif h.kind == "deleted" then
    lines[2] = "+++ /dev/null"
  end
  vim.list_extend(lines, prefixed(h.base, "-"))
  vim.list_extend(lines, prefixed(agent, "+"))
  return table.concat(lines, "\n") .. "\n"
end

--- Send one item about hunk `h` of the review `r`; false when it may not go (off, outside
--- the cwd, denied).
---@param r minime.review.Review
---@param h minime.review.Hunk
---@param kind "rejected"|"comment"
---@param text? string the comment
---@return boolean
function M.send(r, h, kind, text)
  if not on() or not r.thread then
    return false
  end
  local scope = require("minime.editor.scope").new({ cwd = r.cwd, deny = config.options.deny })
  local real, rel = scope:file(h.path)
  if not real or not rel then
    return false -- denied or outside: never named to the agent
  end
  local agent = h.agent
  if kind == "comment" and not h.kind then
    agent = require("minime.review.hunks").lines_now(h) or h.agent
  end
  local item = { kind = kind, path = rel, diff = M.diff(rel, h, agent), text = text or "" }
  local ok, err = pcall(require("minime.host").notify, "review_feedback", {
    thread = r.thread,
    cwd = r.cwd,
    items = { item },
  })
  if not ok then
    require("minime.ui.say").say("minime: " .. tostring(err), vim.log.levels.ERROR)
  end
  return ok
end

return M
