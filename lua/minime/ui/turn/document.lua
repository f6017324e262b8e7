--- The turn document: the prompt, then blocks appended at the end — answer text, thinking
--- (a fold each), replayed user text, the plan (edited in place), notices, the done line —
--- separated by blank lines. Tool lines are minime.ui.turn.tools; the edits are
--- minime.ui.turn.buffer's.
local buffer = require("minime.ui.turn.buffer")
local markdown = require("minime.ui.turn.markdown")
local text = require("minime.ui.turn.text")
local window = require("minime.ui.window")

local api = vim.api
local append, hl, set_fold_mark = buffer.append, buffer.hl, buffer.set_fold_mark
local str, present, split = text.str, text.present, text.split

local M = {}

-- Blocks of these kinds follow one another without a blank line between them.
local tight = { tool = true, notice = true }
-- The blocks that are markdown (the agent's words): its thinking too, never shown raw.
local markdown_kinds = { text = true, thinking = true }

local function close_thinking(t)
  local id = t.thinking
  if not id then
    return
  end
  t.thinking = nil
  local m = api.nvim_buf_get_extmark_by_id(t.buf, buffer.ns_fold, id, {})
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
function M.start_block(t, kind)
  if markdown_kinds[t.block] then
    markdown.close(t)
  end
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
  if markdown_kinds[kind] then
    markdown.open(t)
  end
end

--- Add whole lines as a new block at the end; returns the row of the first one.
---@param t minime.turn.Turn
---@param kind string
---@param lines string[]
---@return integer row
local function add_lines(t, kind, lines)
  M.start_block(t, kind)
  local row = t.row
  append(t, table.concat(lines, "\n"))
  return row
end

M.add_lines = add_lines

--- Streamed text (a run of chunks already joined) at the end of the buffer.
---@param t minime.turn.Turn
---@param kind "text"|"thinking"|"user"
---@param s string
---@param message_id? string the agent's message id: a new one starts a new block
function M.add_text(t, kind, s, message_id)
  if s:find("\r", 1, true) then -- (gsub alone costs 0.3 s on a 10 MB chunk)
    s = s:gsub("\r\n", "\n")
  end
  local continuing = t.block == kind
    and not (present(message_id) and present(t.message_id) and message_id ~= t.message_id)
  if not continuing and s:find("^%s") then
    s = s:gsub("^%s*\n", "") -- blank lines at its start (codex starts thinking with "\n\n")
  end
  if s == "" then
    return
  end
  if present(message_id) then
    t.message_id = message_id
  elseif not continuing then
    t.message_id = nil
  end
  if kind == "user" then
    -- A quoted block, like the prompt; the "> " after a final newline waits for more text.
    local body, nl = s:match("^(.-)(\n?)$")
    local lead = (not continuing or t.quote_next) and "> " or ""
    s = lead .. body:gsub("\n", "\n> ") .. nl
    t.quote_next = nl ~= ""
  end
  if not continuing then
    M.start_block(t, kind)
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
  append(t, text.break_long_lines(t.col, s))
  if markdown_kinds[kind] then
    markdown.grow(t)
  end
end

local plan_marks = {
  completed = { "☑ ", "MiniMePlanDone" },
  in_progress = { "◐ ", "MiniMePlanActive" },
}

--- Show the plan block, or replace it where it is.
---@param t minime.turn.Turn
function M.plan(t, ev)
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
    row = api.nvim_buf_get_extmark_by_id(t.buf, buffer.ns_pos, t.plan.mark, {})[1]
    api.nvim_buf_clear_namespace(t.buf, buffer.ns_hl, row, row + t.plan.n)
    buffer.splice(t, row, 0, row + t.plan.n - 1, t.plan.last_len, lines)
  else
    row = add_lines(t, "plan", lines)
    t.plan =
      { mark = api.nvim_buf_set_extmark(t.buf, buffer.ns_pos, row, 0, { right_gravity = false }) }
  end
  t.plan.n, t.plan.last_len = #lines, #lines[#lines]
  for i, group in ipairs(groups) do
    if group then
      hl(t, row + i - 1, 0, row + i - 1, #lines[i], group)
    end
  end
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

--- The done line; the turn stops running and `t.done` holds its MiniMeTurnDone data.
---@param t minime.turn.Turn
function M.done(t, ev)
  local reasons = text.reasons
  local reason = present(ev.stop_reason) and str(ev.stop_reason) or nil
  local err = present(ev.error) and text.plain_error(ev.error) or nil
  local line, group
  if err then
    line, group = "✗ error: " .. err, "MiniMeError"
  elseif present(ev.budget) then -- cancelled for the thread's budget (minime.budget)
    line = "■ budget reached (" .. require("minime.ui.printable").line(str(ev.budget), 80) .. ")"
    group = "MiniMeStatusPending"
  else
    line = "■ " .. (reasons[reason] or reason or "ended")
    group = reason == "end_turn" and "MiniMeDone" or "MiniMeStatusPending"
  end
  local words = reasons[reason]
  if
    reason
    and not present(ev.budget)
    and not (words and words:sub(1, #reason) == reason)
    and not (err and reason == "error")
  then
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
  t.done = {
    thread = t.key,
    cwd = t.cwd,
    session_id = t.session_id,
    stop_reason = reason,
    error = err,
    budget = present(ev.budget) and str(ev.budget) or nil,
  }
end

--- The files an ask's @-mentions attached, by name (rplugin/.../nvim/mentions.py).
---@param t minime.turn.Turn
function M.attached(t, ev)
  local names = {}
  for _, n in ipairs(type(ev.names) == "table" and ev.names or {}) do
    names[#names + 1] = (str(n):gsub("[%c]", " "))
  end
  if #names == 0 then
    return
  end
  local line = "📎 " .. table.concat(names, " · ")
  local row = add_lines(t, "attached", { line })
  hl(t, row, 0, row, #line, "MiniMeNotice")
end

local budget_marks = {
  warn = { "⚠ ", "MiniMeStatusPending" },
  reached = { "■ ", "MiniMeStatusPending" },
  info = { "ℹ ", "MiniMeNotice" },
}

--- A line of the thread's budget: passed 80%, reached outside a turn, not enforceable.
---@param t minime.turn.Turn
function M.budget(t, ev)
  local mark = budget_marks[present(ev.level) and str(ev.level) or "warn"] or budget_marks.info
  local line = mark[1] .. require("minime.ui.printable").line(str(ev.text), 300)
  local row = add_lines(t, "notice", { line })
  hl(t, row, 0, row, #line, mark[2])
end

--- The conversation goes on from before an ask (a resend): one line across it.
---@param t minime.turn.Turn
function M.rewound(t, ev)
  local line = ("── %s ──"):format(require("minime.ui.printable").line(str(ev.text), 300))
  local row = add_lines(t, "rewound", { line })
  hl(t, row, 0, row, #line, "MiniMeNotice")
end

---@param t minime.turn.Turn
function M.notice(t, ev)
  local lines = split((str(ev.text):gsub("\r\n", "\n")))
  for i, l in ipairs(lines) do
    lines[i] = (i == 1 and "ℹ " or "  ") .. l
  end
  local row = add_lines(t, "notice", lines)
  hl(t, row, 0, row + #lines - 1, #lines[#lines], "MiniMeNotice")
end

return M
