--- Reading a file that is not loaded in the editor, safely: only a regular file (a FIFO put in
--- its place would block a read forever; it is opened O_NONBLOCK, then refused), at most
--- max_file_bytes of it, and within read_timeout_ms. Inside a tool call each step waits off the
--- main loop (libuv's thread pool, see async.lua); outside one it runs synchronously.
---
---   local f, problem = file_reader.open(path, limits)  -- nil, nil: cannot be opened (new file)
---   f:read(n) / f:seek() / f:seek("set", n) / f:close()
---   local text, problem = file_reader.read_all(path, limits)
local async = require("minime.editor.async")

local opened_path = require("minime.editor.opened_path")

local uv = vim.uv or vim.loop

local M = {}

M.SWAPPED = "the file was replaced while it was being read (by a link?): not read"

-- O_NONBLOCK: opening a FIFO for reading must not wait for a writer (fstat then refuses it).
local OPEN_FLAGS = bit.bor(uv.constants.O_RDONLY, uv.constants.O_NONBLOCK or 0)

local TIMED_OUT = {}

-- fs_wait: runs the libuv request `op(..., callback)` and waits for it off the main loop (at most until
-- `deadline`, uv.hrtime), or runs it synchronously outside a tool call. -> err|nil, value
local function fs_wait(deadline, op, ...)
  local args = { n = select("#", ...), ... }
  if not async.can_wait() then
    local value, err = op(unpack(args, 1, args.n))
    return value == nil and (err or "failed") or nil, value
  end
  local late = false
  return async.wait(function(done)
    local timer = uv.new_timer()
    timer:start(math.max(0, math.floor((deadline - uv.hrtime()) / 1e6)), 0, function()
      late = true
      timer:close()
      done(TIMED_OUT)
    end)
    args[args.n + 1] = function(err, value)
      if late then
        if op == uv.fs_open and value then
          uv.fs_close(value) -- opened after we gave up: release it
        end
        return
      end
      timer:stop()
      timer:close()
      done(err, value)
    end
    op(unpack(args, 1, args.n + 1))
  end)
end

local function timed_out_message(limits)
  return string.format("timed out reading it from disk (%d ms)", limits.read_timeout_ms)
end

local Reader = {}
Reader.__index = Reader

--- The file at `path` (the real path the scope check accepted) opened for reading
--- (file_lines.lua): nil (no error) when it cannot be opened (a new file), nil and a message
--- when it must not be read (also when what was opened is not `path`: see opened_path.lua).
---@return table|nil reader, string|nil error
function M.open(path, limits)
  local deadline = uv.hrtime() + limits.read_timeout_ms * 1e6
  local err, fd = fs_wait(deadline, uv.fs_open, path, OPEN_FLAGS, 0)
  if err == TIMED_OUT then
    return nil, timed_out_message(limits)
  elseif err or not fd then
    return nil
  end
  local reader = setmetatable({ fd = fd, pos = 0, deadline = deadline, limits = limits }, Reader)
  local serr, stat = fs_wait(deadline, uv.fs_fstat, fd)
  local problem = opened_path.matches(fd, path) == false and M.SWAPPED
    or serr == TIMED_OUT and timed_out_message(limits)
    or serr and "cannot read it from disk"
    or stat.type ~= "file" and string.format("not a regular file (a %s) on disk", stat.type)
    or stat.size > limits.max_file_bytes and M.too_large(limits)
  if problem then
    reader:close()
    return nil, problem
  end
  return reader
end

function M.too_large(limits)
  return string.format(
    "not loaded in the editor and too large to read beyond %d bytes",
    limits.max_file_bytes
  )
end

--- The whole of the file at `path` (as M.open): its text; nil (no error) when it cannot be
--- opened; nil and a message when it must not or cannot be read, or is over the limits.
---@return string|nil text, string|nil error
function M.read_all(path, limits)
  local reader, problem = M.open(path, limits)
  if not reader then
    return nil, problem
  end
  local parts = {}
  while true do
    local data, err = reader:read(256 * 1024)
    if err then
      reader:close()
      return nil, err
    end
    if not data then
      break
    end
    parts[#parts + 1] = data
  end
  reader:close()
  return table.concat(parts)
end

--- The next `n` bytes; nil at the end; nil and a message when the read fails or goes past
--- the limits (the file may grow while it is read).
function Reader:read(n)
  if self.pos >= self.limits.max_file_bytes then
    return nil, M.too_large(self.limits)
  end
  local err, data = fs_wait(self.deadline, uv.fs_read, self.fd, n, self.pos)
  if err then
    return nil, err == TIMED_OUT and timed_out_message(self.limits) or "cannot read it from disk"
  end
  if not data or data == "" then
    return nil
  end
  self.pos = self.pos + #data
  return data
end

--- As file:seek: no argument gives the position, ("set", n) moves to n.
function Reader:seek(whence, offset)
  if whence == "set" then
    self.pos = offset or 0
  end
  return self.pos
end

function Reader:close()
  if self.fd then
    uv.fs_close(self.fd, function() end)
    self.fd = nil
  end
end

return M
