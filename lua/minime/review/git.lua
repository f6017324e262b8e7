--- Git for the review, always off the main loop (vim.system with a callback, run on the main
--- loop again through vim.schedule_wrap).
---
--- A snapshot is the work tree as git sees it, written as a tree object without touching the
--- user's index: a temporary index, started as a copy of the real one so that `git add -A`
--- rehashes only what changed (a fresh index would hash every file), then `git write-tree`.
--- Untracked files that are not ignored count; the tree is kept alive by nothing but its hash
--- (git gc prunes unreachable objects only after two weeks).
local M = {}

local SNAPSHOT = [[
set -e
root=$(git rev-parse --show-toplevel)
index=$(git rev-parse --absolute-git-dir)/index
tmp=$(mktemp "${TMPDIR:-/tmp}/minime-review-index.XXXXXX")
trap 'rm -f "$tmp" "$tmp.lock"' EXIT
if [ -f "$index" ]; then cp "$index" "$tmp"; else rm -f "$tmp"; fi
GIT_INDEX_FILE=$tmp git add -A -- . >/dev/null 2>&1
printf '%s\n' "$root"
GIT_INDEX_FILE=$tmp git write-tree
]]

local function run(cmd, cwd, done)
  local ok, err = pcall(vim.system, cmd, { cwd = cwd, text = true }, vim.schedule_wrap(done))
  if not ok then
    vim.schedule(function()
      done({ code = -1, stdout = "", stderr = tostring(err) })
    end)
  end
end

--- Snapshot the work tree of `cwd`: done(tree, root), or done(nil) outside git (or no git).
---@param cwd string
---@param done fun(tree?: string, root?: string)
function M.snapshot(cwd, done)
  run({ "sh", "-c", SNAPSHOT }, cwd, function(r)
    local root, tree = (r.stdout or ""):match("^(.-)\n(%x+)\n?$")
    if r.code ~= 0 or not tree then
      return done(nil)
    end
    done(tree, root)
  end)
end

--- The files under `cwd` that differ between trees `a` and `b`: paths relative to cwd.
---@param done fun(paths?: string[], err?: string)
function M.changed(cwd, a, b, done)
  run(
    { "git", "diff-tree", "-r", "-z", "--no-renames", "--name-only", "--relative", a, b },
    cwd,
    function(r)
      if r.code ~= 0 then
        return done(nil, vim.trim(r.stderr or ""))
      end
      done(vim.split(r.stdout or "", "\0", { trimempty = true }))
    end
  )
end

--- The lines of `rel` (relative to cwd) in tree `tree`: done(lines), or done(false) when the
--- tree has no such file.
---@param done fun(lines: string[]|false)
function M.show(cwd, tree, rel, done)
  run({ "git", "cat-file", "blob", tree .. ":./" .. rel }, cwd, function(r)
    if r.code ~= 0 then
      return done(false)
    end
    local text = (r.stdout or ""):gsub("\n$", "")
    done(vim.split(text, "\n", { plain = true }))
  end)
end

return M
