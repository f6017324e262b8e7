--- Permission prompts: one float at a time, the others wait in a queue.
---
--- `open(req, on_answer)` with
---   req = {id, cwd, session_id, call_id, title, tool_kind, input = table|nil,
---          content = {{type="diff", path, oldText, newText} | {type="text", text} | ...},
---          options = {{option_id, name, kind}, ...}, timeout = seconds|nil, skipped = {text}}
--- shows the request and the agent's own options, numbered in the order sent, each with what
--- its kind does in words. Keys 1..9 pick an option, <CR> the one under the cursor, q/<Esc>
--- reject; `a` picks the allow-once option and asks the host to allow this exact request again
--- without asking (client side, for agents whose options lack "always"). With `timeout`, the
--- title counts down from when the float shows, and an unanswered prompt is rejected at zero.
--- `on_answer(option_id, remember, reason)` is called exactly once, with nil when rejected
--- (reason "timeout" when nobody answered); never after `close(id)` (the host answered).
---
--- The float never takes focus from a code window, nor from someone typing (permission_focus.lua:
--- when it may, the key delay, the notice when it may not, focus going back, insert mode
--- resumed); a float whose keys do not work yet has its footer dimmed. It never covers the
--- cursor's line (placement.lua), and moves when the cursor comes under it.
local focus = require("minime.ui.permission_focus")
local placement = require("minime.ui.placement")
local prompts = require("minime.ui.permission_queue")
local view = require("minime.ui.permission_view")
local window = require("minime.ui.window")

local api = vim.api

local M = {}

-- Its size and look: permission_view.win_config; who is pending: permission_queue; when it may
-- take focus: permission_focus. Its behaviour (focus, key_delay, idle) is the `permission`
-- option, read when needed.

--- Errors raised by on_answer callbacks (they are also notified).
---@type string[]
M.errors = {}

---@class minime.permission.Prompt
---@field req table
---@field on_answer fun(option_id: string?, remember: boolean?, reason: string?)
---@field deadline? number hrtime (ms) at which an unanswered prompt is rejected
---@field live_at? number hrtime (ms) from which its keys work
---@field timer? uv.uv_timer_t
---@field delay_timer? uv.uv_timer_t
---@field watch_timer? uv.uv_timer_t
---@field buf? integer
---@field win? integer
---@field origin? minime.focus.Origin where focus goes back when the float had it
---@field entered? boolean it has had the focus
---@field shown_from? integer the window current when it showed
---@field done? boolean

local ns = api.nvim_create_namespace("minime.permission")

local now_ms, live = focus.now_ms, focus.live

--- Why the float must not take focus now, or nil when it may (see permission_focus.lua).
M.busy = focus.busy

--- The rows the float must not cover: the cursor's line in the window the user is in (or,
--- when that is the float, the one they came from).
---@param p minime.permission.Prompt
---@return integer[]?
local function cursor_rows(p)
  local win = api.nvim_get_current_win()
  if win == p.win then
    win = p.origin and p.origin.win
  end
  return placement.cursor_rows(win)
end

