--- What a review covers, and its hunks: the files its turns recorded or named and, in git,
--- every file that differs between the first turn's snapshot and one taken now (so a shell
--- command's writes count), each compared with its baseline.
---
--- It reads the files as they are when asked: a loaded buffer still holding an older text
--- (the refresh after a turn has not run yet, as in an autocmd on MiniMeTurnDone) is read
--- again first. Never loads, reads or lists a denied file (baseline.allowed, the one rule),
--- nor loads one that is not a regular file now (a FIFO would hold the editor in open()).
local baseline = require("minime.review.baseline")
local files = require("minime.review.files")
local git = require("minime.review.git")
local hunks = require("minime.review.hunks")

local M = {}

---@class minime.review.Review
---@field cwd string
---@field thread? string the thread whose turns it covers (its feedback goes there)
---@field title string
---@field qf? integer the quickfix list's id
---@field hunks minime.review.Hunk[]
---@field turns minime.review.Turn[] the turns it covers
---@field base table<string, string[]> each file's baseline lines

--- The baseline of `path` among the turns a review covers: done(lines), done(false) when it
--- was absent, done(nil) when none is known. A file a turn recorded (its text when first seen)
--- first; else, in git, the first turn's snapshot: trusted for a file it lacks only when git
--- lists the file as changed since (`changed`) — one missing from it may just be ignored.
local function base_of(turns, path, changed, done)
  for _, turn in ipairs(turns) do
    if turn.texts[path] ~= nil then
      return done(turn.texts[path])
    end
  end
  local first = turns[1]
  if not first.tree then
    return done(nil)
  end
  local rel = vim.fs.relpath(first.root, path) or path
  git.show(first.repo, first.tree, rel, function(lines)
    if lines or changed[path] then
      return done(lines)
    end
    done(nil)
  end)
end

--- Whether a covered turn says `path` changed before anything named it (baseline.name).
local function unsure(turns, path)
  for _, turn in ipairs(turns) do
    if turn.unsure[path] then
      return true
    end
  end
  return false
end

--- The hunks of `r` for `paths` (absolute): each compared with its baseline, its buffer loaded
--- and its hunks drawn; done(odd), the files not reviewed for being no regular file now.
local function hunks_of(r, paths, changed, done)
  local todo = vim.tbl_filter(baseline.allowed(r.cwd), vim.tbl_keys(paths))
  table.sort(todo)
  local odd, i = {}, 0
  local function step()
    i = i + 1
    local path = todo[i]
    if not path then
      return done(odd)
    end
    base_of(r.turns, path, changed, function(base)
      local st = vim.uv.fs_stat(path)
      if st and st.type ~= "file" then
        odd[#odd + 1] = vim.fn.fnamemodify(path, ":~:.")
        return step()
      elseif base == nil and unsure(r.turns, path) then
        r.hunks[#r.hunks + 1] = files.record("unsure", path, {})
        return step()
      elseif base == nil or (base == false and not st) then
        return step() -- unknown before, or absent before and after
      elseif not st then
        r.hunks[#r.hunks + 1] = files.record("deleted", path, base --[[@as string[] ]])
        return step()
      end
      local buf = vim.fn.bufadd(path)
      vim.fn.bufload(buf)
      vim.bo[buf].buflisted = true
      if base == false then
        r.hunks[#r.hunks + 1] = files.record("created", path, {}, buf)
        return step()
      end
      r.base[path] = base
      vim.list_extend(r.hunks, hunks.place(path, buf, base))
      step()
    end)
  end
  step()
end

--- The loaded buffers of `paths` made to hold their files as they are now: an unmodified one
--- whose file differs is read again (`:edit!`: one undo step, never a W11 prompt, inside an
--- autocmd too, where `:checktime` defers); a modified one whose file changed since `at` is
--- left as the user has it, and named in the answer (said: its hunks cannot be shown).
---@return string[] kept
local function sync(paths, at)
  local kept = {}
  for _, path in ipairs(paths) do
    local buf = require("minime.editor.paths").loaded_buffer(path)
    local disk = buf and baseline.disk(path)
    if disk and not vim.deep_equal(disk, vim.api.nvim_buf_get_lines(buf, 0, -1, false)) then
      if not vim.bo[buf].modified then
        pcall(vim.api.nvim_buf_call, buf, function()
          vim.cmd("silent keepalt edit!")
        end)
      elseif baseline.changed_since(path, at) then
        kept[#kept + 1] = vim.fn.fnamemodify(path, ":~:.")
      end
    end
  end
  table.sort(kept)
  return kept
end

--- What the first turn's baseline cannot vouch for, in words.
local function caveats(first)
  local notes = {}
  if first.failed then
    notes[#notes + 1] = ("git could not snapshot turn %d (%s): only the files it named are reviewed"):format(
      first.n,
      first.failed
    )
  elseif first.late then
    notes[#notes + 1] = (
      "turn %d's snapshot was written after its prompt went (git was slow):"
      .. " a write before it was done counts as baseline"
    ):format(first.n)
  end
  return notes
end

--- The review of `turns` (their files in `cwd`): done(review, notes) once every file is
--- compared and its hunks drawn.
---@param cwd string
---@param turns minime.review.Turn[]
---@param title string
---@param done fun(r: minime.review.Review, notes: string[])
function M.review(cwd, turns, title, done)
  local r = { cwd = cwd, title = title, hunks = {}, turns = turns, base = {} } ---@type minime.review.Review
  local paths, changed = {}, {}
  for _, turn in ipairs(turns) do
    for path in pairs(turn.texts) do
      paths[path] = true
    end
    for path in pairs(turn.unsure) do
      paths[path] = true
    end
  end
  local first = turns[1]
  local notes = caveats(first)
  local function compare()
    local kept = sync(vim.tbl_filter(baseline.allowed(cwd), vim.tbl_keys(paths)), first.at)
    if #kept > 0 then
      notes[#notes + 1] = "changed on disk, not reviewed in your buffer: it holds unsaved edits"
        .. " (:e! takes the file): "
        .. table.concat(kept, ", ")
    end
    hunks_of(r, paths, changed, function(odd)
      if #odd > 0 then
        notes[#notes + 1] = "not reviewed, no longer a regular file: " .. table.concat(odd, ", ")
      end
      done(r, notes)
    end)
  end
  if not first.tree then
    return compare()
  end
  git.snapshot(cwd, function(now, repo, why)
    if not now then
      notes[#notes + 1] = "git could not snapshot the files now: " .. tostring(why)
      return compare()
    end
    git.changed(repo, cwd, first.tree, now, function(rels, err)
      if not rels then
        notes[#notes + 1] = "git could not compare the trees: " .. tostring(err)
      end
      for _, rel in ipairs(rels or {}) do
        local path = vim.fs.joinpath(cwd, rel)
        paths[path], changed[path] = true, true
      end
      compare()
    end)
  end)
end

return M
