--- Text as the model receives it: valid UTF-8, no NUL, no line longer than a cap, no more lines
--- or bytes than the limits; read from a loaded buffer (live text) or, for a listed buffer that
--- is not loaded (e.g. restored by a session), from its file on disk without loading it (loading
--- would run the user's autocommands, attach LSP clients, create swap files).
---
--- A file on disk is read off the main loop (libuv's thread pool, see async.lua), only when it
--- is a regular file (a FIFO put in its place would block a read forever), at most
--- max_file_bytes of it and within read_timeout_ms: anything else is an error message.
local async = require("minime.editor.async")

local uv = vim.uv or vim.loop

local M = {}

M.DEFAULTS = {
  max_lines = 2000, -- lines in one answer
  max_bytes = 100000, -- bytes of text in one answer
  max_line_bytes = 2000, -- bytes of one line; the rest is replaced by a note
  max_file_bytes = 64 * 1024 * 1024, -- bytes of a file not loaded that we read at all
  read_timeout_ms = 10000, -- time to read such a file
}

--- U+FFFD, the replacement for NUL bytes and for bytes that are not UTF-8.
M.REPLACEMENT = "\239\191\189"

local byte, sub = string.byte, string.sub

local function is_continuation(b)
  return b ~= nil and b >= 0x80 and b <= 0xBF
end

--- `s` with NUL and every byte that is not part of a valid UTF-8 sequence replaced by U+FFFD
--- (the JSON sent to the agent must be valid UTF-8; overlong forms and surrogates are invalid).
---@param s string
---@return string
function M.sanitize(s)
  if not s:find("[%z\128-\255]") then
    return s -- the common case (ASCII), one scan
  end
  if s:find("%z") then
    s = s:gsub("%z", M.REPLACEMENT)
  end
  local i = s:find("[\128-\255]")
  if not i then
    return s
  end
  local out, run_start, len = {}, 1, #s
  while i do
    local c = byte(s, i)
    local size = (c >= 0xC2 and c <= 0xDF) and 2
      or (c >= 0xE0 and c <= 0xEF) and 3
      or (c >= 0xF0 and c <= 0xF4) and 4
      or 0
    local ok = size > 0 and i + size - 1 <= len
    if ok then
      local c2 = byte(s, i + 1)
      local lo, hi = 0x80, 0xBF
      if c == 0xE0 then
        lo = 0xA0
      elseif c == 0xED then
        hi = 0x9F
      elseif c == 0xF0 then
        lo = 0x90
      elseif c == 0xF4 then
        hi = 0x8F
      end
      ok = c2 >= lo and c2 <= hi
      for k = 2, size - 1 do
        ok = ok and is_continuation(byte(s, i + k))
      end
    end
    if ok then
      i = i + size
    else
      out[#out + 1] = sub(s, run_start, i - 1)
      out[#out + 1] = M.REPLACEMENT
      i = i + 1
      run_start = i
    end
    i = s:find("[\128-\255]", i)
  end
  out[#out + 1] = sub(s, run_start)
  return table.concat(out)
end

--- One line ready for the model: cut to `cap` bytes (on a character boundary) with a note
--- saying how long it was, then sanitized. `full` is the line's real length when `raw` is only
--- its head.
---@param raw string
---@param cap integer
---@param full? integer
---@return string
function M.line(raw, cap, full)
  full = full or #raw
  if full <= cap then
    return M.sanitize(raw)
  end
  local cut = cap
  for _ = 1, 3 do
    if cut > 0 and is_continuation(byte(raw, cut + 1)) then
      cut = cut - 1
    end
  end
  return M.sanitize(sub(raw, 1, cut)) .. string.format(" [line cut: %d bytes long]", full)
end

--- The limits of a call: ctx values when they are positive numbers, else the defaults.
function M.limits(ctx)
  local limits = {}
  for key, default in pairs(M.DEFAULTS) do
    local v = type(ctx) == "table" and ctx[key] or nil
    limits[key] = (type(v) == "number" and v >= 1) and math.floor(v) or default
  end
  return limits
end

--- Collects prepared lines until `max_lines` or `max_bytes` would be passed (the first line is
--- always taken, so a caller asking for the rest always makes progress).
---@return table collector with add(raw, full) -> boolean (false: full, not added) and .lines
function M.collector(limits)
  local c = { lines = {}, bytes = 0, full = false }
  function c.add(raw, full)
    if c.full then
      return false
    end
    local line = M.line(raw, limits.max_line_bytes, full)
    local n = #c.lines
    if n >= limits.max_lines or (n > 0 and c.bytes + #line + 1 > limits.max_bytes) then
      c.full = true
      return false
    end
    c.lines[n + 1] = line
    c.bytes = c.bytes + #line + 1
    return true
  end
  return c
end

local CHUNK = 262144

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

--- The file at `path` opened for M.read_file: nil (no error) when it cannot be opened (a new
--- file), nil and a message when it must not be read.
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
  local problem = serr == TIMED_OUT and timed_out_message(limits)
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

-- Neovim's 'fileformats' "unix,dos": dos when every line ends in CR LF, unix as soon as one
-- LF has no CR before it. Only asked when the first line ends in CR LF; leaves the file
-- position where it was. -> dos, err
local function all_crlf(f)
  local here = f:seek()
  f:seek("set", 0)
  local prev, dos = nil, true
  while true do
    local chunk, err = f:read(CHUNK)
    if err then
      return false, err
    end
    if not chunk then
      break
    end
    if chunk:find("[^\r]\n") or (byte(chunk, 1) == 10 and prev ~= "\r") then
      dos = false
      break
    end
    prev = sub(chunk, -1)
  end
  f:seek("set", here)
  return dos
end

--- Walks the file at `path` as Neovim would split it into lines, handing lines first..last to
--- `add(raw, full)` (raw is at most a line cap's worth of bytes; stop by returning false) and
--- counting all lines. A file that cannot be opened counts as one empty line (an empty buffer);
--- one that must not be read (see M.open) gives nil and the reason.
---@return integer|nil total_lines, string|nil error
function M.read_file(path, first, last, add, limits)
  limits = limits or M.DEFAULTS
  local f, problem = M.open(path, limits)
  if not f then
    if problem then
      return nil, problem
    end
    if first <= 1 and last >= 1 then
      add("", 0)
    end
    return 1
  end
  local keep_max = limits.max_line_bytes + 3
  local lnum = 1
  local parts, kept, len, lastbyte = {}, 0, 0, nil
  local dos -- fileformat "dos" (see all_crlf): a CR before each LF is not part of the line
  local file_last
  local collecting = first <= last

  local function finish(ended)
    local s = table.concat(parts)
    if dos and ended and lastbyte == "\r" then
      len = len - 1
      if #s > len then
        s = sub(s, 1, len)
      end
    end
    if add(s, len) == false then
      collecting = false
    end
  end

  while true do
    local chunk, err = f:read(CHUNK)
    if err then
      f:close()
      return nil, err
    end
    if not chunk then
      break
    end
    file_last = sub(chunk, -1)
    local pos, n = 1, #chunk
    while pos <= n do
      if not collecting or lnum > last then
        -- Only counting now (a plain find loop: gsub is ~15 times slower here).
        while true do
          local nl = chunk:find("\n", pos, true)
          if not nl then
            break
          end
          lnum = lnum + 1
          pos = nl + 1
        end
        break
      end
      if lnum < first and dos ~= nil then
        -- A line before the range: only count it.
        local nl = chunk:find("\n", pos, true)
        if not nl then
          break
        end
        lnum = lnum + 1
        len, lastbyte = 0, nil
        pos = nl + 1
      else
        local nl = chunk:find("\n", pos, true)
        local stop = nl and nl - 1 or n
        if stop >= pos then
          if lnum >= first and kept < keep_max then
            local piece = sub(chunk, pos, math.min(stop, pos + keep_max - kept - 1))
            parts[#parts + 1] = piece
            kept = kept + #piece
          end
          len = len + (stop - pos + 1)
          lastbyte = sub(chunk, stop, stop)
        end
        if not nl then
          break
        end
        if dos == nil then
          local err
          dos = len > 0 and lastbyte == "\r"
          if dos then
            dos, err = all_crlf(f)
            if err then
              f:close()
              return nil, err
            end
          end
        end
        if lnum >= first then
          finish(true)
        end
        lnum = lnum + 1
        parts, kept, len, lastbyte = {}, 0, 0, nil
        pos = nl + 1
      end
    end
  end
  f:close()
  local has_tail = file_last ~= "\n" -- also true for an empty file: one empty line
  if has_tail and collecting and lnum >= first and lnum <= last then
    finish(false)
  end
  return lnum - 1 + (has_tail and 1 or 0)
end

-- real path -> { stamp, total }: counting the lines of a big file that is not loaded (a log
-- restored by a session) would otherwise cost every open_buffers call a full read.
local counts = {}

--- Number of lines of an in-scope buffer entry ({buf, real}); nil and the reason when its file
--- (not loaded) must not be read.
---@return integer|nil total, string|nil error
function M.line_count(entry, limits)
  if vim.api.nvim_buf_is_loaded(entry.buf) then
    return vim.api.nvim_buf_line_count(entry.buf)
  end
  local stat = (vim.uv or vim.loop).fs_stat(entry.real)
  local stamp = stat and table.concat({ stat.size, stat.mtime.sec, stat.mtime.nsec, stat.ino }, ":")
  local known = counts[entry.real]
  if stamp and known and known.stamp == stamp then
    return known.total
  end
  local total, err = M.read_file(entry.real, 1, 0, function() end, limits)
  counts[entry.real] = (stamp and total) and { stamp = stamp, total = total } or nil
  return total, err
end

local BATCH = 64

--- Lines first..last (clamped to the end) of an in-scope buffer entry, within the limits; nil
--- and the reason when its file (not loaded) must not be read.
---@return { lines: string[], total: integer }|nil, string|nil
function M.read(entry, first, last, limits)
  local c = M.collector(limits)
  local total
  if vim.api.nvim_buf_is_loaded(entry.buf) then
    total = vim.api.nvim_buf_line_count(entry.buf)
    local stop = math.min(last, total)
    local from = first
    while from <= stop and not c.full do
      local to = math.min(stop, from + BATCH - 1)
      for _, raw in ipairs(vim.api.nvim_buf_get_lines(entry.buf, from - 1, to, false)) do
        if not c.add(raw) then
          break
        end
      end
      from = to + 1
    end
  else
    local err
    total, err = M.read_file(entry.real, first, last, c.add, limits)
    if not total then
      return nil, err
    end
  end
  return { lines = c.lines, total = total }
end

return M
