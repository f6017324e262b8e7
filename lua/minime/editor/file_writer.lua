--- Writing a file that is not loaded in the editor, off the main loop: each step (lstat, open,
--- fstat, write, close) is a libuv request answered from its thread pool while the tool call
--- waits (async.lua), so a slow disk never holds the editor. Only a regular file, or a new one:
--- a FIFO would make open() wait for a reader (it is refused, and opened O_NONBLOCK in case one
--- took the file's place since); a symlink put in place since the scope check (the file, or one
--- of its directories) is never written through: the open file must be the very inode checked,
--- and the path the scope check resolved (opened_path.lua), before anything is truncated.
---
---   local old, problem = file_writer.stat(path)   -- {size} of the file, false when it is new
---   file_writer.write(path, content)              -- nil, or a message saying why not
local async = require("minime.editor.async")
local opened_path = require("minime.editor.opened_path")

local uv = vim.uv or vim.loop

local M = {}

local c = uv.constants
-- An existing file is opened without O_TRUNC and truncated only once the open file is known to
-- be the one checked (same device and inode); a new one with O_EXCL, which follows no symlink.
local OPEN_EXISTING = bit.bor(c.O_WRONLY, c.O_NONBLOCK or 0)
local OPEN_NEW = bit.bor(c.O_WRONLY, c.O_CREAT, c.O_EXCL, c.O_NONBLOCK or 0)
local SWAPPED = "the file was replaced while it was being written (by a link?): not written"

-- The libuv request `op(...)`, awaited off the main loop (synchronously outside a tool call).
-- -> err|nil, value
local function step(op, ...)
  local args = { n = select("#", ...), ... }
  if not async.can_wait() then
    local value, err = op(unpack(args, 1, args.n))
    return value == nil and (err or "failed") or nil, value
  end
  return async.wait(function(done)
    args[args.n + 1] = done
    op(unpack(args, 1, args.n + 1))
  end)
end

local function not_regular(kind)
  return string.format("not a regular file (a %s)", kind)
end

--- What is at `path` now: its lstat (a table with `size`), false when nothing is, or nil and a
--- message when it is no regular file (it must not be written).
---@return table|false|nil stat, string|nil problem
function M.stat(path)
  local err, stat = step(uv.fs_lstat, path)
  if err and err:match("^ENOENT") then
    return false
  elseif err then
    return nil, err
  end
  if stat.type ~= "file" then
    return nil, not_regular(stat.type)
  end
  return stat
end

--- Write `content` to `path` (created when missing, else truncated). nil when done, else a
--- message saying why not (the file may then be unchanged or, after a failed write, partial).
---@return string|nil problem
function M.write(path, content)
  local checked, problem = M.stat(path)
  if problem then
    return problem
  end
  local flags = checked and OPEN_EXISTING or OPEN_NEW
  local err, fd = step(uv.fs_open, path, flags, 420) -- 0644, less the umask
  if err or not fd then
    if err and err:match("^EEXIST") then
      return SWAPPED -- something took the new file's name since the check
    end
    return err and err:match("^ENXIO") and not_regular("fifo") or tostring(err)
  end
  local serr, stat = step(uv.fs_fstat, fd)
  local elsewhere = opened_path.matches(fd, path) == false
  if elsewhere and not checked then
    -- We created it, out of the cwd (a directory became a link since the check): undo that.
    local where = uv.fs_readlink("/proc/self/fd/" .. fd)
    if where then
      step(uv.fs_unlink, where)
    end
  end
  local wrong = serr
    or (elsewhere and SWAPPED)
    or (stat.type ~= "file" and not_regular(stat.type))
    or (checked and (stat.dev ~= checked.dev or stat.ino ~= checked.ino) and SWAPPED)
  if not wrong and checked then
    wrong = select(1, step(uv.fs_ftruncate, fd, 0))
  end
  if wrong then
    step(uv.fs_close, fd)
    return wrong
  end
  local werr, written = step(uv.fs_write, fd, content, 0)
  local cerr = select(1, step(uv.fs_close, fd))
  if werr then
    return werr
  elseif written ~= #content then
    return string.format("wrote %d of %d bytes", written or 0, #content)
  end
  return cerr
end

return M
