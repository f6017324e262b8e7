--- The lines Neovim would make of a file that is not loaded: split on LF, CR LF stripped when
--- 'fileformats' would pick dos, a last line without LF counted, each line's head kept only up
--- to the line cap. The file is read through file_reader.lua (its bounds and deadline hold).
local file_reader = require("minime.editor.file_reader")

local byte, sub = string.byte, string.sub

local M = {}

local CHUNK = 262144

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
--- one that must not be read (see file_reader.open) gives nil and the reason.
---@return integer|nil total_lines, string|nil error
function M.read(path, first, last, add, limits)
  local f, problem = file_reader.open(path, limits)
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
          local crlf_err
          dos = len > 0 and lastbyte == "\r"
          if dos then
            dos, crlf_err = all_crlf(f)
            if crlf_err then
              f:close()
              return nil, crlf_err
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

return M
