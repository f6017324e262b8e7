--- The conversations: one per thread (the key: its id, minime.threads), each its own buffer
--- (`b:minime == "turn"`, `b:minime_thread` its id), fed by the Python host in batches; one
--- window (the panel or the float) shows the current thread's, and switches buffer when the
--- current thread changes. Where a function takes a key, a cwd means its current thread.
---
--- The host calls `require('minime.ui.turn').apply(key, events)` about every 16 ms with the
--- events of one batch, in order. Their shapes are stated once, as the msgspec Structs of
--- rplugin/python3/minime/nvim/events.py (tag `kind`: begin, reset, text, thinking, user,
--- tool_call, tool_result, terminal, plan, attached, notice, rewound, queued, done, budget,
--- diagnostics);
--- nil and vim.NIL fields are ignored here.
---
--- Speed: apply() costs O(size of the batch). Text goes in with one nvim_buf_set_text at the end
--- of the buffer, whose end position is tracked here rather than read back; tool lines and the
--- plan are edited in place through extmarks. The buffer is never rewritten: a turn appends to
--- the conversation; "reset" (or a fresh begin) starts a new buffer.
---
--- This module holds the conversations (one per thread; named `t`, a "turn", in the parts) and
--- hands each batch to turn/batch.lua; the parts are
---   turn/batch.lua     one batch: each event to its part, then the window and the turn's end
---   turn/conversation.lua  the turns in order: a new prompt appends, reset, old output trimmed
---   turn/document.lua  the blocks: prompt, text, thinking, plan, notices, the done line
---   turn/tools.lua     tool lines and their folded bodies
---   turn/diagnostics.lua  the errors a turn caused, under it (<CR>, `f`)
---   turn/buffer.lua    the buffer: its end, one-call edits, namespaces, highlighting
---   turn/folds.lua     'foldexpr' and 'foldtext'
---   turn/float.lua     the window: placement, footer, options, following, keys
---   turn/panel.lua     the window as a split at the right (`window.layout = "split"`)
---   turn/blocks.lua    the answer's code blocks: yank one, open one in a scratch buffer
---   turn/text.lua      strings: fields, long lines, errors, stop reasons
---   turn/types.lua     the shapes of a conversation and of its tool lines (annotations)
local batch = require("minime.ui.turn.batch")
local buffer = require("minime.ui.turn.buffer")
local conversation = require("minime.ui.turn.conversation")
local float = require("minime.ui.turn.float")
local folds = require("minime.ui.turn.folds")
local text = require("minime.ui.turn.text")
local queued = require("minime.ui.turn.queued")
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
batch.record = record
batch.resynced = function(msg)
  M.resyncs[#M.resyncs + 1] = msg
end

--- The conversation of `key`: a thread id as it is; else a cwd's current thread (nil: none).
---@param key string
---@return minime.turn.Turn?
local function find(key)
  return require("minime.threads").pick(turns, key)
end

--- Whether `key` may take the window by itself: the current thread of its cwd (a thread in
--- the background streams into its buffer, never into the window shown).
---@param key string
---@return boolean
local function is_current(key)
  local threads = package.loaded["minime.threads"]
  local thread = threads and threads.get(key)
  return thread == nil or threads.current(thread.cwd) == key
end

---@param key string
---@return minime.turn.Turn
local function get_turn(key)
  local t = turns[key]
  if not t then
    local threads = package.loaded["minime.threads"]
    local cwd = threads and threads.cwd_of(key) or key
    t = { key = key, cwd = cwd, running = false } --[[@as minime.turn.Turn]]
    turns[key] = t
    buffer.make(t)
  elseif not api.nvim_buf_is_loaded(t.buf) then -- wiped, or unloaded (it would read as empty)
    pcall(api.nvim_buf_delete, t.buf, { force = true })
    buffer.forget(t.buf)
    float.hide(t)
    buffer.make(t)
    local kept = t.unloaded -- `:bd`: its text comes back (plain: its marks went with it)
    t.unloaded = nil
    if kept then
      vim.bo[t.buf].modifiable = true
      api.nvim_buf_set_lines(t.buf, 0, -1, false, kept)
      vim.bo[t.buf].modifiable = false
      buffer.sync_end(t)
    else
      t.past = {}
    end
  end
  return t
end

---@param key string
---@param events table[]
local function apply(key, events)
  local fresh = turns[key] == nil
  local t = get_turn(key)
  local began = batch.apply(t, events, fresh, function()
    if is_current(key) then
      M.open(key)
    end
  end)
  if began then
    last_key = key
  end
end

-- Public API ----------------------------------------------------------------------------------

--- Apply one batch of events to the conversation of `key` (a thread id). Never throws:
--- failures go to `M.errors`.
---@param key string
---@param events table[]
function M.apply(key, events)
  local ok, err = xpcall(apply, debug.traceback, str(key), type(events) == "table" and events or {})
  if not ok then
    record(err)
  end
end

--- Show the conversation of `key` (a thread id, or a cwd: its current thread) in the window
--- another one shows (its buffer switched: never a second panel), else in a new one. Returns
--- false for an unknown key.
---@param key string
---@return boolean
function M.open(key)
  local t = find(key)
  if not t or not (api.nvim_buf_is_loaded(t.buf) or t.unloaded) then
    return false
  end
  t = get_turn(t.key) -- a conversation `:bd` unloaded comes back
  last_key = t.key
  if visible(t) then
    return true
  end
  for _, other in pairs(turns) do
    if other ~= t and visible(other) then
      float.switch(other, t)
      break
    end
  end
  for _, other in pairs(turns) do
    if other ~= t then
      float.hide(other)
    end
  end
  return visible(t) or float.show(t)
end

--- An empty conversation for thread `key` working in `cwd` (:MiniMeNew), its title naming
--- `agent`; nothing changes if it exists.
---@param key string
---@param cwd string
---@param agent? string
function M.make(key, cwd, agent)
  local t = get_turn(key)
  t.cwd = cwd
  if agent and agent ~= "" and not t.agent then
    t.agent = require("minime.ui.printable").line(agent, 60)
  end
end

--- Whether the conversation of `key` shows in a window of the current tab page.
---@param key string
---@return boolean
function M.on_screen(key)
  local t = turns[key]
  return t ~= nil and api.nvim_buf_is_valid(t.buf) and visible(t)
end

--- Show the float of the last turn begun or shown.
---@return boolean
function M.reopen_last()
  return last_key ~= nil and M.open(last_key)
end

--- Hide the float of a turn; the turn goes on and its buffer keeps receiving events.
---@param key string
function M.close(key)
  local t = find(key)
  if t then
    float.hide(t)
  end
end

--- A closed thread's conversation goes: its window closes, its buffer is wiped.
---@param key string
function M.forget(key)
  local t = turns[key]
  if not t then
    return
  end
  float.hide(t)
  turns[key] = nil
  buffer.forget(t.buf)
  pcall(api.nvim_buf_delete, t.buf, { force = true })
  if last_key == key then
    last_key = nil
  end
end

--- State of a conversation (a thread id, or a cwd: its current thread), or nil.
---@param key string
---@return {buf: integer, win?: integer, running: boolean, cwd: string, session_id?: string,
---  stop_reason?: string, state: string, agent?: string, last_start: integer,
---  queued: string[], thread: string}?
function M.get(key)
  local t = find(key)
  if not t then
    return nil
  end
  visible(t)
  return {
    thread = t.key,
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
  local t = key and find(key)
  if t and visible(t) then
    float.restate(t)
  end
end

--- Turns in the conversation of `key` (0 if none).
---@param key string
---@return integer
function M.turn_count(key)
  local t = find(key)
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

-- The editor resized: the float placed again, the panel to its width; a window resized (the
-- panel by hand): its title and footer cut to the width again.
api.nvim_create_autocmd({ "VimResized", "WinResized" }, {
  group = api.nvim_create_augroup("minime.ui.turn", { clear = true }),
  callback = function(ev)
    local editor = ev.event == "VimResized"
    for _, t in pairs(turns) do
      if visible(t) then
        float.restate(t, editor)
      end
    end
  end,
})

return M
