--- The turn float: one per session cwd (the key), fed by the Python host in batches.
---
--- The host calls `require('minime.ui.turn').apply(key, events)` about every 16 ms with the
--- events of one batch, in order. Event shapes (nil and vim.NIL fields are ignored):
---
---   {kind="begin", prompt=string, cwd=string, session_id=string}   new turn: clear, show prompt
---   {kind="text", text=string}                 answer chunk (markdown; may split lines anywhere)
---   {kind="thinking", text=string}             reasoning chunk: dimmed, one fold per block
---   {kind="user", text=string}                 user message chunk (replayed history): quoted
---   {kind="tool_call", id, title, tool_kind, status, input}   upsert of one tool line
---   {kind="tool_result", id, status, output}   status + output (folded) of a tool line
---   {kind="plan", entries={{content, status, priority}, ...}}  show or replace the plan block
---   {kind="done", stop_reason, usage={input_tokens, output_tokens, total_tokens}|nil, error,
---    session_id}                               error: plain words; session_id if begin had none
---   {kind="notice", text}                      a plain info line
---
--- Speed: apply() costs O(size of the batch). Text goes in with one nvim_buf_set_text at the end
--- of the buffer, whose end position is tracked here rather than read back; tool lines and the
--- plan are edited in place through extmarks. The buffer is never rewritten, except on "begin".
local window = require("minime.ui.window")

local api = vim.api

local M = {}

---@class minime.turn.Config
---@field focus boolean enter the float when it opens
---@field width number fraction of the editor (<= 1) or columns
---@field height number fraction of the editor (<= 1) or lines
---@field border string|string[] see 'winborder'
local defaults = { focus = false, width = 0.8, height = 0.6, border = "rounded" }

-- Loaded on first use (not by setup(): start-up time), so it starts from the user's options.
---@type minime.turn.Config
M.config = vim.deepcopy(defaults)
do
  local window_opts = require("minime.config").options.window
  if type(window_opts) == "table" then
    M.config = vim.tbl_deep_extend("force", M.config, window_opts)
  end
end

--- Failures inside apply(), newest last (capped): apply never throws, tests read this.
---@type string[]
M.errors = {}

--- Hook: `<C-c>` in a turn float calls it with the turn's key: cancels the turn.
---@type fun(key: string)
M.on_cancel = function(key)
  require("minime").cancel(key)
end

local MAX_ERRORS = 100
-- Tool output beyond this many lines is cut (with a note): it is folded, but a megabyte of
-- output would still cost a redraw of every line when the fold is opened.
local MAX_OUTPUT_LINES = 2000
-- Answer lines are kept bounded: past LINE_SOFT bytes a line is broken after a space (kept at
-- its end), and a run without one is cut at LINE_HARD (at a character boundary). Nothing is
-- dropped: the lines joined with "" are the text. Neovim lays out a whole line to draw any of
-- it or to put the cursor on it: one wrapped 10 MB line froze it for 1-3 s per batch, and
-- appending to one growing 160 KB line (/chunks 10000) cost 6 ms (cursor) + 6 ms (redraw) per
-- batch by its end; for lines of 4,000 bytes, 0.9 + 0.5 ms. Shorter lines than LINE_SOFT are
-- never broken (a long JSON line an agent prints stays one line).
local LINE_SOFT, LINE_HARD = 10000, 12000
local INDENT = "    "

-- Regions (thinking blocks, tools with their body) read by foldexpr; one extmark each.
local ns_fold = api.nvim_create_namespace("minime.turn.fold")
-- Decorations (highlights) that are cleared and redrawn with their lines.
local ns_hl = api.nvim_create_namespace("minime.turn.hl")
-- Anchors (the plan block).
local ns_pos = api.nvim_create_namespace("minime.turn.pos")

---@class minime.turn.Tool
---@field id string
---@field title string
---@field kind? string
---@field status string
---@field region integer extmark (ns_fold) from the header line to the end of the body
---@field hlen integer byte length of the header line
---@field input_n integer body lines showing the input
---@field input_len integer byte length of the last input line
---@field output_n integer body lines showing the output
---@field output_len integer byte length of the last output line

---@class minime.turn.Turn
---@field key string
---@field buf integer
---@field win? integer
---@field cwd string
---@field session_id? string
---@field running boolean
---@field stop_reason? string
---@field error? string
---@field row integer last line (0-based) of the buffer
---@field col integer byte length of the last line
---@field prev_col integer byte length of the line before the last one (0 if none)
---@field block? string kind of the last block
---@field thinking? integer extmark of the thinking region still growing at the end
---@field quote_next? boolean the next user chunk starts a quoted line
---@field regions table<integer, minime.turn.Tool|"thinking"> fold regions, by extmark id
---@field tools table<string, minime.turn.Tool>
---@field plan? {mark: integer, n: integer, last_len: integer}
---@field done? table data of the MiniMeTurnDone event, pending until the batch ends

