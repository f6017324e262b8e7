--- Tool calls in the turn document: a header line (title, kind, status) upserted in place,
--- and a body — the input on one line, the output indented and capped — folded under it.
--- One ns_fold extmark per tool spans header and body (the fold foldexpr reads).
local buffer = require("minime.ui.turn.buffer")
local diff = require("minime.ui.diff")
local text = require("minime.ui.turn.text")
local printable = require("minime.ui.printable")
local tool_rows = require("minime.ui.turn.tool_rows")
local window = require("minime.ui.window")

local api = vim.api
local hl, splice = buffer.hl, buffer.splice
local str, present, clip = text.str, text.present, text.clip

local M = {}

-- Tool output beyond this many lines is cut (with a note): it is folded, but a megabyte of
-- output would still cost a redraw of every line when the fold is opened. The host sends a
-- result's output cut to this already (nvim/render.py's SHOWN_LINES), with the count of the
-- lines it left out.
local MAX_OUTPUT_LINES = 2000
local INDENT = "    "

local status_hl = {
  pending = "MiniMeStatusPending",
  in_progress = "MiniMeStatusRunning",
  completed = "MiniMeStatusDone",
  failed = "MiniMeStatusFailed",
}

-- The status of a tool still pending or in progress when its turn ended: the agent never
-- said how it ended (it is no longer running here either).
M.UNENDED = "(ended without a status)"
status_hl[M.UNENDED] = "Comment"

--- The header line of a tool and its highlighted parts (foldtext draws them too).
---@param tool minime.turn.Tool
---@return string line, {[1]: integer, [2]: integer, [3]: string}[] spans
function M.header(tool)
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

