--- Checkpoints: each turn's record (review/baseline.lua) kept for a rewind, and its end
--- recorded (M.ended). In git: each turn's snapshot trees (at its start, the review's baseline, and at
--- its end) kept for a rewind while the thread lives. A tree nothing references is pruned by
--- `git gc` (after two weeks by default, at once with --prune=now), so each thread has one ref
--- in the user's repository, refs/minime/<Neovim's pid>/<thread>, naming a tree whose entries
--- are the thread's checkpoints ("3s": turn 3's start, "3e": its end). One ref per thread, one
--- small tree object per checkpoint; the snapshots share every unchanged file and directory
--- with each other and with the user's commits.
---
--- The ref goes when the thread closes, is deleted or starts a new conversation, and all of
--- this Neovim's when it exits. After a crash they stay: the first checkpoint of a later
--- Neovim in that repository removes every refs/minime/<pid>/ whose process is gone.
---
--- git runs as minime.git says (nothing the repository configures runs; bounded; off the main
--- loop): the tree through the plugin's own git directory (mktree), the ref on the user's
--- (update-ref, for-each-ref: like the discovery they read its config, and touch no index, no
--- work tree file, no object transport; hooks off by minime.git's flags, no reflog).
local G = require("minime.git")

local uv = vim.uv

local M = {}

local PID = vim.fn.getpid()
M.ROOT = "refs/minime/"

---@class minime.review.Kept
---@field repo minime.git.Repo
---@field entries table<string, string> checkpoint name ("3s", "3e") -> tree
---@field ref string

---@type table<string, minime.review.Kept>
M.kept = {}

--- git's failures with the refs, newest last (a ref not written: git gc may prune that
--- checkpoint after two weeks); tests read them.
---@type string[]
M.errors = {}

-- Repositories swept of a crashed Neovim's refs (by git directory), once each.
local swept = {}

--- The ref of thread `key`.
---@param key string
function M.ref(key)
  return ("%s%d/%s"):format(M.ROOT, PID, key)
end

--- `git <args>` on the user's repository (its refs), alone on it: done(result).
local function on_refs(repo, args, stdin, done)
  local cmd = { "-c", "core.logAllRefUpdates=false" }
  vim.list_extend(cmd, args)
  G.exclusive(repo, function(release)
    G.run(cmd, { cwd = repo.root, env = { GIT_DIR = repo.git_dir }, stdin = stdin }, function(r)
      release()
      if r.code ~= 0 then
        table.insert(M.errors, ("git %s: %s"):format(args[1], vim.trim(r.stderr)))
        if #M.errors > 20 then
          table.remove(M.errors, 1)
        end
      end
      if done then
        done(r)
      end
    end)
  end)
end

