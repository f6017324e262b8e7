--- The life of a float that asks the user something, with two bodies: a permission prompt
--- (ui/permission.lua) and a question from the agent (ui/elicitation.lua). Each body is only
--- what it shows and what its keys answer (its `spec`); everything else is here, once: one
--- float of a kind at a time, the others wait in its queue (ask/queue.lua); ask/askers.lua
--- gives a body's module the same public functions and answers for every kind. An
--- asker, `new(spec)`, opens the shown one through minime.ui.window (and shows it again in the
--- tab page entered when its page was left), follows permission_focus.lua's rules (it takes
--- the focus only when it may, its keys wait their delay, one notice when it may not, focus
--- going back where the user was, insert mode resumed), counts down a `timeout` (ask/countdown.lua), and calls
--- `on_answer` exactly once: with the kind's answer, or with `spec.refusal(reason)` when the
--- user says no (q, <Esc>, closing it: ask/keys.lua), at the countdown's end (reason
--- "timeout") or when it cannot be shown — never after `close(id)` (the host answered). What
--- it shows comes from the kind (`render`, `win_config`, `keys`); ask/draw.lua draws it.
local countdown = require("minime.ui.ask.countdown")
local draw = require("minime.ui.ask.draw")
local focus = require("minime.ui.permission_focus")
local keys = require("minime.ui.ask.keys")
local queue = require("minime.ui.ask.queue")
local window = require("minime.ui.window")

local api = vim.api

local M = {}

---@class minime.ask.Ask
---@field req table
---@field on_answer fun(...)
---@field deadline? number hrtime (ms) at which an unanswered ask is refused
---@field live_at? number hrtime (ms) from which its keys work
---@field timer? uv.uv_timer_t
---@field delay_timer? uv.uv_timer_t
---@field watch_timer? uv.uv_timer_t
---@field buf? integer
---@field win? integer
---@field origin? minime.focus.Origin where focus goes back when the float had it
---@field entered? boolean it has had the focus
---@field shown_from? integer the window current when it showed
---@field filling? boolean a step of the kind's own is open: the float's keys wait
---@field done? boolean
---@field rung? string the "permission asked" message said for it (withdrawn once answered)

---@class minime.ask.Words
---@field noun string what one ask is ("permission prompt", "question")
---@field waiting string what a thread does while one waits ("waiting for permission")
---@field asked string the notice's head when it may not take focus ("permission asked")
---@field refuse string what q/<Esc> do ("reject", "decline")
---@field refused string what a refusal did ("rejected", "declined")
---@field answer_failed string the error when on_answer fails

