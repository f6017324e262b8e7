--- Words and lines for the turn float: event fields as strings, long lines kept bounded,
--- errors and stop reasons in plain words. Pure functions (no buffer, no window).
local M = {}

-- Answer lines are kept bounded: past LINE_SOFT bytes a line is broken after a space (kept at
-- its end), and a run without one is cut at LINE_HARD (at a character boundary). Nothing is
-- dropped: the lines joined with "" are the text. Neovim lays out a whole line to draw any of
-- it or to put the cursor on it: one wrapped 10 MB line froze it for 1-3 s per batch, and
-- appending to one growing 160 KB line (/chunks 10000) cost 6 ms (cursor) + 6 ms (redraw) per
-- batch by its end; for lines of 4,000 bytes, 0.9 + 0.5 ms. Shorter lines than LINE_SOFT are
-- never broken (a long JSON line an agent prints stays one line, and a code line stays code:
-- at 2,000 the float's following the stream cost 1.1 ms a batch at most instead of 3.3, but a
-- JSON answer of a few KB no longer read back whole; issue 34).
local LINE_SOFT, LINE_HARD = 10000, 12000
-- What a one-line summary (a tool's title, input and output lines) keeps: M.clip.
local CLIP_BYTES = 12000

--- What a stop reason says (in the done line, the footer, the notification).
M.reasons = {
  end_turn = "done",
  max_tokens = "stopped: token limit reached",
  max_turn_requests = "stopped: too many model requests",
  refusal = "the agent refused",
  cancelled = "cancelled",
  stopped = "stopped (:MiniMeStop)", -- the host's: :MiniMeStop ended the agent mid-turn
}

--- A field as a string: nil and vim.NIL are '', numbers and others are tostring'd.
---@return string
function M.str(x)
  if type(x) == "string" then
    return x
  elseif x == nil or x == vim.NIL then
    return ""
  end
  return tostring(x)
end

local str = M.str

function M.present(x)
  return x ~= nil and x ~= vim.NIL and x ~= ""
end

function M.split(s)
  return vim.split(s, "\n", { plain = true })
end

local function continuation(b)
  return b ~= nil and b >= 0x80 and b < 0xC0
end

--- `s`, to be appended after a line of `col` bytes, with line breaks inserted so that no line
--- passes LINE_SOFT where a space allows, nor LINE_HARD anyhow. Costs O(#s).
---@param col integer
---@param s string
---@return string
function M.break_long_lines(col, s)
  if col + #s <= LINE_SOFT then
    return s
  end
  local out, pos, len = {}, 1, #s
  while pos <= len do
    local nl = s:find("\n", pos, true) or len + 1
    -- s[pos, nl) continues a line of `col` bytes.
    while col + (nl - pos) > LINE_SOFT do
      local soft = pos + LINE_SOFT - col - 1 -- the last byte that keeps the line within LINE_SOFT
      local hard = pos + LINE_HARD - col - 1
      local cut -- the last byte of this line (pos - 1: break before s[pos])
      if soft >= pos then
        local space = s:sub(pos, soft):match("^.*()[ \t]")
        cut = space and pos + space - 1
      end
      if not cut then
        local from = math.max(soft + 1, pos)
        local space = s:sub(from, math.min(hard, nl - 1)):find("[ \t]")
        if space then
          cut = from + space - 1
        elseif nl - 1 <= hard then
          break -- no space yet, but within LINE_HARD: the line may grow
        else
          cut = hard
          while cut >= pos and continuation(s:byte(cut + 1)) do
            cut = cut - 1 -- not inside a UTF-8 sequence
          end
          if cut < pos and col == 0 then
            cut = hard -- not UTF-8 at all: anywhere will do
          end
        end
      end
      out[#out + 1] = s:sub(pos, cut)
      out[#out + 1] = "\n"
      pos, col = cut + 1, 0
    end
    out[#out + 1] = s:sub(pos, nl)
    pos, col = nl + 1, 0
  end
  return table.concat(out)
end

--- `s` cut to CLIP_BYTES bytes (at a character boundary) with "…": for one-line summaries.
---@param s string
---@return string
function M.clip(s)
  if #s <= CLIP_BYTES then
    return s
  end
  local cut = CLIP_BYTES
  while cut > 0 and continuation(s:byte(cut + 1)) do
    cut = cut - 1
  end
  return s:sub(1, cut) .. "…"
end

--- An error as one line of plain words: a Python traceback becomes its last line.
---@param err any
---@return string
function M.plain_error(err)
  local s = str(err):gsub("\r", "")
  local lines = vim.tbl_filter(function(l)
    return l:match("%S") ~= nil
  end, M.split(s))
  if s:find("Traceback (most recent call last)", 1, true) then
    lines = { lines[#lines] }
  end
  s = vim.trim(table.concat(lines, " "))
  if #s > 500 then
    s = vim.fn.strcharpart(s, 0, 500) .. "…"
  end
  return s ~= "" and s or "unknown error"
end

return M