--- Whether process `pid` is alive (EPERM: it is, another user's).
local function alive(pid)
  local ok, err = uv.kill(pid, 0)
  return ok == 0 or (type(err) == "string" and err:match("EPERM") ~= nil)
end

--- The refs of Neovims that are gone (a crash left them) removed from `repo`, once.
local function sweep(repo)
  if swept[repo.git_dir] then
    return
  end
  swept[repo.git_dir] = true
  on_refs(repo, { "for-each-ref", "--format=%(refname)", M.ROOT }, nil, function(r)
    local stale = {}
    for name in r.stdout:gmatch("[^\n]+") do
      local pid = tonumber(name:match("^refs/minime/(%d+)/"))
      if pid and pid ~= PID and not alive(pid) then
        stale[#stale + 1] = ("delete %s\0\0"):format(name)
      end
    end
    if #stale > 0 then
      on_refs(repo, { "update-ref", "--stdin", "-z" }, table.concat(stale))
    end
  end)
end

--- Write thread `key`'s tree of checkpoints and point its ref at it (none left: delete it).
local function publish(key)
  local kept = M.kept[key]
  if not kept then
    return
  end
  local lines = {}
  for name, tree in pairs(kept.entries) do
    lines[#lines + 1] = ("040000 tree %s\t%s\n"):format(tree, name)
  end
  if #lines == 0 then
    M.kept[key] = nil
    return on_refs(kept.repo, { "update-ref", "--stdin", "-z" }, ("delete %s\0\0"):format(kept.ref))
  end
  local repo = kept.repo
  G.run_in(repo, { "mktree" }, { cwd = repo.root, stdin = table.concat(lines) }, function(r)
    local tree = r.stdout:match("^(%x+)")
    if r.code ~= 0 or not tree or M.kept[key] ~= kept then
      return
    end
    on_refs(repo, { "update-ref", "--stdin", "-z" }, ("update %s\0%s\0\0"):format(kept.ref, tree))
  end)
end

--- Keep tree `tree` of `repo` as checkpoint `name` ("3s", "3e") of thread `key`.
---@param key string
---@param repo minime.git.Repo
---@param name string
---@param tree string
function M.keep(key, repo, name, tree)
  local kept = M.kept[key]
  if not kept or kept.repo ~= repo then
    kept = { repo = repo, entries = {}, ref = M.ref(key) }
    M.kept[key] = kept
  end
  kept.entries[name] = tree
  sweep(repo)
  publish(key)
end

--- The last turn of `key` ended: its files recorded as it left them (review/baseline.lua's
--- header). In git a snapshot, off the main loop; outside, the lines of the files the turn
--- holds a text of, each as the user has it now (unsaved edits, else the disk's).
---@param key string
function M.ended(key)
  local baseline = require("minime.review.baseline")
  local session = baseline.sessions[key]
  local turn = session and session.turns[#session.turns]
  if not turn or turn.ended_at then
    return
  end
  local now = uv.clock_gettime("realtime")
  turn.ended_at = now.sec + now.nsec / 1e9
  local function texts()
    local ended = {}
    for _, list in ipairs({ turn.texts, turn.unsure }) do
      for path in pairs(list) do
        local buf = require("minime.editor.paths").loaded_buffer(path)
        local lines = buf and vim.bo[buf].modified and vim.api.nvim_buf_get_lines(buf, 0, -1, false)
        ended[path] = lines or baseline.disk(path) or false
      end
    end
    turn.ended = ended
  end
  if not turn.pending and not turn.tree then
    return texts()
  end
  require("minime.review.git").snapshot(session.cwd, function(tree, repo)
    if not tree then
      return texts()
    end
    turn.ended_tree = tree
    if baseline.sessions[key] == session then
      M.keep(key, repo, turn.n .. "e", tree)
    end
  end)
end

--- The turns of `key` from `n` on are forgotten (a resend starts over at ask n).
---@param key string
---@param n integer
function M.truncate(key, n)
  local session = require("minime.review.baseline").sessions[key]
  if not session then
    return
  end
  for i = #session.turns, n, -1 do
    session.turns[i] = nil
  end
  session.count = math.min(session.count, n - 1)
  M.drop_from(key, n)
end

--- Thread `key`'s checkpoints of turns `n` and later are dropped (a resend replaces them).
---@param key string
---@param n integer
function M.drop_from(key, n)
  local kept = M.kept[key]
  if not kept then
    return
  end
  for name in pairs(kept.entries) do
    if tonumber(name:match("^(%d+)")) >= n then
      kept.entries[name] = nil
    end
  end
  publish(key)
end

--- Thread `key`'s checkpoints are no longer needed (closed, deleted, a new conversation).
---@param key string
function M.drop(key)
  M.drop_from(key, 1)
end

--- Neovim exits: every ref of this Neovim removed, waiting at most `ms` for git.
---@param ms integer
function M.drop_all(ms)
  local left = 0
  for key in pairs(M.kept) do
    left = left + 1
    local kept = M.kept[key]
    M.kept[key] = nil
    on_refs(
      kept.repo,
      { "update-ref", "--stdin", "-z" },
      ("delete %s\0\0"):format(kept.ref),
      function()
        left = left - 1
      end
    )
  end
  if left > 0 then
    vim.wait(ms, function()
      return left == 0
    end, 10)
  end
end

return M