local function win_config(p, lines)
  local left = p.deadline and math.max(0, math.ceil((p.deadline - now_ms()) / 1000))
  local cfg =
    view.win_config(p.req, lines, { waiting = #prompts.waiting, live = live(p), left = left })
  return placement.clear_of(cfg, cursor_rows(p))
end

--- The statusline says whether a prompt waits.
local function statusline()
  pcall(function()
    require("minime.status").refresh()
  end)
end

--- Keep an error in M.errors and tell the user `what` went wrong.
---@param what string
---@param err any
---@param level? integer
local function record(what, err, level)
  M.errors[#M.errors + 1] = tostring(err)
  require("minime.ui.say").say("minime: " .. what .. ": " .. tostring(err), level)
end

local function stop(timer)
  if timer then
    timer:stop()
    timer:close()
  end
end

local moves = api.nvim_create_augroup("minime.ui.permission.moves", { clear = true })

--- Close a prompt's float; where focus goes back to when the float had it (nil otherwise).
---@param p minime.permission.Prompt
---@return minime.focus.Origin? origin
local function teardown(p)
  stop(p.timer)
  p.timer = nil
  focus.stop_timers(p)
  api.nvim_clear_autocmds({ group = moves })
  local was_current = p.win and api.nvim_get_current_win() == p.win or false
  window.close(p.win)
  if p.buf and api.nvim_buf_is_valid(p.buf) then
    pcall(api.nvim_buf_delete, p.buf, { force = true })
  end
  statusline()
  return was_current and (p.origin or { win = p.shown_from or -1, cursor = { 1, 0 } }) or nil
end

local show_next, start_countdown, retitle

--- After a prompt closed: the next one, which takes the focus when the closed one had it (the
--- user was answering prompts) and it may; else focus goes back where the user was.
---@param back minime.focus.Origin?
local function after_close(back)
  if back and #prompts.waiting > 0 and focus.may_enter(true) then
    show_next(back)
  else
    focus.go_back(back)
    show_next()
  end
end

---@param p minime.permission.Prompt
---@param option_id string?
---@param remember? boolean
---@param reason? string
local function answer(p, option_id, remember, reason)
  if p.done then
    return
  end
  p.done = true
  if prompts.shown == p then
    prompts.shown = nil
  end
  local back = teardown(p)
  local ok, err = pcall(p.on_answer, option_id, remember, reason)
  if not ok then
    record("permission answer failed", err, vim.log.levels.ERROR)
  end
  after_close(back)
end

--- Keys of the float: each does nothing until the prompt is live.
---@param p minime.permission.Prompt
---@param first integer row before the first option
local function map_keys(p, first)
  local options = view.options(p.req)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, function()
      if live(p) then
        fn()
      end
    end, { buffer = p.buf, nowait = true, desc = "minime: " .. desc })
  end
  for i = 1, math.min(#options, 9) do
    map(tostring(i), function()
      answer(p, options[i].option_id)
    end, "answer " .. window.oneline(options[i].name))
  end
  local allow = view.remember_option(p.req)
  map("<CR>", function()
    local row = api.nvim_win_get_cursor(0)[1]
    if options[row - first] then
      answer(p, options[row - first].option_id)
    elseif allow and row == first + #options + 1 then
      answer(p, allow, true)
    end
  end, "answer the option under the cursor")
  for _, lhs in ipairs({ "q", "<Esc>" }) do
    map(lhs, function()
      answer(p, nil)
    end, "reject")
  end
  if allow then
    map("a", function()
      answer(p, allow, true)
    end, "allow this exact request again without asking, until :MiniMeReset")
  else
    pcall(vim.keymap.del, "n", "a", { buffer = p.buf }) -- no longer offered (call_update)
  end
end

--- The prompt's request drawn into its buffer, its keys mapped: (its lines, the row before
--- the first option).
---@param p minime.permission.Prompt
---@return string[] lines, integer first
local function fill(p)
  local lines, marks, first, has_diff = view.render(p.req)
  vim.bo[p.buf].modifiable = true
  api.nvim_buf_set_lines(p.buf, 0, -1, false, lines)
  api.nvim_buf_clear_namespace(p.buf, ns, 0, -1)
  for _, m in ipairs(marks) do
    local opts = { end_col = m[3], hl_group = m[4], strict = false }
    api.nvim_buf_set_extmark(p.buf, ns, m[1], m[2], opts)
  end
  vim.bo[p.buf].modifiable = false
  if has_diff then
    vim.bo[p.buf].filetype = "diff"
  end
  map_keys(p, first)
  return lines, first
end

--- The float takes the focus by itself (its keys wait `key_delay`); `origin`: where focus goes
--- back to (default: where the user is now).
---@param p minime.permission.Prompt
---@param origin? minime.focus.Origin
local function take_focus(p, origin)
  p.entered = true
  if api.nvim_get_current_win() == p.win then
    return -- the user went there already
  end
  p.origin = origin or focus.origin()
  focus.start_delay(p, function()
    if not p.done and prompts.shown == p then
      retitle()
    end
  end)
  api.nvim_set_current_win(p.win)
  retitle()
end

--- While the float shows, it moves when the cursor's line comes under it.
---@param p minime.permission.Prompt
local function follow_cursor(p)
  api.nvim_clear_autocmds({ group = moves })
  api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "WinScrolled", "WinEnter" }, {
    group = moves,
    callback = function()
      if prompts.shown ~= p or not (p.win and api.nvim_win_is_valid(p.win)) then
        return
      end
      if api.nvim_get_current_win() == p.win then
        p.entered = true
        return
      end
      local rows, cfg = cursor_rows(p), api.nvim_win_get_config(p.win)
      local moved = rows and placement.clear_of(vim.deepcopy(cfg), rows)
      if moved and (moved.row ~= cfg.row or moved.height ~= cfg.height) then
        local ok, err = pcall(retitle)
        if not ok then
          record("a permission prompt could not be moved", err)
        end
      end
    end,
  })
