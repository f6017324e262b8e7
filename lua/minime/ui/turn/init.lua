--- The turn float: one per session cwd (the key), fed by the Python host in batches.
---
--- The host calls `require('minime.ui.turn').apply(key, events)` about every 16 ms with the
--- events of one batch, in order. Their shapes are stated once, as the msgspec Structs of
--- rplugin/python3/minime/nvim/events.py (tag `kind`: begin, reset, text, thinking, user,
--- tool_call, tool_result, terminal, plan, attached, notice, queued, done); nil and vim.NIL fields are
--- ignored here.
---
--- Speed: apply() costs O(size of the batch). Text goes in with one nvim_buf_set_text at the end
--- of the buffer, whose end position is tracked here rather than read back; tool lines and the
--- plan are edited in place through extmarks. The buffer is never rewritten: a turn appends to
--- the conversation; "reset" (or a fresh begin) starts a new buffer.
---
--- This module holds the conversations (one per cwd; named `t`, a "turn", in the parts) and
--- dispatches each batch; the parts are
---   turn/conversation.lua  the turns in order: a new prompt appends, reset, old output trimmed
---   turn/document.lua  the blocks: prompt, text, thinking, plan, notices, the done line
---   turn/tools.lua     tool lines and their folded bodies
---   turn/buffer.lua    the buffer: its end, one-call edits, namespaces, highlighting
---   turn/folds.lua     'foldexpr' and 'foldtext'
---   turn/float.lua     the window: placement, footer, options, following, keys
---   turn/text.lua      strings: fields, long lines, errors, stop reasons
local buffer = require("minime.ui.turn.buffer")
local conversation = require("minime.ui.turn.conversation")
local document = require("minime.ui.turn.document")
local float = require("minime.ui.turn.float")
local folds = require("minime.ui.turn.folds")
local text = require("minime.ui.turn.text")
local queued = require("minime.ui.turn.queued")
local tools = require("minime.ui.turn.tools")
local window = require("minime.ui.window")

local api = vim.api
local str, visible = text.str, float.visible

local M = {}

--- Failures inside apply(), newest last (capped), each with its Lua traceback: apply never
--- throws, tests read this (the user never sees it).
---@type string[]
M.errors = {}

--- Hook: `<C-c>` in a turn float calls it with the turn's key: cancels the turn.
---@type fun(key: string)
M.on_cancel = function(key)
  require("minime").cancel(key)
end

--- Hook: `i` (or `<CR>` on the last line) in a turn float calls it with the key: the input
--- float, anchored to it, whose text is the next ask in that cwd.
---@type fun(key: string)
M.on_reply = function(key)
  require("minime.actions").reply(key)
end

--- Batches that found the buffer's end elsewhere than tracked (and went on from the buffer):
--- tests and bench/random_sequences.py count them.
---@type string[]
M.resyncs = {}

local MAX_ERRORS = 100

---@class minime.turn.Tool
---@field id string
---@field title string
---@field kind? string
---@field status string
---@field region integer extmark (ns_fold) from the header line to the end of the body
---@field hlen integer byte length of the header line
---@field line? string the header line drawn (minime.ui.turn.tool_rows checks it is still there)
---@field input_n integer body lines showing the input
---@field input_len integer byte length of the last input line
---@field output_n integer body lines showing the output
---@field output_len integer byte length of the last output line
---@field diffs? boolean its output shows diffs

---@class minime.turn.Turn
---@field key string
---@field buf integer
---@field win? integer
---@field last_win? integer the float last opened (it follows the user to another tab page)
---@field cwd string
---@field session_id? string
---@field running boolean
---@field stop_reason? string
---@field error? string
---@field row integer last line (0-based) of the buffer
---@field col integer byte length of the last line
---@field prev_col integer byte length of the line before the last one (0 if none)
---@field block? string kind of the last block
---@field message_id? string the agent's id of the message the last text block belongs to
---@field thinking? integer extmark of the thinking region still growing at the end
---@field quote_next? boolean the next user chunk starts a quoted line
---@field regions table<integer, minime.turn.Tool|"thinking"> fold regions, by extmark id
---@field tools table<string, minime.turn.Tool>
---@field plan? {mark: integer, n: integer, last_len: integer}
---@field done? table data of the MiniMeTurnDone event, pending until the batch ends
---@field agent? string the agent's label (the title shows it)
---@field past? minime.turn.Past[] the conversation's turns, oldest first

