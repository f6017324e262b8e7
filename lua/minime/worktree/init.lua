--- A thread's own git worktree (:h minime-worktrees): made under a directory the plugin owns
--- (`stdpath("data")/minime/worktrees/<repo>-<hash>/<slug>`, never inside the user's tree) on
--- a new branch `minime/<slug>` from the commit checked out where it was asked; asked what it
--- holds (changes, commits not merged) before a thread that has one closes; removed with its
--- branch. Every git command goes through minime.git (nothing the repository
--- configures runs) and off the main loop.
---
---   worktree.plan(cwd, slug, done)   -- where it would go: done(wt) | done(nil, why)
---   worktree.add(wt, done)           -- make it: done(true) | done(false, why)
---   worktree.status(wt, done)        -- done({changes, ahead, missing})
---   worktree.remove(wt, done)        -- done(true) | done(false, why)
local async = require("minime.editor.async")
local git = require("minime.git")

local uv = vim.uv

local M = {}

M.BRANCH_PREFIX = "minime/"

---@class minime.Worktree
---@field path string its directory
---@field branch string "minime/<slug>"
---@field root string the work tree it was made from
---@field base string the commit it started at
---@field common_dir string the repository's git directory (objects, refs)
---@field format string the object format ("sha1", "sha256")

--- The directory the plugin makes worktrees in.
---@return string
function M.dir()
  return vim.fn.stdpath("data") .. "/minime/worktrees"
end

local function inside(path, dir)
  return path == dir or vim.startswith(path, dir .. "/")
end

--- Whether `wt` is one the plugin made (so one it may remove): under M.dir(), on a branch of
--- its own.
---@param wt any
---@return boolean
function M.owns(wt)
  return type(wt) == "table"
    and type(wt.path) == "string"
    and type(wt.branch) == "string"
    and type(wt.common_dir) == "string"
    and inside(wt.path, M.dir())
    and not wt.path:find("/%.%./")
    and vim.startswith(wt.branch, M.BRANCH_PREFIX)
end

local function call(args, opts)
  return async.wait(function(done)
    git.run(args, opts, done)
  end)
end

local function call_in(repo, args)
  return async.wait(function(done)
    git.run_in(repo, args, { cwd = repo.root }, done)
  end)
end

local function exists(path)
  return async.wait(function(done)
    uv.fs_stat(path, function(_, st)
      done(st)
    end)
  end)
end

local function failed(r)
  local why = vim.trim(r.stderr ~= "" and r.stderr or r.stdout)
  return why ~= "" and why or ("git exited with " .. r.code)
end

--- Run `work()` in a coroutine: done(value, err) with what it returned (or threw).
local function run(work, done)
  async.run(work, function(ok, value, err)
    if not ok then
      return done(nil, type(value) == "string" and value or tostring(err or value))
    end
    done(value[1], value[2])
  end)
end

--- Run `work()` (it returns {true} or {false, why}) in a coroutine: done(ok, why).
local function run_ok(work, done)
  run(work, function(ok, why)
    done(ok == true, why)
  end)
end

--- A name for the repository of `common_dir` in M.dir(): its directory's name and a hash
--- of its path (two clones of one name stay apart).
local function repo_name(common_dir)
  local top = common_dir:gsub("/%.git$", "")
  local name = vim.fs.basename(top):gsub("[^%w%._-]", "-")
  return ("%s-%s"):format(name, vim.fn.sha256(common_dir):sub(1, 8))
end

--- Where a worktree for `cwd` would go, and from which commit: done(wt), or done(nil, why)
--- when `cwd` is in no git repository, it has no commit yet, or the plugin's directory is
--- inside the repository. Nothing is written.
---@param cwd string
---@param slug string [%w-] only
---@param done fun(wt?: minime.Worktree, why?: string)
function M.plan(cwd, slug, done)
  run(function()
    local args = { "rev-parse", "--path-format=absolute", "--show-toplevel" }
    vim.list_extend(args, { "--git-common-dir", "--show-object-format" })
    local r = call(args, { cwd = cwd })
    local root, common, format = r.stdout:match("^(.-)\n(.-)\n(%w+)\n?$")
    if r.code ~= 0 or not format then
      return {
        nil,
        (r.code == 124 or r.code == -1) and failed(r) or (cwd .. " is not in a git repository"),
      }
    end
    local head = call({ "rev-parse", "--verify", "-q", "HEAD^{commit}" }, { cwd = cwd })
    local base = vim.trim(head.stdout)
    if head.code ~= 0 or base == "" then
      return { nil, root .. " has no commit yet: a worktree starts from one" }
    end
    local real = require("minime.editor.paths").realpath
    local dir = real(M.dir()) or M.dir()
    local path = ("%s/%s/%s"):format(dir, repo_name(common), slug)
    if inside(path, root) or inside(path, common) then
      return {
        nil,
        ("the plugin's worktree directory %s is inside the repository %s"):format(dir, root),
      }
    end
    if exists(path) then
      return { nil, path .. " already exists" }
    end
    return {
      {
        path = path,
        branch = M.BRANCH_PREFIX .. slug,
        root = root,
        base = base,
        common_dir = common,
        format = format,
      },
    }
  end, done)
end

--- The plugin's view of worktree `wt`: its own index, the plugin's git directory.
local function private_repo(wt, git_dir)
  return {
    root = wt.path,
    common_dir = wt.common_dir,
    dir = git.private(wt.format),
    index = git_dir .. "/index",
  }
end

--- The worktree's own git directory (`<common>/worktrees/<name>`), from its `.git` file.
local function git_dir_of(wt)
  local r = call({ "rev-parse", "--path-format=absolute", "--git-dir" }, { cwd = wt.path })
  local dir = vim.trim(r.stdout)
  return r.code == 0 and dir ~= "" and dir or nil, failed(r)
end

--- Make worktree `wt` (M.plan): `git worktree add --no-checkout` registers it and its branch
--- (no checkout: no filter, no hook), then its files are written by `git checkout-index` in
--- the plugin's git directory. A failure halfway removes what was made.
---@param wt minime.Worktree
---@param done fun(ok: boolean, why?: string)
function M.add(wt, done)
  run_ok(function()
    local args = { "--git-dir=" .. wt.common_dir, "worktree", "add", "--no-checkout", "-b" }
    vim.list_extend(args, { wt.branch, wt.path, wt.base })
    local r = call(args, { cwd = wt.root })
    if r.code ~= 0 then
      return { false, failed(r) }
    end
    local git_dir, why = git_dir_of(wt)
    local repo = git_dir and private_repo(wt, git_dir)
    local step = repo and call_in(repo, { "read-tree", wt.base })
    if step and step.code == 0 then
      step = call_in(repo, { "checkout-index", "--all", "--index", "--quiet" })
    end
    if not step or step.code ~= 0 then
      why = step and failed(step) or why
      M.remove(wt, function() end)
      return { false, why }
    end
    return { true }
  end, done)
end

--- What worktree `wt` holds that is not elsewhere: `changes` (files changed, added or
--- deleted, staged or not; untracked files that are not ignored), `ahead` (commits on its
--- HEAD or branch that neither its base nor the main tree's HEAD has), `missing` (its
--- directory is gone). done(status) on the main loop; a git failure counts as changes.
---@param wt minime.Worktree
---@param done fun(status: {changes: boolean, ahead: integer, missing?: boolean, error?: string})
function M.status(wt, done)
  run(function()
    local git_dir, why
    if exists(wt.path .. "/.git") then
      git_dir, why = git_dir_of(wt)
      if not git_dir then
        return { { changes = true, ahead = 0, error = why } }
      end
    end
    local function rev(name, cwd)
      local r = call({ "rev-parse", "--verify", "-q", name }, { cwd = cwd })
      local sha = vim.trim(r.stdout)
      return r.code == 0 and sha ~= "" and sha or nil
    end
    local repo = {
      root = git_dir and wt.path or wt.common_dir,
      common_dir = wt.common_dir,
      dir = git.private(wt.format),
      index = git_dir and git_dir .. "/index" or git.private(wt.format) .. "/index",
    }
    local status = { changes = false, ahead = 0, missing = git_dir == nil or nil }
    local head = git_dir and rev("HEAD", wt.path)
    if git_dir then
      local list = { "ls-files", "-z", "--modified", "--deleted", "--others" }
      list[#list + 1] = "--exclude-per-directory=.gitignore"
      local exclude = exists(wt.common_dir .. "/info/exclude")
      if exclude and exclude.type == "file" then
        list[#list + 1] = "--exclude-from=" .. wt.common_dir .. "/info/exclude"
      end
      local files = call_in(repo, list)
      status.changes = files.code ~= 0 or files.stdout ~= ""
      status.error = files.code ~= 0 and failed(files) or nil
      if not status.changes and head then
        status.changes = call_in(repo, { "diff-index", "--cached", "--quiet", head }).code ~= 0
      end
    end
    local main = rev("HEAD", exists(wt.root) and wt.root or wt.common_dir)
    local count = { "rev-list", "--count" }
    for _, sha in ipairs({ head or false, rev("refs/heads/" .. wt.branch, wt.common_dir) or false }) do
      if sha then
        count[#count + 1] = sha
      end
    end
    if #count > 2 then
      vim.list_extend(count, { "--not", wt.base, main })
      local r = call_in(repo, count)
      status.ahead = tonumber(vim.trim(r.stdout)) or (r.code ~= 0 and 1 or 0)
    end
    return { status }
  end, function(status, err)
    done(status or { changes = true, ahead = 0, error = err })
  end)
end

--- Remove worktree `wt` and its branch (`git worktree remove --force`: no status runs; a
--- directory already gone is pruned). Only one the plugin made (M.owns).
---@param wt minime.Worktree
---@param done fun(ok: boolean, why?: string)
function M.remove(wt, done)
  if not M.owns(wt) then
    return done(false, "not a worktree of minime's: left as it is")
  end
  run_ok(function()
    local gitdir = "--git-dir=" .. wt.common_dir
    local r
    if exists(wt.path) then
      r = call({ gitdir, "worktree", "remove", "--force", wt.path }, { cwd = wt.common_dir })
    else
      r = call({ gitdir, "worktree", "prune" }, { cwd = wt.common_dir })
    end
    if r.code ~= 0 then
      return { false, failed(r) }
    end
    local b = call({ gitdir, "branch", "-D", wt.branch }, { cwd = wt.common_dir })
    uv.fs_rmdir(vim.fs.dirname(wt.path), function() end) -- the repository's, once empty
    if b.code ~= 0 and not b.stderr:find("not found") then
      return { false, failed(b) }
    end
    return { true }
  end, done)
end

return M