end

---@param p minime.permission.Prompt
---@param answering? minime.focus.Origin the user just answered the previous prompt in its
---   float, coming from there
local function show(p, answering)
  p.buf = window.scratch("permission")
  local lines, first = fill(p)
  local timeout = tonumber(p.req.timeout)
  if timeout and timeout > 0 and not p.deadline then
    p.deadline = now_ms() + timeout * 1000
  end
  local enter = focus.may_enter(answering ~= nil)
  p.shown_from = api.nvim_get_current_win()
  p.win = window.open_float(p.buf, false, win_config(p, lines))
  -- The cursor on the line above the options (<CR> there does nothing: a habit's <CR> answers
  -- nothing), after the last line: a long diff is scrolled to its end, the options shown.
  pcall(api.nvim_win_set_cursor, p.win, { #lines, 0 })
  pcall(api.nvim_win_set_cursor, p.win, { math.max(1, first), 0 })
  if enter and pcall(take_focus, p, answering) then
    enter = true
  else
    enter, p.live_at = false, nil
  end
  if not enter then
    focus.ring("permission asked", view.title_line(p.req), ":MiniMePermission to answer")
    focus.watch(p, function()
      if not p.done and prompts.shown == p then
        take_focus(p)
      end
    end)
  end
  follow_cursor(p)
  statusline()
  -- Closed some other way (:q, <C-w>c): a rejection; closed by leaving its tab page: shown
  -- again in the page entered (below). Scheduled: no new float in WinClosed.
  local shown_win = p.win
  api.nvim_create_autocmd("WinClosed", {
    pattern = tostring(p.win),
    once = true,
    callback = function()
      vim.schedule(function()
        if not window.moved(shown_win) then
          answer(p, nil)
        end
      end)
    end,
  })
  if p.deadline then
    start_countdown(p)
  end
end

---@param answering? minime.focus.Origin
show_next = function(answering)
  local p = prompts.show_next()
  while p do
    local ok, err = pcall(show, p, answering)
    if not ok then
      -- A prompt that cannot be shown must still be answered, or the agent waits forever.
      record("a permission prompt could not be shown (rejected)", err)
      answer(p, nil)
    end
    p = prompts.show_next()
  end
end

retitle = function()
  local p = prompts.shown
  if p and p.win and api.nvim_win_is_valid(p.win) then
    local lines = api.nvim_buf_get_lines(p.buf, 0, -1, false)
    api.nvim_win_set_config(p.win, win_config(p, lines))
  end
end

--- The title counts down each second; at zero the prompt is rejected.
---@param p minime.permission.Prompt
start_countdown = function(p)
  p.timer = assert(vim.uv.new_timer())
  local function tick()
    if p.done then
      return
    end
    local left = p.deadline - now_ms()
    if left <= 0 then
      require("minime.ui.say").say(
        ("minime: no answer within %s s — rejected: %s"):format(
          tostring(p.req.timeout),
          require("minime.ui.printable").line(p.req.title, 121)
        ),
        vim.log.levels.WARN
      )
      answer(p, nil, nil, "timeout")
      return
    end
    retitle()
    -- Wake on the next whole second left (or at the deadline).
    local wait = math.ceil(left % 1000)
    p.timer:start(wait > 0 and wait or 1000, 0, vim.schedule_wrap(tick))
  end
  tick()
end

--- Ask the user; `on_answer(option_id|nil, remember, reason)` is called exactly once (unless
--- `close(req.id)`).
---@param req table see the module header
---@param on_answer fun(option_id: string?, remember: boolean?, reason: string?)
function M.open(req, on_answer)
  prompts.push({ req = req, on_answer = on_answer })
  if prompts.shown then
    retitle()
    statusline()
  else
    show_next()
  end
end

--- Draw a shown prompt again after its request changed (same buffer and window).
---@param p minime.permission.Prompt
local function redraw(p)
  local lines, first = fill(p) -- the options moved down: their keys too
  if p.win and api.nvim_win_is_valid(p.win) then
    api.nvim_win_set_config(p.win, win_config(p, lines))
    pcall(api.nvim_win_set_cursor, p.win, { math.min(first + 1, #lines), 0 })
  end
end

local function empty(value)
  return value == nil or value == vim.NIL or (type(value) == "table" and next(value) == nil)
end

--- What the agent said of call `call_id` after asking about it: a prompt (shown or waiting)
--- that asked with no input gets `input`. claude-agent-acp asks to approve a plan with an empty
--- toolCall and may send the plan (the call's rawInput) just after the request.
---@param cwd string
---@param call_id string
---@param input any
function M.call_update(cwd, call_id, input)
  if empty(input) or type(input) ~= "table" then
    return
  end
  local function fill_input(p)
    local req = p.req
    if p.done or view.str(req.cwd) ~= cwd or view.str(req.call_id) ~= call_id then
      return false
    end
    if not empty(req.input) then
      return false -- what it asked about stays as asked
    end
    req.input = input
    -- The request itself did not carry what is now shown: `a` could not remember it exactly.
    req.filled = true
    return true
  end
  for _, p in ipairs(prompts.waiting) do
    fill_input(p)
  end
  local shown = prompts.shown
  if shown and fill_input(shown) and shown.buf and api.nvim_buf_is_valid(shown.buf) then
    local ok, err = pcall(redraw, shown)
    if not ok then
      record("a permission prompt could not be redrawn", err)
    end
  end
end

--- Drop a prompt the host already answered (e.g. the turn was cancelled): its float closes,
--- or it leaves the queue; on_answer is not called. Returns whether it was pending.
---@param id any
---@return boolean
function M.close(id)
  local p, was_shown = prompts.remove(id)
  if not p then
    return false
  end
  if was_shown then
    p.done = true
    after_close(teardown(p))
  else
    retitle()
    statusline()
  end
  return true
end

--- Ids of the pending prompts, the shown one first.
---@return any[]
M.pending = prompts.ids

--- Whether a prompt of a turn in `cwd` waits for an answer (the conversation's title says so).
---@param cwd string
---@return boolean
M.waiting = prompts.has_cwd

--- The float of the shown prompt, if any.
---@return integer?
function M.win()
  return prompts.shown and prompts.shown.win
end

--- Whether the shown prompt's keys work (false during its key delay, or with none shown).
---@return boolean
function M.live()
  return prompts.shown ~= nil and live(prompts.shown)
end

--- Enter the float of the oldest pending prompt (the shown one), its keys working at once.
---@return boolean
function M.focus()
  local p = prompts.shown
  if not focus.enter(p) then
    return false
  end
  retitle()
  return true
end

--- :MiniMePermission: go to the oldest pending prompt, or say there is none.
function M.jump()
  if not M.focus() then
    require("minime.ui.say").say("minime: no permission prompt is waiting", vim.log.levels.INFO)
  end
end

-- The prompt shown when its tab page was left shows again in the page entered, its countdown
-- going on (floats live only in the current tab page: minime.ui.window).
window.on_tab_enter(function(moved)
  local p = prompts.shown
  if p and not p.done and moved[p.win] then
    stop(p.timer)
    p.timer = nil
    focus.stop_timers(p)
    show(p)
  end
end)

api.nvim_create_autocmd("VimResized", {
  group = api.nvim_create_augroup("minime.ui.permission", { clear = true }),
  callback = function()
    retitle()
  end,
})

return M