---@type table<string, minime.turn.Turn>
local turns = {}
---@type table<integer, minime.turn.Turn>
local by_buf = {}
---@type string?
local last_key

-- Fold regions per buffer as sorted rows {first1, last1, first2, last2, ...}, read from the
-- extmarks once after each edit: foldexpr runs per line and must not query extmarks per line.
---@type table<integer, integer[]>
local fold_rows = {}

local function record(msg)
  local errors = M.errors
  errors[#errors + 1] = tostring(msg)
  if #errors > MAX_ERRORS then
    table.remove(errors, 1)
  end
end

--- A field as a string: nil and vim.NIL are '', numbers and others are tostring'd.
---@return string
local function str(x)
  if type(x) == "string" then
    return x
  elseif x == nil or x == vim.NIL then
    return ""
  end
  return tostring(x)
end

local function present(x)
  return x ~= nil and x ~= vim.NIL and x ~= ""
end

local function split(s)
  return vim.split(s, "\n", { plain = true })
end

local function hl(t, row, col, end_row, end_col, group)
  api.nvim_buf_set_extmark(t.buf, ns_hl, row, col, {
    end_row = end_row,
    end_col = end_col,
    hl_group = group,
    strict = false,
  })
end

-- Buffer end tracking -----------------------------------------------------------------------

--- Append `s` at the end of the buffer with one call.
---@param t minime.turn.Turn
---@param s string
local function append(t, s)
  if s == "" then
    return
  end
  local parts = split(s)
  fold_rows[t.buf] = nil
  api.nvim_buf_set_text(t.buf, t.row, t.col, t.row, t.col, parts)
  local n = #parts
  if n == 1 then
    t.col = t.col + #parts[1]
  else
    t.prev_col = n == 2 and t.col + #parts[1] or #parts[n - 1]
    t.row = t.row + n - 1
    t.col = #parts[n]
  end
end

--- Re-read the end of the buffer (after an edit reached it, or a failure).
---@param t minime.turn.Turn
local function sync_end(t)
  local n = api.nvim_buf_line_count(t.buf)
  local lines = api.nvim_buf_get_lines(t.buf, math.max(n - 2, 0), n, false)
  t.row = n - 1
  t.col = #lines[#lines]
  t.prev_col = #lines > 1 and #lines[1] or 0
end

--- Edit inside the buffer (not at its end) with one nvim_buf_set_text, keeping the end
--- position right. `last` says whether the edited range reaches the end of the buffer.
---@param t minime.turn.Turn
local function splice(t, srow, scol, erow, ecol, lines)
  local last = erow == t.row
  fold_rows[t.buf] = nil
  api.nvim_buf_set_text(t.buf, srow, scol, erow, ecol, lines)
  if last then
    sync_end(t)
  else
    t.row = t.row + (#lines - 1) - (erow - srow)
  end
end

--- Set an extmark in ns_fold (a region foldexpr reads).
---@return integer id
local function set_fold_mark(t, row, col, opts)
  fold_rows[t.buf] = nil
  opts.strict = false
  return api.nvim_buf_set_extmark(t.buf, ns_fold, row, col, opts)
end

-- Blocks --------------------------------------------------------------------------------------

-- Blocks of these kinds follow one another without a blank line between them.
local tight = { tool = true, notice = true }

local function close_thinking(t)
  local id = t.thinking
  if not id then
    return
  end
  t.thinking = nil
  local m = api.nvim_buf_get_extmark_by_id(t.buf, ns_fold, id, {})
  if not m[1] then
    return
  end
  -- Stop at the end of the text, not on a trailing empty line the next block will use.
  local erow, ecol = t.row, t.col
  if ecol == 0 and erow > m[1] then
    erow, ecol = erow - 1, t.prev_col
  end
  set_fold_mark(t, m[1], m[2], {
    id = id,
    end_row = erow,
    end_col = ecol,
    right_gravity = false,
    end_right_gravity = false,
    hl_group = "MiniMeThinking",
  })
end

--- Start a block of `kind` on a fresh line at the end, after a blank line unless tight.
---@param t minime.turn.Turn
---@param kind string
local function start_block(t, kind)
  close_thinking(t)
  if t.block then
    local blank = not (tight[kind] and t.block == kind)
    if t.col > 0 then
      append(t, blank and "\n\n" or "\n")
    elseif blank and t.row > 0 and t.prev_col > 0 then
      append(t, "\n")
    end
  end
  t.block = kind
end

--- Add whole lines as a new block at the end; returns the row of the first one.
---@param t minime.turn.Turn
---@param kind string
---@param lines string[]
---@return integer row
local function add_lines(t, kind, lines)
  start_block(t, kind)
  local row = t.row
  append(t, table.concat(lines, "\n"))
  return row
end

local function continuation(b)
  return b ~= nil and b >= 0x80 and b < 0xC0
end

--- `s`, to be appended after a line of `col` bytes, with line breaks inserted so that no line
--- passes LINE_SOFT where a space allows, nor LINE_HARD anyhow. Costs O(#s).
---@param col integer
---@param s string
---@return string
local function break_long_lines(col, s)
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

--- `s` cut to LINE_HARD bytes (at a character boundary) with "…": for one-line summaries.
---@param s string
---@return string
local function clip(s)
  if #s <= LINE_HARD then
    return s
  end
  local cut = LINE_HARD
  while cut > 0 and continuation(s:byte(cut + 1)) do
    cut = cut - 1
  end
  return s:sub(1, cut) .. "…"
end

---@param t minime.turn.Turn
---@param kind "text"|"thinking"|"user"
---@param s string
local function add_text(t, kind, s)
  if s:find("\r", 1, true) then -- (gsub alone costs 0.3 s on a 10 MB chunk)
    s = s:gsub("\r\n", "\n")
  end
  if s == "" then
    return
  end
  local continuing = t.block == kind
  if kind == "user" then
    -- A quoted block, like the prompt; the "> " after a final newline waits for more text.
    local body, nl = s:match("^(.-)(\n?)$")
    local lead = (not continuing or t.quote_next) and "> " or ""
    s = lead .. body:gsub("\n", "\n> ") .. nl
    t.quote_next = nl ~= ""
  end
  if not continuing then
    start_block(t, kind)
    if kind == "thinking" then
      -- Created before the text so that it grows with it (end_right_gravity) and foldexpr,
      -- evaluated while the text goes in, already sees the region.
      local id = set_fold_mark(t, t.row, t.col, {
        end_row = t.row,
        end_col = t.col,
        right_gravity = false,
        end_right_gravity = true,
        hl_group = "MiniMeThinking",
      })
      t.thinking = id
      t.regions[id] = "thinking"
    end
  end
  append(t, break_long_lines(t.col, s))
end

-- Tools ---------------------------------------------------------------------------------------

local status_hl = {
  pending = "MiniMeStatusPending",
  in_progress = "MiniMeStatusRunning",
  completed = "MiniMeStatusDone",
  failed = "MiniMeStatusFailed",
}

--- The header line of a tool and its highlighted parts.
---@param tool minime.turn.Tool
---@return string line, {[1]: integer, [2]: integer, [3]: string}[] spans
local function tool_header(tool)
  local head = "⚙ " .. tool.title
  local spans = { { 0, #head, "MiniMeTool" } }
  local line = head
  if tool.kind then
    line = line .. "  [" .. tool.kind .. "]"
    spans[#spans + 1] = { #head + 2, #line, "MiniMeToolKind" }
  end
  local s = #line + 1
  line = line .. " " .. tool.status
  spans[#spans + 1] = { s, #line, status_hl[tool.status] or "MiniMeStatusPending" }
  return line, spans
end

local function encode(x)
  local ok, s = pcall(vim.json.encode, x)
  return ok and s or vim.inspect(x, { newline = " ", indent = "" })
end

--- Body lines for a tool's input: one compact line.
---@return string[]
local function input_lines(input)
  if type(input) == "table" then
    if next(input) == nil then
      return {}
    end
    return { INDENT .. "input: " .. clip(window.oneline(encode(input))) }
  elseif present(input) then
    return { INDENT .. "input: " .. clip(window.oneline(input)) }
  end
  return {}
end

--- Body lines for a tool's output, indented (no markdown block structure inside) and capped.
---@return string[]
local function output_lines(output)
  if type(output) == "table" then
    output = vim.islist(output) and table.concat(vim.tbl_map(str, output), "\n") or encode(output)
  end
  output = str(output):gsub("\r\n", "\n")
  if output == "" then
    return {}
  end
  local src = split(output)
  if src[#src] == "" then
    src[#src] = nil
  end
  local lines = {}
  for i = 1, math.min(#src, MAX_OUTPUT_LINES) do
    lines[i] = INDENT .. src[i]
  end
  if #src > MAX_OUTPUT_LINES then
    lines[#lines + 1] = ("%s… %d more lines"):format(INDENT, #src - MAX_OUTPUT_LINES)
  end
  return lines
end

---@param t minime.turn.Turn
---@param tool minime.turn.Tool
---@return integer row of the header line
local function header_row(t, tool)
  return api.nvim_buf_get_extmark_by_id(t.buf, ns_fold, tool.region, {})[1]
end

--- End position of a tool's body (the header's end when it has none).
---@param tool minime.turn.Tool
---@return integer rows, integer col offset in rows after the header, and column
local function body_end(tool)
  if tool.output_n > 0 then
    return tool.input_n + tool.output_n, tool.output_len
  elseif tool.input_n > 0 then
    return tool.input_n, tool.input_len
  end
  return 0, tool.hlen
end

---@param t minime.turn.Turn
---@param tool minime.turn.Tool
---@param h integer header row
---@param right boolean let the region grow with an edit at its end
local function set_region(t, tool, h, right)
  local rows, col = body_end(tool)
  set_fold_mark(t, h, 0, {
    id = tool.region,
    end_row = h + rows,
    end_col = col,
    right_gravity = false,
    end_right_gravity = right,
  })
end

---@param t minime.turn.Turn
---@param tool minime.turn.Tool
local function draw_header(t, tool, h)
  local line, spans = tool_header(tool)
  api.nvim_buf_clear_namespace(t.buf, ns_hl, h, h + 1)
  splice(t, h, 0, h, tool.hlen, { line })
  tool.hlen = #line
  for _, s in ipairs(spans) do
    hl(t, h, s[1], h, s[2], s[3])
  end
end

--- Replace the input or the output part of a tool's body.
---@param t minime.turn.Turn
---@param tool minime.turn.Tool
---@param part "input"|"output"
---@param lines string[]
local function set_body(t, tool, part, lines)
  local h = header_row(t, tool)
  local ni, no = tool.input_n, tool.output_n
  local srow, scol, erow, ecol
  if part == "input" then
    srow, scol = h, tool.hlen
    erow, ecol = h + ni, ni > 0 and tool.input_len or tool.hlen
  else
    srow, scol = h + ni, ni > 0 and tool.input_len or tool.hlen
    erow, ecol = h + ni + no, no > 0 and tool.output_len or scol
  end
  -- The region must already cover the new lines when the edit makes foldexpr look at them.
  set_region(t, tool, h, true)
  api.nvim_buf_clear_namespace(t.buf, ns_hl, h + 1, h + ni + no + 1)
  local repl = { "" }
  vim.list_extend(repl, lines)
  splice(t, srow, scol, erow, ecol, repl)
  local n, len = #lines, #lines > 0 and #lines[#lines] or 0
  if part == "input" then
    tool.input_n, tool.input_len = n, len
  else
    tool.output_n, tool.output_len = n, len
  end
  set_region(t, tool, h, false)
  local rows, col = body_end(tool)
  if rows > 0 then
    hl(t, h + 1, 0, h + rows, col, "MiniMeToolOutput")
  end
end

---@param t minime.turn.Turn
---@param id string
---@return minime.turn.Tool tool, integer? row of a new header, nil for an existing tool
local function get_tool(t, id)
  local tool = t.tools[id]
  if tool then
    return tool
  end
  tool = {
    id = id,
    title = id ~= "" and window.oneline(id) or "tool",
    status = "pending",
    hlen = 0,
    input_n = 0,
    input_len = 0,
    output_n = 0,
    output_len = 0,
  }
  start_block(t, "tool")
  local h = t.row
  tool.region = set_fold_mark(t, h, 0, { right_gravity = false })
  t.tools[id] = tool
  t.regions[tool.region] = tool
  return tool, h
end

---@param t minime.turn.Turn
local function on_tool(t, ev, result)
  local tool, new_row = get_tool(t, str(ev.id))
  if not result then
    if present(ev.title) then
      tool.title = clip(window.oneline(ev.title))
    end
    if present(ev.tool_kind) then
      tool.kind = window.oneline(ev.tool_kind)
    end
  end
  if present(ev.status) then
    tool.status = window.oneline(ev.status)
  elseif result and not new_row then
    tool.status = "completed"
  end
  draw_header(t, tool, new_row or header_row(t, tool))
  if not result and tool.input_n == 0 then
    local lines = input_lines(ev.input)
    if #lines > 0 then
      set_body(t, tool, "input", lines)
    end
  elseif result and ev.output ~= nil and ev.output ~= vim.NIL then
    set_body(t, tool, "output", output_lines(ev.output))
  end
end

-- Other blocks --------------------------------------------------------------------------------

local plan_marks = {
  completed = { "☑ ", "MiniMePlanDone" },
  in_progress = { "◐ ", "MiniMePlanActive" },
}

---@param t minime.turn.Turn
local function on_plan(t, ev)
  local lines, groups = { "Plan" }, { "MiniMeTitle" }
  local entries = type(ev.entries) == "table" and ev.entries or {}
  for _, e in ipairs(entries) do
    e = type(e) == "table" and e or { content = e }
    local mark = plan_marks[str(e.status)] or { "☐ ", false }
    local line = mark[1] .. window.oneline(e.content)
    if str(e.priority) == "high" then
      line = line .. " (high)"
    end
    lines[#lines + 1] = line
    groups[#groups + 1] = mark[2]
  end
  local row
  if t.plan then
    row = api.nvim_buf_get_extmark_by_id(t.buf, ns_pos, t.plan.mark, {})[1]
    api.nvim_buf_clear_namespace(t.buf, ns_hl, row, row + t.plan.n)
    splice(t, row, 0, row + t.plan.n - 1, t.plan.last_len, lines)
  else
    row = add_lines(t, "plan", lines)
    t.plan = { mark = api.nvim_buf_set_extmark(t.buf, ns_pos, row, 0, { right_gravity = false }) }
  end
  t.plan.n, t.plan.last_len = #lines, #lines[#lines]
  for i, group in ipairs(groups) do
    if group then
      hl(t, row + i - 1, 0, row + i - 1, #lines[i], group)
    end
  end
end

local reasons = {
  end_turn = "done",
  max_tokens = "stopped: token limit reached",
  max_turn_requests = "stopped: too many model requests",
  refusal = "the agent refused",
  cancelled = "cancelled",
}

--- An error as one line of plain words: a Python traceback becomes its last line.
---@param err any
---@return string
local function plain_error(err)
  local s = str(err):gsub("\r", "")
  local lines = vim.tbl_filter(function(l)
    return l:match("%S") ~= nil
  end, split(s))
  if s:find("Traceback (most recent call last)", 1, true) then
    lines = { lines[#lines] }
  end
  s = vim.trim(table.concat(lines, " "))
  if #s > 500 then
    s = vim.fn.strcharpart(s, 0, 500) .. "…"
  end
  return s ~= "" and s or "unknown error"
end

local function usage_text(usage)
  if type(usage) ~= "table" then
    return nil
  end
  local parts = {}
  for _, k in ipairs({ "input", "output", "total" }) do
    local v = usage[k .. "_tokens"]
    if type(v) == "number" then
      parts[#parts + 1] = ("%d %s"):format(v, k)
    end
  end
  return #parts > 0 and "tokens: " .. table.concat(parts, ", ") or nil
end

---@param t minime.turn.Turn
local function on_done(t, ev)
  local reason = present(ev.stop_reason) and str(ev.stop_reason) or nil
  local err = present(ev.error) and plain_error(ev.error) or nil
  local line, group
  if err then
    line, group = "✗ error: " .. err, "MiniMeError"
  else
    line = "■ " .. (reasons[reason] or reason or "ended")
    group = reason == "end_turn" and "MiniMeDone" or "MiniMeStatusPending"
  end
  if reason and reasons[reason] ~= reason and not (err and reason == "error") then
    line = line .. " (" .. reason .. ")"
  end
  local usage = usage_text(ev.usage)
  if usage then
    line = line .. " · " .. usage
  end
  local row = add_lines(t, "done", { line })
  hl(t, row, 0, row, #line, group)
  t.running = false
  t.stop_reason, t.error = reason, err
  if present(ev.session_id) then
    t.session_id = str(ev.session_id)
  end
  t.done = { cwd = t.cwd, session_id = t.session_id, stop_reason = reason, error = err }
end

---@param t minime.turn.Turn
local function on_notice(t, ev)
  local lines = split((str(ev.text):gsub("\r\n", "\n")))
  for i, l in ipairs(lines) do
    lines[i] = (i == 1 and "ℹ " or "  ") .. l
  end
  local row = add_lines(t, "notice", lines)
  hl(t, row, 0, row + #lines - 1, #lines[#lines], "MiniMeNotice")
end

-- The float -----------------------------------------------------------------------------------

local function visible(t)
  if t.win and not api.nvim_win_is_valid(t.win) then
    t.win = nil
  end
  return t.win ~= nil
end

---@param t minime.turn.Turn
local function win_config(t)
  local where = vim.fn.fnamemodify(t.cwd, ":~")
  if #where > 60 then
    where = "…" .. where:sub(-59)
  end
  local footer
  if t.running then
    footer = " running · q hide · <C-c> cancel "
  elseif t.error then
    footer = " failed "
  else
    footer = " " .. (reasons[t.stop_reason] or t.stop_reason or "idle") .. " "
  end
  local c = M.config
  return window.centered({
    width = c.width,
    height = c.height,
    border = c.border,
    zindex = 45,
    title = " minime · " .. where .. " ",
    footer = footer,
  })
end

local function follow(t)
  api.nvim_win_set_cursor(t.win, { t.row + 1, 0 })
end

local win_options = {
  wrap = true,
  linebreak = true,
  breakindent = true,
  smoothscroll = true,
  -- Not 2: in 0.11 markdown's conceal_lines makes Neovim re-parse per line for every line
  -- height it computes, which cost 230 ms a batch on a long answer (0.7 ms without).
  conceallevel = 0,
  foldenable = true,
  foldlevel = 0,
  foldmethod = "expr",
  foldexpr = "v:lua.require'minime.ui.turn'.foldexpr()",
  foldtext = "v:lua.require'minime.ui.turn'.foldtext()",
  fillchars = "eob: ,fold: ",
}

local function hide(t)
  if visible(t) then
    window.close(t.win)
  end
  t.win = nil
end

--- Markdown highlighting: none while the turn streams, treesitter once it is done.
--- Measured on a 10,000-chunk answer: markdown's tree-sitter parse is not incremental for text
--- appended at the end (a 2,000-line answer re-parses in ~40 ms), so with edits every 16 ms the
--- async parse restarted on each change, never caught up, and burnt 5.0 s of CPU against 1.0 s.
--- The regex syntax (markdown.vim, which pulls in html.vim) cost 11-15 ms per redraw of a
--- 30-line float of ordinary markdown and 20-50 ms on long lines: most of each 16 ms frame.
--- Without a markdown parser, the regex syntax comes on when the turn is done.
---@param t minime.turn.Turn
---@param on boolean
local function highlight(t, on)
  local buf = t.buf
  local active = vim.treesitter.highlighter.active[buf] ~= nil
  if on then
    if not active and not pcall(vim.treesitter.start, buf, "markdown") then
      vim.bo[buf].syntax = "markdown"
    end
    return
  end
  if active then
    -- Stopping it fires FileType to bring back the regex syntax: 20-50 ms of sourcing
    -- markdown.vim and html.vim, only to clear it below.
    local ignore = vim.o.eventignore
    vim.o.eventignore = ignore == "" and "FileType" or ignore .. ",FileType"
    pcall(vim.treesitter.stop, buf)
    vim.o.eventignore = ignore
  end
  if vim.bo[buf].syntax ~= "" then
    vim.bo[buf].syntax = ""
  end
end

--- Create the buffer of a turn (or a new one if the user wiped it).
---@param t minime.turn.Turn
local function make_buffer(t)
  local buf = window.scratch("turn", "hide")
  pcall(api.nvim_buf_set_name, buf, "minime://turn/" .. t.key)
  vim.b[buf].minime_key = t.key
  -- 'filetype' without FileType: the float needs no ftplugin, and loading it with the regex
  -- syntax cost ~20 ms a turn (bench/load.py), a fresh buffer being made for each turn.
  local ignore = vim.o.eventignore
  vim.o.eventignore = ignore == "" and "FileType" or ignore .. ",FileType"
  vim.bo[buf].filetype = "markdown"
  vim.o.eventignore = ignore
  vim.bo[buf].modifiable = false
  local key = t.key
  vim.keymap.set("n", "q", function()
    M.close(key)
  end, { buffer = buf, nowait = true, desc = "minime: hide the turn (it goes on)" })
  vim.keymap.set("n", "<C-c>", function()
    M.on_cancel(key)
  end, { buffer = buf, desc = "minime: cancel the turn" })
  t.buf, t.row, t.col, t.prev_col = buf, 0, 0, 0
  t.block, t.thinking, t.plan = nil, nil, nil
  t.regions, t.tools = {}, {}
  by_buf[buf] = t
  highlight(t, false) -- the regex syntax FileType loaded, or a parser a FileType autocmd started
end

---@param key string
---@return minime.turn.Turn
local function get_turn(key)
  local t = turns[key]
  if not t then
    t = { key = key, cwd = key, running = false } --[[@as minime.turn.Turn]]
    turns[key] = t
    make_buffer(t)
  elseif not api.nvim_buf_is_valid(t.buf) then
    by_buf[t.buf], fold_rows[t.buf] = nil, nil
    hide(t)
    make_buffer(t)
  end
  return t
end

--- Put a fresh buffer in place of the turn's: Neovim 0.11 keeps a stopped tree-sitter
--- highlighter's callbacks, so stopping and restarting it on one buffer grew Neovim by ~35 KB a
--- turn (bench/load.py: 13 → 48 MiB over 1,000 turns). A wiped buffer takes them along.
---@param t minime.turn.Turn
local function renew_buffer(t)
  local old, win = t.buf, visible(t) and t.win or nil
  by_buf[old], fold_rows[old] = nil, nil
  make_buffer(t)
  if win then
    api.nvim_win_set_buf(win, t.buf)
    for name, value in pairs(win_options) do
      api.nvim_set_option_value(name, value, { win = win, scope = "local" })
    end
  end
  pcall(api.nvim_buf_delete, old, { force = true })
  pcall(api.nvim_buf_set_name, t.buf, "minime://turn/" .. t.key)
  vim.bo[t.buf].modifiable = true -- apply() is mid-batch: it locks the buffer at the end
end

---@param t minime.turn.Turn
local function on_begin(t, ev)
  t.thinking = nil
  if vim.treesitter.highlighter.active[t.buf] ~= nil then
    renew_buffer(t)
  else
    highlight(t, false) -- before the old text goes: its highlighter need not follow the edit
  end
  for _, ns in ipairs({ ns_fold, ns_hl, ns_pos }) do
    api.nvim_buf_clear_namespace(t.buf, ns, 0, -1)
  end
  local lines = split((str(ev.prompt):gsub("\r\n", "\n")))
  for i, l in ipairs(lines) do
    lines[i] = l == "" and ">" or "> " .. l
  end
  fold_rows[t.buf] = nil
  api.nvim_buf_set_lines(t.buf, 0, -1, false, lines)
  sync_end(t)
  t.block, t.plan, t.regions, t.tools, t.done = "prompt", nil, {}, {}, nil
  t.cwd = present(ev.cwd) and str(ev.cwd) or t.key
  t.session_id = present(ev.session_id) and str(ev.session_id) or nil
  t.running, t.stop_reason, t.error = true, nil, nil
  last_key = t.key
end

local handlers = {
  begin = on_begin,
  tool_call = function(t, ev)
    on_tool(t, ev, false)
  end,
  tool_result = function(t, ev)
    on_tool(t, ev, true)
  end,
  plan = on_plan,
  done = on_done,
  notice = on_notice,
}

---@param t minime.turn.Turn
local function run(t, fn, ...)
  local ok, err = pcall(fn, t, ...)
  if not ok then
    record(err)
    -- Whatever failed, the next event starts from what the buffer really holds.
    pcall(function()
      t.thinking = nil
      sync_end(t)
      t.block = "error"
    end)
  end
end

local function status_changed()
  local ok, status = pcall(require, "minime.status")
  if ok then
    status.refresh()
  end
end

--- Fire the end of a turn: event, notification when hidden, statusline.
---@param t minime.turn.Turn
local function finish(t)
  local data = t.done
  t.done = nil
  highlight(t, true)
  if visible(t) then
    api.nvim_win_set_config(t.win, win_config(t))
  else
    local what = data.error and ("failed: " .. data.error)
      or ("finished (" .. (reasons[data.stop_reason] or data.stop_reason or "ended") .. ")")
    vim.notify(
      "minime: turn in " .. vim.fn.fnamemodify(t.cwd, ":~") .. " " .. what,
      data.error and vim.log.levels.ERROR or vim.log.levels.INFO
    )
  end
  api.nvim_exec_autocmds("User", { pattern = "MiniMeTurnDone", data = data, modeline = false })
end

---@param key string
---@param events table[]
local function apply(key, events)
  local fresh = turns[key] == nil
  local t = get_turn(key)
  local was_running = t.running
  local shown = visible(t)
  -- Follow the stream while the end is in view (the cursor can sit on a closed fold's start).
  local at_end = shown
    and (api.nvim_win_get_cursor(t.win)[1] > t.row or vim.fn.line("w$", t.win) > t.row)
  local opening, began = fresh, false
  vim.bo[t.buf].modifiable = true
  local i, n = 1, #events
  while i <= n do
    local ev = events[i]
    local kind = type(ev) == "table" and ev.kind or nil
    if kind == "text" or kind == "thinking" or kind == "user" then
      -- Coalesce a run of chunks into one edit.
      local parts = { str(ev.text) }
      while i < n and type(events[i + 1]) == "table" and events[i + 1].kind == kind do
        i = i + 1
        parts[#parts + 1] = str(events[i].text)
      end
      run(t, add_text, kind, table.concat(parts))
    elseif handlers[kind] then
      if kind == "begin" then
        opening, began, at_end = true, true, true
      end
      run(t, handlers[kind], ev)
    else
      record(("unknown event kind %q"):format(str(kind)))
    end
    i = i + 1
  end
  vim.bo[t.buf].modifiable = false

  if opening and not visible(t) then
    M.open(key)
  elseif visible(t) and at_end then
    follow(t)
  end
  if began and shown and visible(t) then
    api.nvim_win_set_config(t.win, win_config(t)) -- the footer says "running" again
  end
  if t.done then
    finish(t)
  end
  if t.running ~= was_running then
    status_changed()
  end
end

-- Public API ----------------------------------------------------------------------------------

--- Apply one batch of events to the turn of `key` (the session's cwd). Never throws: failures
--- go to `M.errors`.
---@param key string
---@param events table[]
function M.apply(key, events)
  local ok, err = pcall(apply, str(key), type(events) == "table" and events or {})
  if not ok then
    record(err)
  end
end

--- Show the float of a turn (hiding any other turn float). Returns false for an unknown key.
---@param key string
---@return boolean
function M.open(key)
  local t = turns[key]
  if not t or not api.nvim_buf_is_valid(t.buf) then
    return false
  end
  last_key = key
  if visible(t) then
    return true
  end
  for _, other in pairs(turns) do
    hide(other)
  end
  t.win = api.nvim_open_win(t.buf, M.config.focus, win_config(t))
  for name, value in pairs(win_options) do
    api.nvim_set_option_value(name, value, { win = t.win, scope = "local" })
  end
  follow(t)
  return true
end

--- Show the float of the last turn begun or shown.
---@return boolean
function M.reopen_last()
  return last_key ~= nil and M.open(last_key)
end

--- Hide the float of a turn; the turn goes on and its buffer keeps receiving events.
---@param key string
function M.close(key)
  local t = turns[key]
  if t then
    hide(t)
  end
end

--- State of a turn, or nil.
---@param key string
---@return {buf: integer, win?: integer, running: boolean, cwd: string, session_id?: string,
---  stop_reason?: string}?
function M.get(key)
  local t = turns[key]
  if not t then
    return nil
  end
  visible(t)
  return {
    buf = t.buf,
    win = t.win,
    running = t.running,
    cwd = t.cwd,
    session_id = t.session_id,
    stop_reason = t.stop_reason,
  }
end

--- Number of turns running now.
---@return integer
function M.running_count()
  local n = 0
  for _, t in pairs(turns) do
    if t.running then
      n = n + 1
    end
  end
  return n
end

--- End every running turn with `message` as its error (the host feeding them is gone).
---@param message string
function M.fail_running(message)
  for key, t in pairs(turns) do
    if t.running then
      M.apply(key, { { kind = "done", stop_reason = "error", error = message } })
    end
  end
end

--- Merge options into the config (see minime.turn.Config).
---@param opts? minime.turn.Config|{}
function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
end

--- 'foldexpr' of the float: a fold per thinking block and per tool with a body.
---@return string
function M.foldexpr()
  local buf = api.nvim_get_current_buf()
  local rows = fold_rows[buf]
  if not rows then
    rows = {}
    for _, m in ipairs(api.nvim_buf_get_extmarks(buf, ns_fold, 0, -1, { details = true })) do
      local first, d = m[2], m[4]
      local last = d.end_row or first
      if last > first and (d.end_col or 0) == 0 then
        last = last - 1 -- ends at the start of a line: that line is not in it
      end
      if last > first then -- one line is no fold (a tool without a body yet)
        rows[#rows + 1], rows[#rows + 2] = first, last
      end
    end
    fold_rows[buf] = rows
  end
  -- Binary search for the last region starting at or before the line.
  local l = vim.v.lnum - 1
  local lo, hi = 1, #rows / 2
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local first = rows[2 * mid - 1]
    if first == l then
      return ">1"
    elseif first < l then
      if rows[2 * mid] >= l then
        return "1"
      end
      lo = mid + 1
    else
      hi = mid - 1
    end
  end
  return "0"
end

--- 'foldtext' of the float.
---@return string|table
function M.foldtext()
  local buf = api.nvim_get_current_buf()
  local t = by_buf[buf]
  local first, n = vim.v.foldstart, vim.v.foldend - vim.v.foldstart + 1
  local line = api.nvim_buf_get_lines(buf, first - 1, first, false)[1] or ""
  local marks = api.nvim_buf_get_extmarks(buf, ns_fold, { first - 1, 0 }, { first - 1, -1 }, {})
  local region = t and marks[1] and t.regions[marks[1][1]]
  if type(region) == "table" then
    local _, spans = tool_header(region)
    local chunks, pos = {}, 0
    for _, s in ipairs(spans) do
      if s[1] > pos then
        chunks[#chunks + 1] = { line:sub(pos + 1, s[1]), "MiniMeFold" }
      end
      chunks[#chunks + 1] = { line:sub(s[1] + 1, s[2]), s[3] }
      pos = s[2]
    end
    chunks[#chunks + 1] = { ("  ▸ %d line%s"):format(n - 1, n == 2 and "" or "s"), "MiniMeFold" }
    return chunks
  end
  return {
    { "▸ thinking ", "MiniMeFold" },
    { vim.trim(line), "MiniMeThinking" },
    { ("  (%d lines)"):format(n), "MiniMeFold" },
  }
end

api.nvim_create_autocmd("VimResized", {
  group = api.nvim_create_augroup("minime.ui.turn", { clear = true }),
  callback = function()
    for _, t in pairs(turns) do
      if visible(t) then
        api.nvim_win_set_config(t.win, win_config(t))
      end
    end
  end,
})

return M
