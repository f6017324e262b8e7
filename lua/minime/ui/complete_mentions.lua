--- Completion of `@path` mentions (lua/minime/editor/mentions.lua): the open buffers under the
--- cwd, then its files — git's index (`git ls-files -co --exclude-standard`, run with
--- vim.system and cached a few seconds) where the cwd is a repository, else a bounded walk —
--- leaving out denied files (the deny list) and, in the walk, `.git` and `node_modules`.
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
local WALK_SKIP = { [".git"] = true, node_modules = true }

-- cwd -> { files = string[] (relative, dirs end in "/"), at = hrtime, running = bool }
local cache = {}

local function denylist()
  local list = require("minime.config").options.deny
  return deny.compile(type(list) == "table" and list or scope_mod.DEFAULT_DENY)
end

local function allowed(c, rel)
  return not (deny.denies(c, rel) or deny.denies(c, vim.fs.basename((rel:gsub("/$", "")))))
end

--- `names` (relative paths) kept where allowed, with each parent directory once.
local function listing(names)
  local c, files, dirs = denylist(), {}, {}
  for _, rel in ipairs(names) do
    if #files >= M.MAX_FILES then
      break
    end
    if rel ~= "" and not rel:find("%s") and allowed(c, rel) then
      files[#files + 1] = rel
      local dir = rel:match("^(.*)/[^/]*$")
      while dir and not dirs[dir] do
        dirs[dir] = true
        if allowed(c, dir .. "/") then
          files[#files + 1] = dir .. "/"
        end
        dir = dir:match("^(.*)/[^/]*$")
      end
    end
  end
  return files
end

--- A bounded walk of `cwd` (no repository): at most MAX_FILES entries.
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
      if #names >= M.MAX_FILES then
        break
      end
      if not WALK_SKIP[vim.fs.basename(name)] then
        names[#names + 1] = kind == "directory" and name .. "/" or name
      end
    end
  end)
  return ok and names or {}
end

-- The listing of a finished git run (or the walk where git said no), once.
local function settle(entry, cwd)
  local res = entry.result
  if res and entry.running then
    local ok = res.code == 0
    local names = ok and vim.split(res.stdout or "", "\n", { trimempty = true }) or walk(cwd)
    entry.files, entry.at, entry.running = listing(names), uv.hrtime(), false
  end
end

--- Start listing `cwd`'s files in the background (git, else the walk when git says no).
function M.prefetch(cwd)
  local entry = cache[cwd] or { at = 0 }
  cache[cwd] = entry
  if entry.running or uv.hrtime() - entry.at <= FRESH_NS then
    return entry
  end
  entry.running, entry.result = true, nil
  local cmd = { "git", "ls-files", "-co", "--exclude-standard" }
  local started = pcall(vim.system, cmd, { cwd = cwd, text = true }, function(res)
    entry.result = res -- a fast context: settled on the main loop
    vim.schedule(function()
      settle(entry, cwd)
    end)
  end)
  if not started then -- no git
    entry.result = { code = 1 }
    settle(entry, cwd)
  end
  return entry
end

--- `cwd`'s files (relative): the cached listing (refreshed in the background when old); with
--- none yet, git's answer within FIRST_WAIT_MS (only fast events run meanwhile), else the walk.
function M.files(cwd)
  local entry = M.prefetch(cwd)
  if not entry.files then
    vim.wait(FIRST_WAIT_MS, function()
      return entry.result ~= nil
    end, 5, true)
    settle(entry, cwd)
  end
  return entry.files or listing(walk(cwd))
end

--- The listed file buffers in scope of `cwd`, relative.
local function buffers(cwd)
  local ok, scope = pcall(scope_mod.new, { cwd = cwd, deny = require("minime.config").options.deny })
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
function M.start(line, col)
  local before = line:sub(1, col)
  local at = before:match("()@%S*$")
  if at and (at == 1 or before:sub(at - 1, at - 1):match("%s")) then
    return at - 1
  end
  return nil
end

--- Complete-items for `base` ("@" and what follows) in `cwd`: buffers first, then files whose
--- path holds the typed text (those starting with it first).
---@param base string
---@param cwd string
function M.items(base, cwd)
  local typed = base:gsub("^@", ""):lower()
  local items, seen = {}, {}
  local function add(rel, menu, rank)
    local lower = rel:lower()
    if seen[rel] or #items >= M.MAX_ITEMS then
      return
    end
    local at = typed == "" and 1 or lower:find(typed, 1, true)
    if at then
      seen[rel] = true
      items[#items + 1] = { word = "@" .. rel, abbr = rel, menu = menu, rank = rank + (at == 1 and 0 or 1) }
    end
  end
  for _, rel in ipairs(buffers(cwd)) do
    add(rel, "[buffer]", 0)
  end
  for _, rel in ipairs(M.files(cwd)) do
    add(rel, rel:sub(-1) == "/" and "[dir]" or "[file]", 2)
  end
  table.sort(items, function(a, b)
    if a.rank ~= b.rank then
      return a.rank < b.rank
    end
    return a.abbr < b.abbr
  end)
  for _, item in ipairs(items) do
    item.rank = nil
  end
  return items
end

--- The input float's 'omnifunc' ("v:lua.require'minime.ui.complete_mentions'.omnifunc").
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local col = vim.api.nvim_win_get_cursor(0)[2]
    return M.start(vim.api.nvim_get_current_line(), col) or -3
  end
  local cwd = vim.b.minime_cwd or vim.fn.getcwd()
  return M.items(base, cwd)
end

--- :MiniMeAsk's completion of the word `arglead` (mentions only; nothing for other words).
---@param arglead string
---@return string[]
function M.cmdline(arglead)
  if arglead:sub(1, 1) ~= "@" then
    return {}
  end
  local out = {}
  for _, item in ipairs(M.items(arglead, vim.fn.getcwd())) do
    out[#out + 1] = item.word
  end
  return out
end

return M
