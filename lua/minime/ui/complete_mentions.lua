--- Completion of `@path` mentions (lua/minime/editor/mentions.lua): the open buffers under the
--- cwd, then its files — git's index (`git ls-files -co --exclude-standard` on a copy of it,
--- through minime.git: nothing the repository configures runs; cached a few seconds) where the
--- cwd is a repository, else a bounded walk — leaving out denied files (the deny list) and, in
--- the walk, `.git` and `node_modules`.
---
--- Entry points (one each, so another completion can hang off the same omnifunc):
---   M.start(line, col)        -- 0-based column of the `@` the cursor is in a mention of, or nil
---   M.items(base, cwd)        -- complete-items for `base` (the text from the `@`)
---   M.omnifunc(findstart, base)  -- the input float's 'omnifunc' (cwd: b:minime_cwd)
---   M.cmdline(arglead)        -- :MiniMeAsk's -complete function
local deny = require("minime.editor.deny")
local scope_mod = require("minime.editor.scope")

local uv = vim.uv or vim.loop

local M = {}

-- At most this many files are listed (a bigger tree is cut), and shown per completion.
M.MAX_FILES = 20000
M.MAX_ITEMS = 200
-- A listing is used for this long before it is refreshed (in the background).
local FRESH_NS = 5e9
-- How long a completion with no listing yet waits for git (then the walk answers).
local FIRST_WAIT_MS = 500
-- How long git may take to list the files (then it is killed and the walk answers).
local LIST_TIMEOUT_MS = 3000
local WALK_SKIP = { [".git"] = true, node_modules = true }
-- A tree that is no repository is walked on the main loop: at most this many entries.
M.MAX_WALK = 5000

-- cwd -> { list = listing() (relative, dirs end in "/"), at = hrtime, running, result }
local cache = {}
-- Listings started (each copies the index to a name of its own).
local listed = 0

local function denylist()
  local list = require("minime.config").options.deny
  return deny.compile(type(list) == "table" and list or scope_mod.DEFAULT_DENY)
end

local function allowed(c, rel)
  return not (deny.denies(c, rel) or deny.denies(c, vim.fs.basename((rel:gsub("/$", "")))))
end

-- Lines of git's answer taken into the listing per main-loop tick (the rest: the next tick).
local CHUNK = 1000

--- A listing under construction: relative paths with each parent directory once ("dir/"),
--- and their lower-case forms. String work only (the deny list is checked at completion, on
--- the matches), in slices, so a big repository never holds the main loop for long.
local function builder()
  return { files = {}, lower = {}, dirs = {} }
end