---@class minime.ask.Spec
---@field kind string b:minime of its buffer, the name of its autocmd groups
---@field words minime.ask.Words
---@field render fun(p: minime.ask.Ask): string[], table[]?, integer, string? lines, marks
---   {row, col, end_col, hl_group}, the row before the first item, a filetype
---@field win_config fun(p: minime.ask.Ask, lines: string[], state: table): table state =
---   {waiting, live, left?, suffix}: its title ends with `suffix` (whose thread, how many
---   wait, the countdown); a footer given as text is dimmed here while its keys wait
---@field keys fun(p: minime.ask.Ask, first: integer) its own keys (q/<Esc> are the asker's)
---@field refusal fun(reason?: string): ... on_answer's arguments for "no"
---@field title fun(p: minime.ask.Ask): string what the notice and the expiry name
---@field cursor fun(win: integer, lines: string[], first: integer) the cursor once shown
---@field timeout? fun(p: minime.ask.Ask): number? seconds before it is refused
---@field placed? boolean kept clear of the cursor's line (draw.lua)

---@class minime.ask.Asker
---@field spec minime.ask.Spec
---@field queue minime.ask.Queue
---@field errors string[] errors of on_answer and of the float (also said to the user)
---@field ns integer
---@field moves integer augroup of the shown float's moves
local Asker = {}
Asker.__index = Asker

local function stop(timer)
  if timer then
    timer:stop()
    timer:close()
  end
end

--- The statusline says whether an ask waits.
local function statusline()
  pcall(function()
    require("minime.status").refresh()
  end)
end

--- Keep an error in errors and tell the user `what` went wrong.
---@param what string
---@param err any
---@param level? integer
function Asker:record(what, err, level)
  self.errors[#self.errors + 1] = tostring(err)
  require("minime.ui.say").say("minime: " .. what .. ": " .. tostring(err), level)
end

--- The kind's rendering in the float's buffer, its keys mapped: (its lines, the row before
--- the first item).
---@param p minime.ask.Ask
---@return string[] lines, integer first
function Asker:fill(p)
  local lines, first = draw.fill(self, p)
  self.spec.keys(p, first)
  keys.refuse(p, function()
    self:refuse(p)
  end, self.spec.words.refuse)
  return lines, first
end

--- Draw a shown ask again after its request changed (same buffer and window).
---@param p minime.ask.Ask
function Asker:redraw(p)
  local lines, first = self:fill(p) -- the items moved down: their keys too
  draw.refit(self, p, lines, first)
end

function Asker:retitle()
  draw.retitle(self)
end

--- Close an ask's float; where focus goes back to when the float had it (nil otherwise).
---@param p minime.ask.Ask
---@return minime.focus.Origin? origin
function Asker:teardown(p)
  stop(p.timer)
  p.timer = nil
  focus.stop_timers(p)
  api.nvim_clear_autocmds({ group = self.moves })
  local was_current = p.win and api.nvim_get_current_win() == p.win or false
  window.close(p.win)
  if p.buf and api.nvim_buf_is_valid(p.buf) then
    pcall(api.nvim_buf_delete, p.buf, { force = true })
  end
  statusline()
  return was_current and (p.origin or { win = p.shown_from or -1, cursor = { 1, 0 } }) or nil
end

--- After an ask closed: the next one, which takes the focus when the closed one had it (the
--- user was answering) and it may; else focus goes back where the user was.
---@param back minime.focus.Origin?
function Asker:after_close(back)
  if back and #self.queue.waiting > 0 and focus.may_enter(true) then
    self:show_next(back)
  else
    focus.go_back(back)
    self:show_next()
  end
end

--- Answer `p` with on_answer's arguments `...` (once; later calls do nothing).
---@param p minime.ask.Ask
function Asker:answer(p, ...)
  if p.done then
    return
  end
  p.done = true
  if self.queue.shown == p then
    self.queue.shown = nil
  end
  local back = self:teardown(p)
  if p.rung then -- "permission asked: …" goes once it is answered
    require("minime.ui.say").withdraw(p.rung)
  end
  local ok, err = pcall(p.on_answer, ...)
  if not ok then
    self:record(self.spec.words.answer_failed, err, vim.log.levels.ERROR)
  end
  self:after_close(back)
end

--- Say no to `p` (reason "timeout" when nobody answered).
---@param p minime.ask.Ask
---@param reason? string
function Asker:refuse(p, reason)
  self:answer(p, self.spec.refusal(reason))
end

--- The float takes the focus by itself (its keys wait `key_delay`); `origin`: where focus goes
--- back to (default: where the user is now).
---@param p minime.ask.Ask
---@param origin? minime.focus.Origin
function Asker:take_focus(p, origin)
  p.entered = true
  if api.nvim_get_current_win() == p.win then
    return -- the user went there already
  end
  p.origin = origin or focus.origin()
  focus.start_delay(p, function()
    if not p.done and self.queue.shown == p then
      self:retitle()
    end
  end)
  api.nvim_set_current_win(p.win)
  self:retitle()
end

---@param p minime.ask.Ask
---@param answering? minime.focus.Origin the user just answered the previous ask in its
---   float, coming from there
function Asker:show(p, answering)
  local spec = self.spec
  p.buf = window.scratch(spec.kind)
  local lines, first = self:fill(p)
  local timeout = spec.timeout and tonumber(spec.timeout(p))
  if timeout and timeout > 0 and not p.deadline then
    p.deadline = focus.now_ms() + timeout * 1000
  end
  local enter = focus.may_enter(answering ~= nil)
  p.shown_from = api.nvim_get_current_win()
  p.win = window.open_float(p.buf, false, draw.win_config(self, p, lines))
  spec.cursor(p.win, lines, first)
  if enter and pcall(self.take_focus, self, p, answering) then
    enter = true
  else
    enter, p.live_at = false, nil
  end
  if not enter then
    p.rung = focus.ring(spec.words.asked, spec.title(p), ":MiniMePermission to answer")
    focus.watch(p, function()
      if not p.done and self.queue.shown == p then
        self:take_focus(p)
      end
    end)
  end
  draw.follow_cursor(self, p, function(err)
    self:record(("a %s could not be moved"):format(spec.words.noun), err)
  end)
  statusline()
  -- Closed some other way (:q, <C-w>c): a refusal; closed by leaving its tab page: shown
  -- again in the page entered (new). Scheduled: no new float in WinClosed.
  local shown_win = p.win
  api.nvim_create_autocmd("WinClosed", {
    pattern = tostring(p.win),
    once = true,
    callback = function()
      vim.schedule(function()
        if not window.moved(shown_win) then
          self:refuse(p)
        end
      end)
    end,
  })
  if p.deadline then
    countdown.start(p, function()
      self:retitle()
    end, function()
      require("minime.ui.say").say(
        ("minime: no answer within %s s — %s: %s"):format(
          tostring(spec.timeout(p)),
          spec.words.refused,
          require("minime.ui.printable").line(spec.title(p), 121)
        ),
        vim.log.levels.WARN
      )
      self:refuse(p, "timeout")
    end)
  end
end

---@param answering? minime.focus.Origin
function Asker:show_next(answering)
  local p = self.queue:show_next()
  while p do
    local ok, err = pcall(self.show, self, p, answering)
    if not ok then
      -- An ask that cannot be shown must still be answered, or the agent waits forever.
      local words = self.spec.words
      self:record(("a %s could not be shown (%s)"):format(words.noun, words.refused), err)
      self:refuse(p)
    end
    p = self.queue:show_next()
  end
end

--- Ask the user; `on_answer(...)` is called exactly once (unless `close(req.id)`).
---@param req table
---@param on_answer fun(...)
function Asker:open(req, on_answer)
  self.queue:push({ req = req, on_answer = on_answer })
  if self.queue.shown then
    self:retitle()
    statusline()
  else
    self:show_next()
  end
end

--- Drop an ask the host already answered (e.g. the turn was cancelled): its float closes, or
--- it leaves the queue; on_answer is not called. Returns whether it was pending.
---@param id any
---@return boolean
function Asker:close(id)
  local p, was_shown = self.queue:remove(id)
  if not p then
    return false
  end
  if was_shown then
    p.done = true
    self:after_close(self:teardown(p))
  else
    self:retitle()
    statusline()
  end
  return true
end

--- The float of the shown ask, if any.
---@return integer?
function Asker:win()
  return self.queue.shown and self.queue.shown.win
end

--- Whether the shown ask's keys work (false during its key delay, or with none shown).
---@return boolean
function Asker:live()
  return self.queue.shown ~= nil and focus.live(self.queue.shown)
end

--- Enter the float of the shown ask, its keys working at once. Returns whether there was one.
---@return boolean
function Asker:focus()
  if not focus.enter(self.queue.shown) then
    return false
  end
  self:retitle()
  return true
end

--- Ids of the pending asks, the shown one first.
---@return any[]
function Asker:pending()
  return self.queue:ids()
end

--- Whether an ask of conversation `key` (its thread) waits for an answer.
---@param key string
---@return boolean
function Asker:waiting(key)
  return self.queue:has_thread(key)
end

--- An asker of the kind `spec` describes.
---@param spec minime.ask.Spec
---@return minime.ask.Asker
function M.new(spec)
  local a = setmetatable({
    spec = spec,
    queue = queue.new(),
    errors = {},
    ns = api.nvim_create_namespace("minime." .. spec.kind),
    moves = api.nvim_create_augroup("minime.ui." .. spec.kind .. ".moves", { clear = true }),
  }, Asker)
  require("minime.ui.ask.askers").add(a)
  -- The ask shown when its tab page was left shows again in the page entered, its countdown
  -- going on (floats live only in the current tab page: minime.ui.window).
  window.on_tab_enter(function(moved)
    local p = a.queue.shown
    if p and not p.done and moved[p.win] then
      stop(p.timer)
      p.timer = nil
      focus.stop_timers(p)
      a:show(p)
    end
  end)
  api.nvim_create_autocmd("VimResized", {
    group = api.nvim_create_augroup("minime.ui." .. spec.kind, { clear = true }),
    callback = function()
      a:retitle()
    end,
  })
  return a
end

return M
