--- :MiniMeReview, :MiniMeAccept, :MiniMeReject: what the agent changed in the current
--- thread's last turn (or the whole session), hunk by hunk, whatever wrote it.
---
--- The files and their hunks against the turn's baseline (minime.review.baseline): found by
--- minime.review.compare, drawn in their buffers (minime.review.hunks); the quickfix list holds
--- one entry per hunk. Accepting a hunk makes its text the baseline of the review; rejecting it
--- puts the baseline's text back through the buffer (a whole file: minime.review.files).
local baseline = require("minime.review.baseline")
local compare = require("minime.review.compare")
local files = require("minime.review.files")
local hunks = require("minime.review.hunks")
local keys = require("minime.review.keys")

local api = vim.api

local M = {}

---@type minime.review.Review?
M.current = nil

local function say(text, level)
  require("minime.ui.say").say("minime: " .. text, level or vim.log.levels.INFO)
end

local function cwd_now()
  return require("minime.editor.paths").realpath(vim.fn.getcwd()) or vim.fn.getcwd()
end

---@param h minime.review.Hunk
local function summary(h)
  if h.kind then
    return files.summary(h)
  end
  local added, removed = #h.agent, #h.base
  local first = h.agent[1] or h.base[1] or ""
  first = vim.trim(first):sub(1, 60)
  return ("+%d -%d %s"):format(added, removed, first)
end

local function sorted(list)
  table.sort(list, function(a, b)
    if a.path ~= b.path then
      return a.path < b.path
    end
    return (hunks.range(a) or 0) < (hunks.range(b) or 0)
  end)
  return list
end

