--- What the agent may see: normal listed file buffers whose real path (symlinks and `..`
--- resolved) lies under the session's working directory and matches no deny pattern. Nothing
--- else is listed, read or named by any tool, not even in an error message.
---
---   local scope = require("minime.editor.scope").new(ctx)   -- ctx.cwd, ctx.deny
---   scope:buffers()        -- in-scope entries { buf, path (relative, for the model), real }
---   scope:find(arg_path)   -- the entry a path given by the model designates, or nil
---   scope:file(name)       -- real, relative path of any file name when in scope, else nil
local deny = require("minime.editor.deny")
local fail = require("minime.editor.args").fail
local paths = require("minime.editor.paths")
local sanitize = require("minime.editor.text").sanitize

local uv = vim.uv or vim.loop
local getbufvar = vim.fn.getbufvar
local buflisted = vim.fn.buflisted
local denies = deny.denies
local join, realpath, basename = paths.join, paths.realpath, paths.basename

local M = {}

--- The deny list used when `ctx.deny` is not given (see deny.lua; config and docs name it here).
M.DEFAULT_DENY = deny.DEFAULT_DENY

--- See paths.lua (kept here: scope is where callers look for it).
M.realpath = realpath

--- The message for any path the model names that is not an in-scope buffer: the same whether
--- the file is out of scope, denied, not open, or does not exist.
M.NOT_OPEN = "path is not a file open in the editor under the working directory;"
  .. " call client_open_buffers for the list of open files and pass one of their paths"

-- How many files' verdicts a scope root keeps across calls before starting afresh.
local FILES_MAX = 20000

-- Whether a file passes the deny list. Both the resolved names and the name the buffer shows:
-- a symlink `.env -> conf/vars` is as secret as its target. The absolute paths too:
-- `**/.ssh/**` with the cwd inside ~/.ssh.
local function file_verdict(c, base, rel, shown, real, name)
  return not (
    denies(c, base)
    or (rel ~= base and denies(c, rel))
    or (shown ~= base and denies(c, shown))
    or denies(c, real)
    or (name ~= real and denies(c, name))
  )
end

local Scope = {}
Scope.__index = Scope

--- A scope for one call. Fails (model-facing) when the working directory does not exist.
---@param ctx table { cwd = string, deny = string[]|nil }
function M.new(ctx)
  local cwd = type(ctx) == "table" and ctx.cwd or nil
  local root = type(cwd) == "string" and cwd:sub(1, 1) == "/" and uv.fs_realpath(cwd) or nil
  if not root then
    fail("the session's working directory is not available in the editor")
  end
  local list = ctx.deny
  if type(list) ~= "table" then
    list = M.DEFAULT_DENY
  end
  local denylist = deny.compile(list)
  local files = denylist.files[root]
  if not files then
    files = { n = 0 }
    denylist.files[root] = files
  end
  return setmetatable({
    root = root,
    cwd = cwd,
    deny = list,
    by_buf = {},
    dirs = {},
    denylist = denylist,
    files = files, -- name -> { dir, real, rel } (see Scope:file)
  }, Scope)
end

