--- Text as the model receives it: valid UTF-8, no NUL, no line longer than a cap, no more lines
--- or bytes than the limits; read from a loaded buffer (live text) or, for a listed buffer that
--- is not loaded (e.g. restored by a session), from its file on disk without loading it (loading
--- would run the user's autocommands, attach LSP clients, create swap files).
---
--- A file on disk is read off the main loop (libuv's thread pool, see async.lua), only when it
--- is a regular file (a FIFO put in its place would block a read forever), at most
--- max_file_bytes of it and within read_timeout_ms: anything else is an error message
--- (file_reader.lua); it is split into lines as Neovim would (file_lines.lua). This module
--- cuts text to the limits and picks the live buffer or the file.
local file_lines = require("minime.editor.file_lines")
local file_reader = require("minime.editor.file_reader")

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

--- Reading files not loaded (file_reader.lua, file_lines.lua), reachable from here as before.
M.open = file_reader.open
M.too_large = file_reader.too_large

--- Walks the file at `path` as Neovim would split it into lines (see file_lines.read); the
--- limits default to M.DEFAULTS.
---@return integer|nil total_lines, string|nil error
function M.read_file(path, first, last, add, limits)
  return file_lines.read(path, first, last, add, limits or M.DEFAULTS)
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
  local stat = uv.fs_stat(entry.real)
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
