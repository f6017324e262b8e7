--- One batch of the host's events applied to a conversation, in order: each event to the part
--- that draws it (minime.ui.turn's list; the host joined a run of chunks of one message into
--- one event), then the window opened or following, and the ends of turns fired
--- (MiniMeTurnDone, a notification when hidden, the statusline). Never throws past an event: failures are
--- `record`ed and the next event starts from what the buffer holds.
local buffer = require("minime.ui.turn.buffer")
local conversation = require("minime.ui.turn.conversation")
local document = require("minime.ui.turn.document")
local float = require("minime.ui.turn.float")
local queued = require("minime.ui.turn.queued")
local text = require("minime.ui.turn.text")
local tools = require("minime.ui.turn.tools")

local api = vim.api
local str, visible = text.str, float.visible

local M = {}

--- Where a failure goes (minime.ui.turn sets it: its `errors`).
---@type fun(msg: any)
M.record = function() end

--- Where a batch that found the buffer's end elsewhere than tracked is told (minime.ui.turn
--- sets it: its `resyncs`).
---@type fun(msg: string)
M.resynced = function() end

local handlers = {
  begin = conversation.begin,
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
  budget = document.budget,
  diagnostics = function(t, ev)
    require("minime.ui.turn.diagnostics").show(t, ev)
  end,
  rewound = document.rewound,
  attached = document.attached,
  queued = queued.set,
}

---@param t minime.turn.Turn
local function run(t, fn, ...)
  local ok, err = xpcall(fn, debug.traceback, t, ...)
  if not ok then
    M.record(err)
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
    float.restate(t)
  else -- off screen: one line says whose turn ended, and how
    local what = data.error and ("failed: " .. require("minime.ui.printable").text(data.error))
      or ("finished (" .. (text.reasons[data.stop_reason] or data.stop_reason or "ended") .. ")")
    local threads = package.loaded["minime.threads"]
    local thread = threads and threads.get(t.key)
    local said = thread
        and ("minime: %s: turn %s (:MiniMeThreads)"):format(threads.name(thread), what)
      or ("minime: turn in %s %s"):format(vim.fn.fnamemodify(t.cwd, ":~"), what)
    require("minime.ui.say").say(said, data.error and vim.log.levels.ERROR or vim.log.levels.INFO)
    if thread then
      require("minime.ui.os_notify").send(("%s: turn %s"):format(threads.name(thread), what))
    end
  end
  api.nvim_exec_autocmds("User", { pattern = "MiniMeTurnDone", data = data, modeline = false })
  require("minime.heap").soon()
end

--- Apply one batch of events to the conversation `t` (`fresh`: made for this batch); `open`
--- shows its window (the public module's open, which hides the others).
---@param t minime.turn.Turn
---@param events table[]
---@param fresh boolean
---@param open fun()
---@return boolean began a turn began in it
function M.apply(t, events, fresh, open)
  local count = api.nvim_buf_line_count(t.buf)
  local last = count == t.row + 1 and api.nvim_buf_get_lines(t.buf, t.row, count, false)[1]
  if not last or #last ~= t.col then
    -- The buffer changed behind the tracked end (its line count, or the last line's length:
    -- the indent Insert mode's end removes from the line under the cursor): go on from what
    -- it holds.
    M.resynced(("the end was at %d:%d, the buffer ends at line %d"):format(t.row + 1, t.col, count))
    buffer.sync_end(t)
  end
  local was_running = t.running
  local shown = visible(t)
  local at_end = shown and float.at_end(t)
  local opening, began, restate = fresh, false, false
  local ended = {} -- the ends of turns a later turn of this batch followed
  vim.bo[t.buf].modifiable = true
  for _, ev in ipairs(events) do
    local kind = type(ev) == "table" and ev.kind or nil
    if kind == "text" or kind == "thinking" or kind == "user" then
      -- One edit per event: the host joined a run of chunks of one message (render.Renderer).
      run(t, document.add_text, kind, str(ev.text), ev.message_id)
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
      M.record(("unknown event kind %q"):format(str(kind)))
    end
  end
  vim.bo[t.buf].modifiable = false
  queued.draw(t) -- under the end, wherever it is now

  if opening and not visible(t) then
    open()
  elseif visible(t) and at_end then
    float.follow(t)
  end
  if (began or restate) and shown and visible(t) then
    float.restate(t) -- the title says "running" (or idle) again
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
  return began
end

return M