local function take(b, rel)
  local files, lower = b.files, b.lower
  if rel == "" or rel:find("%s") or #files >= M.MAX_FILES then
    return
  end
  files[#files + 1], lower[#files + 1] = rel, rel:lower()
  local dir = rel:match("^(.*)/[^/]*$")
  while dir and not b.dirs[dir] do
    b.dirs[dir] = true
    files[#files + 1], lower[#files + 1] = dir .. "/", (dir .. "/"):lower()
    dir = dir:match("^(.*)/[^/]*$")
  end
end

--- Take up to `budget` more lines of `text` (from b.pos) into `b`; true when all are in.
local function step(b, text, budget)
  local pos, n = b.pos or 1, 0
  while pos <= #text and n < budget and #b.files < M.MAX_FILES do
    local nl = text:find("\0", pos, true) or (#text + 1)
    take(b, text:sub(pos, nl - 1))
    pos, n = nl + 1, n + 1
  end
  b.pos = pos
  return pos > #text or #b.files >= M.MAX_FILES
end

local function listing(names)
  local b = builder()
  for _, rel in ipairs(names) do
    take(b, rel)
  end
  return b
end

--- A bounded walk of `cwd` (no repository): at most MAX_WALK entries.
local function walk(cwd)
  local names = {}
  local ok = pcall(function()
    for name, kind in
      vim.fs.dir(cwd, {
        depth = 8,
        skip = function(dir)
          return not WALK_SKIP[vim.fs.basename(dir)]
        end,
      })
    do
      if #names >= M.MAX_WALK then
        break
      end
      if not WALK_SKIP[vim.fs.basename(name)] then
        names[#names + 1] = kind == "directory" and name .. "/" or name
      end
    end
  end)
  return ok and names or {}
end

-- The listing of a finished git run (or the walk where git said no): a slice now, the rest on
-- later ticks; all of it at once with `now` (a completion waiting for it).
local function settle(entry, cwd, now)
  local res = entry.result
  if not (res and entry.running) then
    return
  end
  if res.code ~= 0 then
    entry.list, entry.at, entry.running = listing(walk(cwd)), uv.hrtime(), false
    return
  end
  entry.building = entry.building or builder()
  if step(entry.building, res.stdout or "", now and math.huge or CHUNK) then
    entry.list, entry.at, entry.running, entry.building = entry.building, uv.hrtime(), false, nil
  else
    vim.schedule(function()
      settle(entry, cwd)
    end)
  end
end

--- Start listing `cwd`'s files in the background (git, else the walk when git says no).
function M.prefetch(cwd)
  local entry = cache[cwd] or { at = 0 }
  cache[cwd] = entry
  if entry.running or uv.hrtime() - entry.at <= FRESH_NS then
    return entry
  end
  entry.running, entry.result, entry.building = true, nil, nil
  -- Every step answers in libuv's callbacks (fast): M.files may wait for it in a vim.wait
  -- that runs only fast events (a completion runs under textlock).
  local git = require("minime.git")
  local function answer(res)
    entry.result = res
    vim.schedule(function()
      settle(entry, cwd)
    end)
  end
  listed = listed + 1
  local n = listed
  git.repo(cwd, function(repo)
    if not repo then
      return answer({ code = 1 }) -- no repository (or no git): the walk
    end
    -- A copy of the user's index, read without blocking (a FIFO put there holds nothing).
    local copy = ("%s/listed-%d"):format(repo.dir, n)
    git.copy_regular(repo.git_dir .. "/index", copy, 0, function()
      git.copy_excludes(repo, function()
        local args = { "ls-files", "-z", "-co", "--exclude-standard" }
        local opts =
          { cwd = cwd, index = copy, text = false, timeout = LIST_TIMEOUT_MS, fast = true }
        git.run_in(repo, args, opts, function(res)
          uv.fs_unlink(copy)
          answer(res)
        end)
      end)
    end)
  end, true)
  return entry
end

--- `cwd`'s listing ({files, lower}): the cached one (refreshed in the background when old); with
--- none yet, git's answer within FIRST_WAIT_MS (only fast events run meanwhile), else none.
function M.files(cwd)
  local entry = M.prefetch(cwd)
  if not entry.list then
    vim.wait(FIRST_WAIT_MS, function()
      return entry.result ~= nil
    end, 5, true)
    settle(entry, cwd, true)
  end
  return entry.list or entry.building or listing({}) -- git still running: none yet
end

--- The listed file buffers in scope of `cwd`, relative.
local function buffers(cwd)
  local ok, scope =
    pcall(scope_mod.new, { cwd = cwd, deny = require("minime.config").options.deny })
  if not ok then
    return {}
  end
  local out = {}
  for _, entry in ipairs(scope:buffers()) do
    out[#out + 1] = entry.path
  end
  return out
end

--- The column (0-based) of the `@` that starts the mention the cursor is in, or nil.
---@param line string
---@param col integer 0-based cursor column (the text before it is line:sub(1, col))
function M.start(before)
  local at = before:match("()@%S*$")
  if at and (at == 1 or before:sub(at - 1, at - 1):match("%s")) then
    return at - 1
  end
  return nil
end

-- How many matches are ranked before the best MAX_ITEMS are kept.
local MAX_MATCHES = 1000

--- Complete-items for `base` ("@" and what follows) in `cwd`: buffers first, then files whose
--- path holds the typed text (those starting with it first); denied ones never.
---@param base string
---@param cwd string
function M.items(base, cwd)
  local typed = base:gsub("^@", ""):lower()
  local c = denylist()
  local items, seen = {}, {}
  local function add(rel, lower, menu, rank)
    if seen[rel] or #items >= MAX_MATCHES then
      return
    end
    local at = typed == "" and 1 or lower:find(typed, 1, true)
    if at and allowed(c, rel) then
      seen[rel] = true
      items[#items + 1] =
        { word = "@" .. rel, abbr = rel, menu = menu, rank = rank + (at == 1 and 0 or 1) }
    end
  end
  for _, rel in ipairs(buffers(cwd)) do
    add(rel, rel:lower(), "[buffer]", 0)
  end
  local list = M.files(cwd)
  local files, lower = list.files, list.lower
  for i = 1, #files do
    if #items >= MAX_MATCHES then
      break
    end
    local rel = files[i]
    add(rel, lower[i], rel:byte(-1) == 47 and "[dir]" or "[file]", 2) -- 47: "/"
  end
  table.sort(items, function(a, b)
    if a.rank ~= b.rank then
      return a.rank < b.rank
    end
    return a.abbr < b.abbr
  end)
  local out = {}
  for i = 1, math.min(#items, M.MAX_ITEMS) do
    items[i].rank = nil
    out[i] = items[i]
  end
  return out
end

--- :MiniMeAsk's completion of the word `arglead` (mentions only; nothing for other words).
---@param arglead string
---@return string[]
function M.cmdline(arglead)
  if arglead:sub(1, 1) ~= "@" then
    return nil -- another source's word (minime.ui.complete)
  end
  local out = {}
  for _, item in ipairs(M.items(arglead, vim.fn.getcwd())) do
    out[#out + 1] = item.word
  end
  return out
end

return M
