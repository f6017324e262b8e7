--- Writing a file that is not loaded in the editor, off the main loop: each step (lstat, open,
--- fstat, write, close) is a libuv request answered from its thread pool while the tool call
--- waits (async.lua), so a slow disk never holds the editor. Only a regular file, or a new one:
--- a FIFO would make open() wait for a reader (it is refused, and opened O_NONBLOCK in case one
--- took the file's place since), a symlink put in place since the scope check is refused.
---
---   local old, problem = file_writer.stat(path)   -- {size} of the file, false when it is new
---   file_writer.write(path, content)              -- nil, or a message saying why not
local async = require("minime.editor.async")

local uv = vim.uv or vim.loop

local M = {}

local c = uv.constants
local OPEN_FLAGS = bit.bor(c.O_WRONLY, c.O_CREAT, c.O_TRUNC, c.O_NONBLOCK or 0)

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
  local _, problem = M.stat(path)
  if problem then
    return problem
  end
  local err, fd = step(uv.fs_open, path, OPEN_FLAGS, 420) -- 0644, less the umask
  if err or not fd then
    return err and err:match("^ENXIO") and not_regular("fifo") or tostring(err)
  end
  local serr, stat = step(uv.fs_fstat, fd)
  if serr or stat.type ~= "file" then
    step(uv.fs_close, fd)
    return serr or not_regular(stat.type)
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
