--- What a rewind to before ask `n` of a thread would do: every file changed since that turn's
--- checkpoint (review/baseline.lua), whatever wrote it, with its text then and now. Found off
--- the main loop (inside minime.editor.async.run: git, and every disk read, wait there).
---
--- The files: in git, every file that differs between the turn's snapshot and one taken now
--- (so a shell command's writes count), and every file a turn since recorded a text of (an
--- ignored file, an unsaved buffer); outside git, the files the turns since recorded. A file's
--- text then: the buffer text the turn recorded, else the snapshot's blob (git), else
--- (outside git) the first text a later turn recorded of it, else none is known (`unknown`).
---
--- "The user edited it" (`edited`): its buffer holds unsaved edits now, or it changed between
--- the end of a turn since and the start of the next one (or now): the agent did not write it
--- then. A turn's end is when its `done` came; a change the user makes during a turn counts as
--- the agent's. Nothing outside the cwd or on the deny list is read, listed or named.
local async = require("minime.editor.async")
local baseline = require("minime.review.baseline")
local file_reader = require("minime.editor.file_reader")
local G = require("minime.git")
local git = require("minime.review.git")

local uv = vim.uv

local M = {}

---@class minime.rewind.File
---@field path string absolute, resolved
---@field rel string relative to the cwd
---@field target string|false its text at the checkpoint (false: it did not exist)
---@field now string|false its text now (a loaded buffer's with unsaved edits; false: absent)
---@field kind "restore"|"remove"|"create"
---@field edited? boolean the user edited it since (restored only with !)

---@class minime.rewind.Plan
---@field key string
---@field cwd string
---@field n integer
---@field files minime.rewind.File[] sorted by path
---@field unknown string[] changed, but no text of it at the checkpoint is known
---@field odd string[] no longer a regular file (a FIFO, a directory): not touched

local LIMITS = { read_timeout_ms = 5000, max_file_bytes = baseline.MAX_BYTES }

--- `lines` (a recorded text, baseline.lines) as a file's bytes.
---@param lines string[]|false
---@return string|false
function M.text(lines)
  return lines and table.concat(lines, "\n") .. (lines.noeol and "" or "\n")
end

--- The loaded normal buffers by their file's real path (one pass, not one per file).
---@return table<string, integer>
function M.buffers()
  local by_path = {}
  local paths = require("minime.editor.paths")
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = vim.api.nvim_buf_get_name(buf)
      local real = name ~= "" and paths.realpath(name)
      if real then
        by_path[real] = buf
      end
    end
  end
  return by_path
end

--- `path`'s text now, as the user has it (inside async.run): a buffer with unsaved edits is
--- its text; else the disk's. false: absent; nil: no regular file, too big or unreadable.
---@param path string
---@param buffers table<string, integer>
---@return string|false|nil
function M.now(path, buffers)
  local buf = buffers[path]
  if buf and vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].modified then
    return require("minime.editor.paths").buffer_text(buf)
  end
  local st = uv.fs_lstat(path)
  if not st then
    return false
  elseif st.type ~= "file" then
    return nil
  end
  return (file_reader.read_all(path, LIMITS))
end

-- Files handled between two returns to the main loop (each costs ~0.2 ms: lstat, scope).
local BATCH = 10

--- Give the main loop its turn every BATCH items (inside async.run).
local function breathe(i)
  if i > 0 and i % BATCH == 0 then
    async.yield()
  end
end