--- Body lines for a tool's output, indented (no markdown block structure inside) and capped:
--- its diffs (unified, paths relative to the turn's cwd), then its text, of which the host
--- left out `more` lines.
---@param more? integer
---@return string[]
local function output_lines(output, diffs, cwd, more)
  if type(output) == "table" then
    output = vim.islist(output) and table.concat(vim.tbl_map(str, output), "\n") or encode(output)
  end
  output = str(output):gsub("\r\n", "\n")
  local src = {}
  for _, item in ipairs(type(diffs) == "table" and diffs or {}) do
    if type(item) == "table" then
      vim.list_extend(src, diff.lines(item, cwd))
    end
  end
  if output ~= "" then
    vim.list_extend(src, text.split(output))
  end
  if src[#src] == "" then
    src[#src] = nil
  end
  local total = #src + (tonumber(more) or 0)
  local lines = {}
  for i = 1, math.min(#src, MAX_OUTPUT_LINES) do
    lines[i] = INDENT .. clip(src[i]) -- one JSON line can be 500 KB
  end
  if total > MAX_OUTPUT_LINES then
    lines[#lines + 1] = ("%s… %d more lines"):format(INDENT, total - MAX_OUTPUT_LINES)
  end
  return lines
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
  buffer.set_fold_mark(t, h, 0, {
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
  local line, spans = M.header(tool)
  api.nvim_buf_clear_namespace(t.buf, buffer.ns_hl, h, h + 1)
  splice(t, h, 0, h, tool.hlen, { line })
  tool.hlen, tool.line = #line, line
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
  local h = tool_rows.checked(t, tool, (body_end(tool)))
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
  api.nvim_buf_clear_namespace(t.buf, buffer.ns_hl, h + 1, h + ni + no + 1)
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

--- What a tool line says of a call no update titled.
---@param id string
local function untitled(id)
  return id ~= "" and printable.line(id) or "tool"
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
    title = untitled(id),
    status = "pending",
    hlen = 0,
    input_n = 0,
    input_len = 0,
    output_n = 0,
    output_len = 0,
  }
  t.tools[id] = tool
  return tool, tool_rows.place(t, tool)
end

-- What the tool's diffs change: "relative path" -> { old text (false: a new file), new text }
-- (texts a diff is computed for only), so that the editor's own record of the same write is
-- not drawn twice.
local function remember_changes(t, tool, diffs)
  for _, item in ipairs(diffs) do
    local old, new = type(item) == "table" and item.oldText, type(item) == "table" and item.newText
    old = type(old) == "string" and old or false
    if type(new) == "string" and type(item.path) == "string" and #new <= diff.MAX_BYTES then
      tool.changes = tool.changes or {}
      tool.changes[(diff.relative(item.path, t.cwd))] = { old, new }
    end
  end
end

--- The tool of `t` other than `except` that shows `rel` going from `old` (false: a new file)
--- to `new`. A new file's "before" may be "" as well: qwen-code asks about one with
--- `oldText: ""`.
---@return minime.turn.Tool?
local function shown_by(t, except, rel, old, new)
  for _, tool in pairs(t.tools) do
    local change = tool ~= except and tool.changes and tool.changes[rel]
    if change and change[2] == new then
      local before = change[1]
      if before == old or (old == false and before == "") or (before == false and old == "") then
        return tool
      end
    end
  end
end

--- The diffs of a tool's result that no other tool line shows yet: qwen-code in auto-edit mode
--- sends an edit's diff only with its result, after the write through fs/write_text_file
--- already drew it.
local function not_yet_shown(t, tool, diffs)
  return vim.tbl_filter(function(item)
    if type(item) ~= "table" or type(item.path) ~= "string" or type(item.newText) ~= "string" then
      return true
    end
    local old = type(item.oldText) == "string" and item.oldText or false
    return shown_by(t, tool, (diff.relative(item.path, t.cwd)), old, item.newText) == nil
  end, diffs)
end

---@param t minime.turn.Turn
---@param result boolean a tool_result event (else a tool_call)
local function on_tool(t, ev, result)
  local tool, new_row = get_tool(t, str(ev.id))
  if not result then
    -- The call as the host's library merged its updates: shown as it is (no title: its id).
    tool.title = present(ev.title) and clip(printable.line(ev.title, math.huge))
      or untitled(tool.id)
    tool.kind = present(ev.tool_kind) and printable.line(ev.tool_kind, 40) or nil
  end
  if present(ev.status) then
    tool.status = printable.line(ev.status, 40)
  elseif result and not new_row then
    tool.status = "completed"
  end
  draw_header(t, tool, new_row or tool_rows.checked(t, tool, (body_end(tool))))
  if type(ev.locations) == "table" and type(ev.locations[1]) == "table" then
    tool.location = ev.locations[1] -- where <CR> on its line goes (M.jump)
  end
  if not result then
    require("minime.ui.permission").call_update(t.key, tool.id, ev.input)
  end
  local diffs = type(ev.diffs) == "table" and #ev.diffs > 0 and ev.diffs or nil
  if not result and tool.input_n == 0 then
    local lines = input_lines(ev.input)
    if #lines > 0 then
      set_body(t, tool, "input", lines)
    end
  end
  if diffs and result then
    diffs = not_yet_shown(t, tool, diffs)
    diffs = #diffs > 0 and diffs or nil
  end
  if diffs then
    remember_changes(t, tool, diffs)
  end
  local output = ev.output ~= nil and ev.output ~= vim.NIL
  if diffs and not result and not tool.diffs then
    tool.diffs = true
    -- Asked about, not yet written: a diff without oldText is compared with the file as it is.
    local asked = vim.tbl_map(function(item)
      return type(item) == "table" and diff.with_current(item, t.cwd) or item
    end, diffs)
    set_body(t, tool, "output", output_lines(nil, asked, t.cwd))
  elseif result and (output or diffs) then
    tool.diffs = tool.diffs or diffs ~= nil
    set_body(t, tool, "output", output_lines(ev.output, diffs, t.cwd, ev.more_lines))
  end
end

--- <CR> on a tool's line (its header or body) in `buf`, the conversation: the call's first
--- location opens in a code window (the one the user came from, else the first; never a
--- float), at its line. False when the row holds no tool with a location.
---@param buf integer
---@param row integer 1-based
---@return boolean
function M.jump(buf, row)
  local t = buffer.by_buf[buf]
  for _, tool in pairs(t and t.tools or {}) do
    local h, loc = tool_rows.header(t, tool), tool.location
    if loc and h < row and row <= h + 1 + body_end(tool) and type(loc.path) == "string" then
      local path = loc.path:sub(1, 1) == "/" and loc.path or t.cwd .. "/" .. loc.path
      return require("minime.ui.follow").jump(path, tonumber(loc.line) or 1)
    end
  end
  return false
end

--- A terminal event: a client terminal's output now (its end), under the tool line that shows
--- it (`id`; none yet: only its :MiniMeTerminal buffer), with how it ended once it has. The
--- call's result (`tool_result`) replaces it with the whole output.
---@param t minime.turn.Turn
function M.terminal(t, ev)
  require("minime.ui.terminal").update(t.key, ev)
  if not present(ev.id) then
    return
  end
  local tool, new_row = get_tool(t, str(ev.id))
  if new_row then
    draw_header(t, tool, new_row)
  end
  local output = str(ev.output)
  if present(ev.status) then
    local sep = (output == "" or output:sub(-1) == "\n") and "" or "\n"
    output = output .. sep .. "(" .. printable.line(ev.status, 40) .. ")"
  end
  set_body(t, tool, "output", output_lines(output, nil, t.cwd))
end

--- The turn ended: tools the agent left pending or in progress say it, not spinning.
---@param t minime.turn.Turn
function M.end_running(t)
  for _, tool in pairs(t.tools) do
    if tool.status == "pending" or tool.status == "in_progress" then
      tool.status = M.UNENDED
      draw_header(t, tool, tool_rows.checked(t, tool, (body_end(tool))))
    end
  end
end

--- A tool_call event: add the tool's line, or update its title, kind, status (input once).
---@param t minime.turn.Turn
function M.call(t, ev)
  on_tool(t, ev, false)
end

--- A tool_result event: the status (completed if none) and the output.
---@param t minime.turn.Turn
function M.result(t, ev)
  on_tool(t, ev, true)
end

return M