local function items(r)
  local out = {}
  for _, h in ipairs(sorted(r.hunks)) do
    local row = hunks.range(h)
    local where = h.kind and { filename = h.path } or { bufnr = h.buf }
    out[#out + 1] =
      vim.tbl_extend("force", where, { lnum = (row or 0) + 1, col = 1, text = summary(h) })
  end
  return out
end

--- The quickfix list follows the review (only while it is still ours).
local function refresh_qf(r)
  if r.qf and vim.fn.getqflist({ id = r.qf }).id == r.qf then
    vim.fn.setqflist({}, "r", { id = r.qf, items = items(r), title = r.title })
  end
end

local function drop(r, h)
  hunks.undraw(h)
  for i, x in ipairs(r.hunks) do
    if x == h then
      table.remove(r.hunks, i)
      break
    end
  end
  for _, x in ipairs(r.hunks) do
    if x.buf == h.buf then
      return refresh_qf(r)
    end
  end
  keys.unmap(h.buf)
  refresh_qf(r)
end

local function clear()
  local r = M.current
  if r then
    for _, h in ipairs(r.hunks) do
      hunks.undraw(h)
      keys.unmap(h.buf)
    end
  end
  M.current = nil
end

--- The review of `paths` (compare.lua found them) shown: its quickfix list, its notes said.
local function show(r, notes)
  clear()
  M.current = r
  for _, note in ipairs(notes) do
    say(note, vim.log.levels.WARN)
  end
  if #r.hunks == 0 then
    return say("nothing to review in " .. vim.fn.fnamemodify(r.cwd, ":~"))
  end
  for _, h in ipairs(r.hunks) do
    if not h.kind then
      keys.map(h.buf)
    end
  end
  vim.fn.setqflist({}, " ", { title = r.title, items = items(r) })
  r.qf = vim.fn.getqflist({ id = 0 }).id
  vim.cmd("silent cfirst")
end

--- :MiniMeReview [all]: the current thread's conversation (minime.threads.here).
---@param scope? string "all": the whole session; else the last turn
function M.review(scope)
  local cwd = cwd_now()
  local threads = require("minime.threads")
  local key = threads.here()
  cwd = key and threads.cwd_of(key) or cwd
  local session = key and baseline.sessions[key]
  if not session or #session.turns == 0 then
    return say("nothing to review: no turn in " .. vim.fn.fnamemodify(cwd, ":~"))
  end
  local all = scope == "all"
  local turns = all and session.turns or { session.turns[#session.turns] }
  local first = turns[1]
  if first.pending then
    return say("the turn's baseline is still being recorded: :MiniMeReview again in a moment")
  end
  local last = session.turns[#session.turns]
  local title = ("minime review: %s, %s"):format(
    first.agent ~= "" and first.agent or "agent",
    all and ("turns 1-" .. last.n) or ("turn " .. last.n)
  )
  clear()
  compare.review(session.cwd, turns, title, function(r, notes)
    r.thread = key -- its feedback goes to that thread (minime.feedback.review)
    show(r, notes)
  end)
end

local function hunks_here(bang)
  local r = M.current
  if not r or #r.hunks == 0 then
    say("nothing to review")
    return nil
  end
  local buf = api.nvim_get_current_buf()
  if bang then
    local list = vim.tbl_filter(function(h)
      return h.buf == buf and not h.kind
    end, r.hunks)
    if #list == 0 then
      list = { hunks.at(r.hunks, buf, 1) }
    end
    if #list == 0 then
      say("no hunk of the review in this buffer")
      return nil
    end
    return r, list
  end
  local h = hunks.at(r.hunks, buf, vim.fn.line("."))
  if not h then
    say("no hunk of the review under the cursor (]h goes to the next)")
    return nil
  end
  return r, { h }
end

--- The hunk's text becomes the file's baseline in the review's first turn: a later
--- :MiniMeReview does not show it again.
---@param r minime.review.Review
---@param h minime.review.Hunk
local function keep(r, h)
  if h.kind == "unsure" then
    r.turns[1].texts[h.path] = baseline.current(h.path) or nil
    return
  elseif h.kind then
    r.turns[1].texts[h.path] = h.kind == "created" and vim.deepcopy(h.agent) or false
    return
  end
  local base = r.base[h.path]
  local kept = vim.list_slice(base, 1, h.base_start)
  vim.list_extend(kept, h.agent)
  vim.list_extend(kept, base, h.base_start + #h.base + 1)
  for _, x in ipairs(r.hunks) do
    if x.path == h.path and x.base_start > h.base_start then
      x.base_start = x.base_start + #h.agent - #h.base
    end
  end
  r.base[h.path] = kept
  r.turns[1].texts[h.path] = vim.deepcopy(kept)
end

--- What an accept or reject did, in words: "the hunk at a.txt:3", "3 hunks of a.txt".
---@param list minime.review.Hunk[]
local function which(list)
  local rel = vim.fn.fnamemodify(list[1].path, ":~:.")
  if #list > 1 then
    return ("%d hunks of %s"):format(#list, rel)
  elseif list[1].kind then
    return rel
  end
  return ("the hunk at %s:%d"):format(rel, (hunks.range(list[1]) or 0) + 1)
end

--- How much of the review is left, for the end of that one line.
---@param r minime.review.Review
local function left(r)
  local n = #r.hunks
  return n == 0 and "nothing left to review" or ("%d left to review"):format(n)
end

--- :MiniMeAccept[!]: keep the hunk under the cursor (!: every hunk of the file).
function M.accept(bang)
  local r, list = hunks_here(bang)
  if not r or not list then
    return
  end
  local what = which(list)
  for _, h in ipairs(list) do
    keep(r, h)
    drop(r, h)
  end
  say(("kept %s (%s)"):format(what, left(r)))
end

local function on_disk(buf)
  return baseline.disk(api.nvim_buf_get_name(buf))
end

--- :MiniMeReject[!]: put the baseline's text of the hunk under the cursor back (!: every hunk
--- of the file), one undo step each; saved when the buffer holds no other unsaved edits.
function M.reject(bang)
  local r, list = hunks_here(bang)
  if not r or not list then
    return
  end
  local buf = list[1].buf
  for _, h in ipairs(list) do
    if h.kind and hunks.changed(h) then
      return say(
        ("%s changed since the review found it %s: not touched (:MiniMeAccept keeps it)"):format(
          vim.fn.fnamemodify(h.path, ":~:."),
          h.kind
        ),
        vim.log.levels.WARN
      )
    elseif h.kind then
      return files.reject(h, function(done)
        require("minime.feedback.review").send(r, h, "rejected")
        drop(r, h)
        say(("%s (%s)"):format(done, left(r)))
      end)
    elseif hunks.changed(h) then
      local row = hunks.range(h)
      return say(
        (
          "the hunk at line %d was changed after the agent wrote it: not reverted"
          .. " (:MiniMeAccept keeps it as it is)"
        ):format((row or 0) + 1),
        vim.log.levels.WARN
      )
    end
  end
  -- Saved only when the buffer held what the disk holds (no other unsaved edits, and nothing
  -- written to the file since it was read): then `write!` cannot lose anything, and never asks.
  local disk = on_disk(buf)
  local in_step = vim.deep_equal(disk, api.nvim_buf_get_lines(buf, 0, -1, false))
  local what = which(list)
  -- Bottom up: a restored hunk never moves the rows of those still to restore.
  table.sort(list, function(a, b)
    return (hunks.range(a) or 0) > (hunks.range(b) or 0)
  end)
  for _, h in ipairs(list) do
    hunks.restore(h)
    require("minime.feedback.review").send(r, h, "rejected") -- the agent hears of it next ask
    drop(r, h)
  end
  if in_step or vim.deep_equal(disk, api.nvim_buf_get_lines(buf, 0, -1, false)) then
    -- Checked at the write: the file may have become a link (out of the cwd) since.
    local moved = files.moved(list[1].path)
    local ok, err = moved == nil, moved
    if ok then
      ok, err = pcall(api.nvim_buf_call, buf, function()
        vim.cmd("silent keepalt write!")
      end)
    end
    if not ok then
      say(("reverted %s, not saved: %s"):format(what, tostring(err)), vim.log.levels.WARN)
    else
      say(("reverted %s and saved (%s)"):format(what, left(r)))
    end
  else
    say(("reverted %s in the buffer, not saved: it holds other unsaved edits"):format(what))
  end
end

--- :MiniMeComment [text]: the next ask is about the hunk under the cursor: its file and lines
--- go along as context (as with a range of :MiniMeAsk), with `text`; none: the input float.
--- `kept` (:MiniMeComment!): not asked now, kept for the thread's next ask (minime.feedback).
---@param text? string
---@param kept? boolean
function M.comment(text, kept)
  local r, list = hunks_here(false)
  if not list then
    return
  end
  if kept then
    if not text or vim.trim(text) == "" then
      return say(":MiniMeComment! needs the comment's text", vim.log.levels.WARN)
    end
    ---@cast r minime.review.Review
    if require("minime.feedback.review").send(r, list[1], "comment", vim.trim(text)) then
      say("comment kept: it goes with the next ask in this thread")
    else
      say("comment not kept: review feedback is off, or the file is not one the agent may see")
    end
    return
  end
  local row, n = hunks.range(list[1])
  local first = (row or 0) + 1
  require("minime").ask(text ~= "" and text or nil, { first, first + math.max(n, 1) - 1 })
end

return M
