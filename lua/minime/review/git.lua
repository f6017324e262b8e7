--- Git for the review: snapshots of the work tree as tree objects, their differences, a file's
--- text in one. Always through minime.git (git reads none of the repository's settings, so
--- nothing it configures runs; bounded; off the main loop).
---
--- A snapshot is the work tree under the cwd as git would commit it with `git add -A` —
--- untracked files that are not ignored included — written as a tree object, the user's index
--- untouched. It is made with plumbing, in the plugin's own index for the repository:
---   * seeded once per repository (a Neovim session) from a copy of the user's index, so that
---     only files whose stat changed are read again: its "assume unchanged" and "skip worktree"
---     marks cleared (the agent can set them, and git would then never see the file change),
---     and its mtime set a second back: git re-reads ("racily clean") every entry whose mtime is
---     not older than the index file, so a tracked file rewritten at the same size in the same
---     second it was indexed is read again, not trusted — the copy's fresh mtime made git
---     trust it, and such a rewrite went unseen;
---   * then at each snapshot `git ls-files -m -d -o --exclude-standard` (what changed since the
---     last one: git's stat check, racy entries read again) into `git update-index --add
---     --remove` (a path no longer a regular file, a link or a directory — a FIFO — is removed:
---     git would refuse it, and a FIFO must never be opened) and `git write-tree`.
--- Not `git add -A`, which runs `git status` in every submodule under the submodule's own
--- config (its fsmonitor, its filters); ls-files and update-index compare a submodule's HEAD
--- only. After the seed only the plugin writes its index: what the agent writes in `.git/`
--- (the index, its marks, its stat data) changes no later snapshot.
---
--- Objects go into the repository's object store and are kept alive by nothing but the
--- hashes the review holds (git gc prunes unreachable objects only after two weeks).
local G = require("minime.git")
local async = require("minime.editor.async")

local uv = vim.uv

local M = {}

-- Seconds the copy of the user's index is dated back (see the header).
local RACY_MARGIN = 1

local function failed(step, r)
  local why = r.code == 124 and r.stderr or ("git %s failed: %s"):format(step, vim.trim(r.stderr))
  error({ message = why }, 0)
end

--- The paths of ls-files -z output (a nested repository's without its trailing "/").
local function records(out)
  local list = {}
  for path in out:gmatch("([^%z]+)%z") do
    list[#list + 1] = (path:gsub("/$", ""))
  end
  return list
end

--- What each of `paths` (relative to `base`) is now, lstat's type or false when missing; the
--- lstats run at once in libuv's threads, the main loop free.
local function kinds(base, paths)
  if #paths == 0 then
    return {}
  end
  return async.wait(function(done)
    local types, left = {}, #paths
    for i, path in ipairs(paths) do
      uv.fs_lstat(base .. "/" .. path, function(_, st)
        types[i] = st and st.type or false
        left = left - 1
        if left == 0 then
          done(types)
        end
      end)
    end
  end)
end

local function update_index(repo, cwd, flags, list)
  if #list == 0 then
    return
  end
  local args = { "update-index", "-z" }
  vim.list_extend(args, flags)
  table.insert(args, "--stdin")
  local stdin = table.concat(list, "\0") .. "\0"
  local r = G.call(repo, args, { cwd = cwd, stdin = stdin, text = false })
  if r.code ~= 0 then
    failed("update-index", r)
  end
  repo.tree = nil
end

-- What update-index may read: a regular file, a symbolic link, a repository (a directory).
local READABLE = { file = true, link = true, directory = true }

--- `paths` (relative to `cwd`) into the plugin's index as they are now: gone ones removed, and
--- so is what is no longer a file git may read (a FIFO: never opened).
local function update(repo, cwd, paths)
  local types = kinds(cwd, paths)
  local add, drop = {}, {}
  for i, path in ipairs(paths) do
    local t = types[i]
    table.insert((t == false or READABLE[t]) and add or drop, path)
  end
  update_index(repo, cwd, { "--add", "--remove" }, add)
  update_index(repo, cwd, { "--force-remove" }, drop)
end

local function copy(src, dst, back)
  return async.wait(function(done)
    G.copy_regular(src, dst, back, done)
  end)
end

--- The plugin's index for `repo`, from the user's (see the header): paths whose entries are
--- unmerged are returned, to be read again by the first update.
local function seed(repo)
  local copied = copy(repo.git_dir .. "/index", repo.index, RACY_MARGIN)
  if not copied then
    uv.fs_unlink(repo.index) -- none, or no regular file: start empty (every file read)
  end
  local r = G.call(repo, { "ls-files", "-z", "-v" }, { cwd = repo.root, text = false })
  if r.code ~= 0 and copied then -- an index git cannot read here (a split index): start empty
    uv.fs_unlink(repo.index)
    r = G.call(repo, { "ls-files", "-z", "-v" }, { cwd = repo.root, text = false })
  end
  if r.code ~= 0 then
    failed("ls-files", r)
  end
  local marked, skipped, unmerged = {}, {}, {}
  for tag, path in r.stdout:gmatch("(%S) ([^%z]+)%z") do
    if tag:match("%l") then
      marked[#marked + 1] = path
    end
    if tag == "S" or tag == "s" then
      skipped[#skipped + 1] = path
    elseif tag == "M" or tag == "m" then
      unmerged[#unmerged + 1] = path
    end
  end
  for flag, list in pairs({ ["--no-assume-unchanged"] = marked, ["--no-skip-worktree"] = skipped }) do
    if #list > 0 then
      update_index(repo, repo.root, { flag }, list)
    end
  end
  update(repo, repo.root, unmerged)
  repo.seeded, repo.tree = true, nil
end

--- The snapshot of the work tree under `cwd` (inside G.with_repo): the tree's hash.
local function snapshot(repo, cwd)
  if not repo.seeded then
    seed(repo)
  end
  local args = { "ls-files", "-z", "-m", "-d", "-o", "--exclude-standard" }
  local r = G.call(repo, args, { cwd = cwd, text = false })
  if r.code ~= 0 then
    failed("ls-files", r)
  end
  update(repo, cwd, records(r.stdout))
  if not repo.tree then
    r = G.call(repo, { "write-tree" }, { cwd = cwd })
    local tree = r.stdout:match("^(%x+)\n?$")
    if r.code ~= 0 or not tree then
      failed("write-tree", r)
    end
    repo.tree = tree
  end
  return repo.tree
end

--- Snapshot the work tree of `cwd`: done(tree, repo), or done(nil, nil, why) — why nil
--- outside git (or without git), a message when git failed.
---@param cwd string
---@param done fun(tree?: string, repo?: minime.git.Repo, why?: string)
function M.snapshot(cwd, done)
  local repo
  G.with_repo(cwd, function(r)
    repo = r
    return snapshot(r, cwd)
  end, function(tree, why)
    if tree then
      return done(tree, repo)
    end
    done(nil, nil, why)
  end)
end

--- The repository of `cwd` made ready for the snapshots to come: its first (which seeds the
--- plugin's index) taken now, off the main loop; nothing when it is done already. The warm-up
--- and a turn's `begin` call it, so that typing the ask or the agent's start-up, not the
--- prompt, waits for that one.
---@param cwd string
function M.prepare(cwd)
  G.repo(cwd, function(repo)
    if repo and not repo.seeded then -- known and seeded: nothing queued before a baseline
      M.snapshot(cwd, function() end)
    end
  end)
end

--- The files under `cwd` that differ between trees `a` and `b`: paths relative to cwd.
---@param repo minime.git.Repo
---@param done fun(paths?: string[], err?: string)
function M.changed(repo, cwd, a, b, done)
  local args = { "diff-tree", "-r", "-z", "--no-renames", "--name-only", "--relative" }
  vim.list_extend(args, { "--no-ext-diff", "--no-textconv", a, b })
  G.run_in(repo, args, { cwd = cwd, text = false }, function(r)
    if r.code ~= 0 then
      return done(nil, vim.trim(r.stderr))
    end
    done(records(r.stdout))
  end)
end

--- The lines of `rel` (relative to the work tree's top) in tree `tree`: done(lines), or
--- done(false) when the tree has no such file.
---@param repo minime.git.Repo
---@param done fun(lines: string[]|false)
function M.show(repo, tree, rel, done)
  G.run_in(repo, { "cat-file", "blob", tree .. ":" .. rel }, { cwd = repo.root }, function(r)
    if r.code ~= 0 then
      return done(false)
    end
    local text = r.stdout:gsub("\n$", "")
    done(vim.split(text, "\n", { plain = true }))
  end)
end

return M