--- `path` relative to `dir`, a resolved prefix of it (vim.fs.relpath normalises both: slow).
local function under(dir, path)
  return path:sub(1, #dir + 1) == dir .. "/" and path:sub(#dir + 2) or path
end

local function wait(fn, ...)
  local args = { n = select("#", ...), ... }
  return async.wait(function(done)
    args[args.n + 1] = done
    fn(unpack(args, 1, args.n + 1))
  end)
end

--- The blobs `specs` ("<tree>:<path from the top>") name, in one `git cat-file --batch`:
--- spec -> bytes, false when the tree has no such file.
local function blobs(repo, specs)
  local out = {}
  if #specs == 0 then
    return out
  end
  local r = wait(G.run_in, repo, { "cat-file", "--batch" }, {
    cwd = repo.root,
    stdin = table.concat(specs, "\n") .. "\n",
    text = false,
  })
  if r.code ~= 0 then
    error({ message = "git cat-file failed: " .. vim.trim(r.stderr) }, 0)
  end
  local data, pos = r.stdout, 1
  for _, spec in ipairs(specs) do
    local eol = data:find("\n", pos, true)
    if not eol then
      break
    end
    local head = data:sub(pos, eol - 1)
    local kind, size = head:match("^%x+ (%a+) (%d+)$")
    if kind then
      size = tonumber(size)
      out[spec] = kind == "blob" and data:sub(eol + 1, eol + size) or false
      pos = eol + size + 2
    else
      out[spec] = false -- "<spec> missing"
      pos = eol + 1
    end
  end
  return out
end

--- The rels that differ between trees `a` and `b` (nil when either is unknown).
local function differ(repo, cwd, a, b)
  if not a or not b then
    return nil
  end
  local rels, err = wait(git.changed, repo, cwd, a, b)
  if not rels then
    error({ message = "git could not compare the snapshots: " .. tostring(err) }, 0)
  end
  local set = {}
  for i, rel in ipairs(rels) do
    breathe(i)
    set[cwd .. "/" .. rel] = true
  end
  return set
end

--- The paths of `set` changed by the user after turn `n` of `turns` (git: their trees).
local function edited_in_git(repo, cwd, turns, n, now_tree)
  local edited = {}
  for k = n, #turns do
    local after = turns[k + 1] and turns[k + 1].tree or (k == #turns and now_tree or nil)
    for path in pairs(differ(repo, cwd, turns[k].ended_tree, after) or {}) do
      edited[path] = true
    end
  end
  return edited
end

--- Outside git: whether `path` changed between a turn's end (from `n` on) and the next start.
local function edited_outside(turns, n, path, now)
  for k = n, #turns do
    local at_end = turns[k].ended and turns[k].ended[path]
    local next_start = now
    if k < #turns then
      local text = turns[k + 1].texts[path]
      next_start = nil
      if text ~= nil then
        next_start = M.text(text)
      end
    end
    if at_end ~= nil and next_start ~= nil and M.text(at_end) ~= next_start then
      return true
    end
  end
  return false
end

--- Whether `turn`'s text of `path` is its text then: outside git every text it recorded; in
--- git only an unsaved buffer's (the snapshot holds the file's very bytes, a text read from
--- disk may not: a file that was not in the snapshot, ignored, has only this).
local function recorded(turn, path)
  if turn.texts[path] == nil then
    return false
  end
  local stamp = turn.stamps and turn.stamps[path]
  return not turn.tree or (stamp ~= nil and stamp:match("^%d+:%d+$") ~= nil)
end

--- The plan of a rewind of thread `key` to before ask `n` (inside async.run); errors are
--- thrown as { message }.
---@param key string
---@param n integer
---@return minime.rewind.Plan
function M.make(key, n)
  local session = baseline.sessions[key]
  local turns = session and session.turns
  local turn = turns and turns[n]
  if not turn then
    error({ message = ("no checkpoint of ask %d in this thread"):format(n) }, 0)
  end
  local cwd = session.cwd
  local allowed = baseline.allowed(cwd)
  local plan = { key = key, cwd = cwd, n = n, files = {}, unknown = {}, odd = {} } ---@type minime.rewind.Plan
  local paths, in_tree = {}, {}
  for k = n, #turns do
    for _, list in ipairs({ turns[k].texts, turns[k].unsure }) do
      for path in pairs(list) do
        paths[path] = true
      end
    end
  end
  local now_tree, repo
  if turn.tree then
    now_tree, repo = wait(git.snapshot, cwd)
    if not now_tree then
      error({ message = "git could not snapshot the files now: " .. tostring(repo) }, 0)
    end
    for path in pairs(differ(repo, cwd, turn.tree, now_tree) or {}) do
      paths[path], in_tree[path] = true, true
    end
  end
  local todo = {}
  for path in pairs(paths) do
    breathe(#todo)
    if allowed(path) then
      todo[#todo + 1] = path
    end
  end
  table.sort(todo)
  -- Each file's text then: what the turn recorded, else its snapshot's blob.
  local specs, spec_of = {}, {}
  for _, path in ipairs(todo) do
    if not recorded(turn, path) and turn.tree and not path:find("\n", 1, true) then
      local spec = turn.tree .. ":" .. under(turn.root, path)
      specs[#specs + 1], spec_of[path] = spec, spec
    end
  end
  local from_tree = turn.tree and blobs(turn.repo, specs) or {}
  local edited = turn.tree and edited_in_git(repo, cwd, turns, n, now_tree) or {}
  local buffers = M.buffers()
  for i, path in ipairs(todo) do
    breathe(i)
    local target ---@type string|false|nil
    if recorded(turn, path) then
      target = M.text(turn.texts[path])
    end
    if target == nil and spec_of[path] then
      local blob = from_tree[spec_of[path]]
      -- Not in the snapshot: absent then only if git lists it as changed (else ignored).
      if blob or in_tree[path] then
        target = blob
      end
    end
    if target == nil and not turn.tree then
      for k = n + 1, #turns do
        if turns[k].texts[path] ~= nil then
          target = M.text(turns[k].texts[path])
          break
        end
      end
    end
    local now = M.now(path, buffers)
    local rel = under(cwd, path)
    if now == nil then
      plan.odd[#plan.odd + 1] = rel
    elseif target == nil then
      if now ~= false or turn.unsure[path] then
        plan.unknown[#plan.unknown + 1] = rel
      end
    elseif target ~= now then
      local file = { path = path, rel = rel, target = target, now = now } ---@type minime.rewind.File
      file.kind = target == false and "remove" or now == false and "create" or "restore"
      local buf = buffers[path]
      file.edited = (buf and vim.bo[buf].modified)
        or edited[path]
        or (not turn.tree and edited_outside(turns, n, path, now))
        or nil
      plan.files[#plan.files + 1] = file
    end
  end
  return plan
end

return M
