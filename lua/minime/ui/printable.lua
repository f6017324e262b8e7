--- Any text an agent sends, made printable before it lands where Neovim does not escape it
--- itself: a float's title or footer, a winbar or statusline, fold text, vim.notify, a
--- vim.ui.select item. A title's text goes to the terminal as it is: an ESC in a mode name
--- (`ESC]0;…`, `ESC[2J`) reached the terminal and garbled the screen, a newline broke the row.
---
--- One line: a byte that is not UTF-8 is U+FFFD; each line break (CR LF, LF, CR, U+2028,
--- U+2029) is "⏎"; every other control character is shown as Vim shows it in a buffer (ESC
--- as "^[", DEL as "^?"), a C1 control (U+0080–U+009F: CSI, OSC as one character) and a
--- bidirectional override as U+FFFD; a text longer than `max` characters is cut and ends with
--- "…". `%` is not touched here: the statusline piece escapes it (minime.status).
local M = {}

--- Characters of one printable line, by default.
M.MAX = 200

--- Characters of a printable message (several lines), by default.
M.MAX_TEXT = 4000

local REPLACEMENT = "\239\191\189" -- U+FFFD

local function caret(c)
  local b = c:byte()
  return b == 127 and "^?" or "^" .. string.char(b + 64)
end

-- `s` with each byte that is not part of a UTF-8 sequence as U+FFFD: a lone 0x9b is CSI to a
-- terminal that reads 8-bit controls.
local function valid_utf8(s)
  if not s:find("[\128-\255]") then
    return s
  end
  local out, i, n = {}, 1, #s
  while i <= n do
    local b = s:byte(i)
    local len = b < 0x80 and 1
      or b >= 0xC2 and b <= 0xDF and 2
      or b >= 0xE0 and b <= 0xEF and 3
      or b >= 0xF0 and b <= 0xF4 and 4
      or 0
    local ok = len > 0 and i + len - 1 <= n
    for k = i + 1, ok and i + len - 1 or 0 do
      local c = s:byte(k)
      -- The second byte of E0, ED, F0 and F4 has a narrower range (no overlong forms, no
      -- surrogates, nothing past U+10FFFF): Neovim hands such bytes over as they are.
      local lo, hi = 0x80, 0xBF
      if k == i + 1 then
        lo = (b == 0xE0 and 0xA0) or (b == 0xF0 and 0x90) or 0x80
        hi = (b == 0xED and 0x9F) or (b == 0xF4 and 0x8F) or 0xBF
      end
      if c < lo or c > hi then
        ok = false
        break
      end
    end
    if ok then
      out[#out + 1] = s:sub(i, i + len - 1)
      i = i + len
    else
      out[#out + 1] = REPLACEMENT
      i = i + 1
    end
  end
  return table.concat(out)
end

local function cut(s, max)
  if #s > max and vim.fn.strchars(s) > max then
    return vim.fn.strcharpart(s, 0, max - 1) .. "…"
  end
  return s
end

--- `s` (any value: nil and vim.NIL are "") as one printable line of at most `max` characters.
---@param s any
---@param max? integer characters kept (default M.MAX); the cut text ends with "…"
---@return string
function M.line(s, max)
  if s == nil or s == vim.NIL then
    return ""
  end
  s = valid_utf8(type(s) == "string" and s or tostring(s))
  s = s:gsub("\r\n", "⏎"):gsub("[\r\n]", "⏎")
  s = s:gsub("\226\128[\168\169]", "⏎") -- U+2028, U+2029
  s = s:gsub("[%z\1-\31\127]", caret)
  s = s:gsub("\194[\128-\159]", REPLACEMENT) -- C1 controls
  s = s:gsub("\226\128[\170-\174]", REPLACEMENT) -- U+202A–U+202E: embeddings, overrides
  s = s:gsub("\226\129[\166-\169]", REPLACEMENT) -- U+2066–U+2069: isolates
  return cut(s, max or M.MAX)
end

--- `s` as printable lines (for a message): as `line`, but each LF stays a line break.
---@param s any
---@param max? integer characters kept (default M.MAX_TEXT)
---@return string
function M.text(s, max)
  s = type(s) == "string" and s:gsub("\r\n", "\n") or M.line(s, math.huge)
  local lines = vim.split(s, "\n", { plain = true })
  for i, l in ipairs(lines) do
    lines[i] = M.line(l, math.huge)
  end
  return cut(table.concat(lines, "\n"), max or M.MAX_TEXT)
end

return M