---@type table<string, minime.turn.Turn>
local turns = {}
---@type string?
local last_key

local function record(msg)
  local errors = M.errors
  errors[#errors + 1] = tostring(msg)
  if #errors > MAX_ERRORS then
    table.remove(errors, 1)
  end
end

---@param key string
---@return minime.turn.Turn
local function get_turn(key)
  local t = turns[key]
  if not t then
    t = { key = key, cwd = key, running = false } --[[@as minime.turn.Turn]]
    turns[key] = t
    buffer.make(t)
  elseif not api.nvim_buf_is_loaded(t.buf) then -- wiped, or unloaded (it would read as empty)
    pcall(api.nvim_buf_delete, t.buf, { force = true })
    buffer.forget(t.buf)
    float.hide(t)
    buffer.make(t)
    t.past = {}
  end
  return t
end

local handlers = {
  begin = function(t, ev)
    conversation.begin(t, ev)
    last_key = t.key
  end,
  reset = conversation.reset,
  tool_call = tools.call,
  tool_result = tools.result,
  terminal = tools.terminal,
  plan = document.plan,
  done = function(t, ev)
    tools.end_running(t)
    document.done(t, ev)
  end,
  notice = document.notice,
  attached = document.attached,
  queued = queued.set,
}

---@param t minime.turn.Turn
local function run(t, fn, ...)
  local ok, err = xpcall(fn, debug.traceback, t, ...)
  if not ok then
    record(err)
    -- Whatever failed, the next event starts from what the buffer really holds.
    pcall(function()
      t.thinking = nil
      buffer.sync_end(t)
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
---@param data? table the turn's end (default: t.done, then cleared)
local function finish(t, data)
  if not data then
    data = t.done
    t.done = nil
  end
  buffer.highlight(t, true)
  if visible(t) then
    api.nvim_win_set_config(t.win, float.config(t))
  else
    local what = data.error and ("failed: " .. require("minime.ui.printable").text(data.error))
      or ("finished (" .. (text.reasons[data.stop_reason] or data.stop_reason or "ended") .. ")")
    require("minime.ui.say").say(
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
  if api.nvim_buf_line_count(t.buf) ~= t.row + 1 then
    -- The buffer changed behind the tracked end (O(1) to check): go on from what it holds.
    M.resyncs[#M.resyncs + 1] = ("the end was at line %d, the buffer has %d"):format(
      t.row + 1,
      api.nvim_buf_line_count(t.buf)
    )
    buffer.sync_end(t)
  end
  local was_running = t.running
  local shown = visible(t)
  local at_end = shown and float.at_end(t)
  local opening, began, restate = fresh, false, false
  local ended = {} -- the ends of turns a later turn of this batch followed
  vim.bo[t.buf].modifiable = true
  local i, n = 1, #events
  while i <= n do
    local ev = events[i]
    local kind = type(ev) == "table" and ev.kind or nil
    if kind == "text" or kind == "thinking" or kind == "user" then
      -- Coalesce a run of chunks of one message into one edit.
      local parts, id = { str(ev.text) }, ev.message_id
      while
        i < n
        and type(events[i + 1]) == "table"
        and events[i + 1].kind == kind
        and events[i + 1].message_id == id
      do
        i = i + 1
        parts[#parts + 1] = str(events[i].text)
      end
      run(t, document.add_text, kind, table.concat(parts), id)
    elseif handlers[kind] then
      if kind == "begin" then
        if t.done then -- a queued ask begins in the batch its turn ended in: both ends count
          ended[#ended + 1] = t.done
          t.done = nil
        end
        opening, began, at_end = true, true, true
      elseif kind == "reset" then
        opening = opening and began -- an empty conversation opens nothing by itself
        restate = true
      elseif kind == "queued" then
        restate = true -- the footer counts them
      end
      run(t, handlers[kind], ev)
    else
      record(("unknown event kind %q"):format(str(kind)))
    end
    i = i + 1
  end
  vim.bo[t.buf].modifiable = false
  queued.draw(t) -- under the end, wherever it is now

  if opening and not visible(t) then
    M.open(key)
  elseif visible(t) and at_end then
    float.follow(t)
  end
  if (began or restate) and shown and visible(t) then
    api.nvim_win_set_config(t.win, float.config(t)) -- the title says "running" (or idle) again
  end
  for _, data in ipairs(ended) do
    finish(t, data)
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
  local ok, err = xpcall(apply, debug.traceback, str(key), type(events) == "table" and events or {})
  if not ok then
    record(err)
  end
end

--- Whether a tool of the running turn of `key` already shows `rel` going from `old` to `new`
--- (see minime.ui.turn.tools.shows_change).
function M.shows_change(key, rel, old, new)
  local t = turns[key]
  return t ~= nil and tools.shows_change(t, rel, old, new)
end

--- Show the float of a turn (hiding any other turn float). Returns false for an unknown key.
---@param key string
---@return boolean
function M.open(key)
  local t = turns[key]
  if not t or not api.nvim_buf_is_loaded(t.buf) then
    return false
  end
  last_key = key
  if visible(t) then
    return true
  end
  for _, other in pairs(turns) do
    float.hide(other)
  end
  float.show(t)
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
    float.hide(t)
  end
end

--- State of a turn, or nil.
---@param key string
---@return {buf: integer, win?: integer, running: boolean, cwd: string, session_id?: string,
---  stop_reason?: string, state: string, agent?: string, last_start: integer,
---  queued: string[]}?
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
    state = float.state(t),
    agent = t.agent,
    last_start = conversation.last_start(t),
    queued = queued.get(t),
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

--- The float shown now (its key and window), if any.
---@return string? key, integer? win
function M.shown()
  for key, t in pairs(turns) do
    if visible(t) then
      return key, t.win
    end
  end
  return nil, nil
end

--- :MiniMeToggle: hide the float shown, or show the conversation of `key` (else the last one).
--- Hiding never touches the turn. Returns whether a float is shown now.
---@param key? string
---@return boolean
function M.toggle(key)
  local shown = M.shown()
  if shown then
    M.close(shown)
    return false
  end
  return (key ~= nil and M.open(key)) or M.reopen_last()
end

--- Redraw the title of `key`'s float if it is shown, or with no key of the float shown: its
--- state changed outside the events (the session's mode; a permission prompt came or went).
---@param key? string
function M.refresh(key)
  key = key or M.shown()
  local t = key and turns[key]
  if t and visible(t) then
    api.nvim_win_set_config(t.win, float.config(t))
  end
end

--- Turns in the conversation of `key` (0 if none).
---@param key string
---@return integer
function M.turn_count(key)
  local t = turns[key]
  return t and t.past and #t.past or 0
end

--- 'foldexpr' and 'foldtext' of the float (the window options name them here).
M.foldexpr = folds.expr
M.foldtext = folds.text

-- The float shown when its tab page was left shows in the tab page entered (unfocused): floats
-- live only in the current tab page (minime.ui.window).
window.on_tab_enter(function(moved)
  for key, t in pairs(turns) do
    if t.last_win and moved[t.last_win] and not visible(t) and M.shown() == nil then
      if api.nvim_buf_is_loaded(t.buf) then
        last_key = key
        float.show(t, false)
      end
    end
  end
end)

api.nvim_create_autocmd("VimResized", {
  group = api.nvim_create_augroup("minime.ui.turn", { clear = true }),
  callback = function()
    for _, t in pairs(turns) do
      if visible(t) then
        api.nvim_win_set_config(t.win, float.config(t))
      end
    end
  end,
})

return M