--- The path of `real` relative to the root, or nil when it is not strictly under the root.
function Scope:relative(real)
  local root = self.root
  if root == "/" then
    return real ~= "/" and real:sub(2) or nil
  end
  if #real > #root + 1 and real:sub(1, #root + 1) == root .. "/" then
    return real:sub(#root + 2)
  end
  return nil
end

local getftype = vim.fn.getftype

--- A directory's change stamp is "settled" when its ctime is this many seconds before the
--- moment a file in it was checked: file timestamps are coarse (a clock tick), so a change in
--- the same tick as a check could leave the stamp as it was; a settled one cannot.
M.SETTLED_SECONDS = 2

-- "dev:ino:ctime" of a directory: any change of its entries (a file replaced by a symlink,
-- renamed over, deleted) moves its ctime, which utime cannot set back.
local function dir_stamp(real)
  local st = uv.fs_stat(real)
  return st and ("%d:%d:%d.%09d"):format(st.dev, st.ino, st.ctime.sec, st.ctime.nsec) or nil,
    st and st.ctime.sec or nil
end

--- Directory `dir` (absolute) resolved once per scope (one call):
--- { real = its real path, rel = its path relative to the root ("" for the root itself, nil
--- when not under it), stamp = its change stamp, settled = whether a file checked now may
--- trust that stamp later }, or false when it cannot be resolved.
function Scope:dir(dir)
  local d = self.dirs[dir]
  if d == nil then
    local real = uv.fs_realpath(dir == "" and "/" or dir)
    d = real and { real = real, rel = real == self.root and "" or self:relative(real) } or false
    if d and d.rel then
      local ctime
      d.stamp, ctime = dir_stamp(real)
      d.settled = ctime ~= nil and ctime < os.time() - M.SETTLED_SECONDS
    end
    self.dirs[dir] = d
  end
  return d
end

--- Real path and relative path of the file called `name` (absolute) when it is in scope.
---@return string|nil real, string|nil relative
function Scope:file(name)
  local real, rel, base, shown = nil, nil, nil, nil -- set on the fast path, else below
  -- The common case (the last name is no symlink) costs one lstat, the directory being resolved
  -- once per call: realpath(3) of the whole name would give the same. A symlink, a missing file
  -- (a new unsaved buffer) or an odd last name (`.`, `..`) takes the general path.
  -- What follows the lstat is a pure function of the name, the directory's real path, the root
  -- and the deny list: remembered across calls (open_buffers asks the same names each time),
  -- checked against the directory's real path resolved in this call. The lstat itself is
  -- skipped when the directory's change stamp is the one seen, settled, when the file was
  -- checked: nothing in it was replaced since (one stat per directory, not one per file).
  local files = self.files
  local known = files[name]
  local dir, last
  if known then
    dir, last = known.dirname, known.last
    local d = self:dir(dir)
    if d and d.rel and known.dir == d.real and known.stamp and known.stamp == d.stamp then
      return known.real or nil, known.rel or nil
    end
  else
    dir, last = name:match("^(/.*)/([^/]+)$")
    if not dir and name:match("^/[^/]+$") then
      dir, last = "", name:sub(2)
    end
  end
  if dir and last ~= "." and last ~= ".." then
    local ftype = getftype(name) -- lstat: "file", "dir", "link", "" when missing, ...
    if ftype == "dir" then
      return nil
    elseif ftype ~= "" and ftype ~= "link" then
      local d = self:dir(dir)
      if d then
        if not d.rel then
          return nil
        end
        if known and known.dir == d.real then
          known.stamp = d.settled and d.stamp or nil
          return known.real or nil, known.rel or nil
        end
        real = (d.real == "/" and "" or d.real) .. "/" .. last
        rel = d.rel == "" and last or d.rel .. "/" .. last
        base, shown = last, last
        local verdict = file_verdict(self.denylist, base, rel, shown, real, name)
        if files.n >= FILES_MAX then
          files = { n = 0 }
          self.denylist.files[self.root] = files
          self.files = files
        end
        files.n = files.n + 1
        files[name] = {
          dirname = dir,
          last = last,
          dir = d.real,
          stamp = d.settled and d.stamp or nil,
          real = verdict and real,
          rel = verdict and rel,
        }
        if not verdict then
          return nil
        end
        return real, rel
      end
    end
  end
  if not real then
    real = realpath(name)
    rel = real and self:relative(real)
    if not rel then
      return nil
    end
    local stat = uv.fs_stat(real)
    if stat and stat.type == "directory" then
      return nil
    end
    base, shown = basename(real), basename(name)
  end
  if not file_verdict(self.denylist, base, rel, shown, real, name) then
    return nil
  end
  return real, rel
end

--- Whether `text` (a path as a user typed it: relative to cwd, absolute, `~/...`, `$HOME/...`,
--- `${VAR}/...`) names a place in scope. Used to keep outside paths out of free text we relay
--- (quickfix titles).
function Scope:names_inside(text)
  if text:find("%z") then
    return false
  end
  local path = paths.expand(text)
  if not path then
    return false
  end
  if path:sub(1, 1) ~= "/" then
    path = join(self.root, { path })
  end
  local real = realpath(path)
  local rel = real and (real == self.root and "." or self:relative(real))
  if not rel then
    return false
  end
  return not deny.any(self.deny, { vim.fs.basename(real), rel, real, vim.fs.basename(text) })
end

--- `text` (a language server's words: an error, a hover) with every path that leads out of
--- scope or to a denied file replaced by "[outside]": an absolute or `~/` path, or a
--- `file://` URI, among the words and between the quotes, brackets and separators around it.
---@param text string
---@return string
function Scope:scrub(text)
  return (
    text:gsub("%S+", function(word)
      return (
        word:gsub("[^=:,;\"'`()<>%[%]{}|]+", function(piece)
          local path = piece:match("^~?/.*")
          if path and not self:names_inside((path:gsub("^/+", "/"))) then
            return "[outside]"
          end
          return nil
        end)
      )
    end)
  )
end

-- Relative paths as the model reads them (sanitized), remembered: the same buffers are listed
-- call after call.
local shown_paths, shown_n = {}, 0
local function shown_path(rel)
  local path = shown_paths[rel]
  if not path then
    if shown_n >= FILES_MAX then
      shown_paths, shown_n = {}, 0
    end
    path = sanitize(rel)
    shown_paths[rel], shown_n = path, shown_n + 1
  end
  return path
end

--- The in-scope entry of buffer `buf`, or nil: a normal (buftype ""), listed buffer with a
--- file name (not a `scheme://` name) in scope. `listed = false` skips the listed check (files
--- a quickfix list names have buffers that are not listed).
function Scope:buffer(buf, listed)
  if type(buf) ~= "number" or not vim.api.nvim_buf_is_valid(buf) then
    return nil
  end
  -- getbufvar: ~0.5 us a call, against ~2 us for nvim_get_option_value and ~3 us for vim.bo;
  -- buflisted(): ~0.25 us.
  if getbufvar(buf, "&buftype") ~= "" or (listed ~= false and buflisted(buf) == 0) then
    return nil
  end
  local cached = self.by_buf[buf]
  if cached ~= nil then
    return cached or nil
  end
  local name = vim.api.nvim_buf_get_name(buf)
  local real, rel
  if name ~= "" and not name:match("^%a[%w+.-]*://") then
    real, rel = self:file(name)
  end
  local entry = real and { buf = buf, real = real, path = shown_path(rel) } or false
  self.by_buf[buf] = entry
  return entry or nil
end

--- The in-scope buffers, in buffer number order.
function Scope:buffers()
  local list = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local entry = self:buffer(buf)
    if entry then
      list[#list + 1] = entry
    end
  end
  return list
end

--- The in-scope buffer the model means by `path` (relative to cwd or absolute, resolved the
--- same way as buffer names; also the exact path string we showed), or nil.
function Scope:find(path)
  if type(path) ~= "string" or path == "" or path:find("%z") then
    return nil
  end
  local abs = path:sub(1, 1) == "/" and path or join(self.root, { path })
  local real = realpath(abs)
  for _, entry in ipairs(self:buffers()) do
    if entry.real == real or entry.path == path then
      return entry
    end
  end
  return nil
end

--- The file buffer the user is working in: the current window's buffer when it is a normal
--- file buffer; else (the cursor is in a prompt or chat float) the previous window's one.
---@return integer|nil
function M.user_buffer()
  local function file_buf(win)
    if not win or win == 0 or not vim.api.nvim_win_is_valid(win) then
      return nil
    end
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.bo[buf].buftype == "" and vim.api.nvim_win_get_config(win).relative == "" then
      return buf
    end
    return nil
  end
  return file_buf(vim.api.nvim_get_current_win()) or file_buf(vim.fn.win_getid(vim.fn.winnr("#")))
end

return M
