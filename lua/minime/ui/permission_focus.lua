--- When a float that asks the user something (a permission prompt; any float shaped like one:
--- `win`, `live_at`, `delay_timer`, `watch_timer`, `origin`) may take the focus, and how focus
--- goes back. The decision lives here alone, so every asking float follows the same rule.
---
--- `permission.focus` (:h minime-permission-focus):
---   "agent" (default; `true` means it too): only from the user looking at the agent — in the
---     conversation float, its input, a permission float or a question's — and not typing
---     there (below).
---     From a code window, never: the float shows, the statusline and one message say so, and
---     keys typed there do what they always do. It is reached with :MiniMePermission.
---   "idle": from any window when nobody is typing (the behaviour before "agent").
---   false: never.
--- Not typing: not in insert, command-line, terminal, operator-pending, visual or select mode,
--- Neovim not waiting for a key, no key for `idle` seconds (ui/last_key.lua). A float that took
--- the focus by itself ignores keys for `key_delay` seconds (keys already on their way); one
--- the user went to on purpose acts on keys at once.
local config = require("minime.config")
local last_key = require("minime.ui.last_key")

local api = vim.api

local M = {}

--- The `permission` option as it is now (see :h minime-config-permission).
---@return {focus: boolean|string, key_delay: number, idle: number}
local function options()
  return config.options.permission
end

--- The focus policy: "agent", "idle" or false (anything else than those, true and nil: false).
---@return "agent"|"idle"|false
function M.policy()
  local focus = options().focus
  if focus == true or focus == nil or focus == "agent" then
    return "agent"
  end
  return focus == "idle" and "idle" or false
end

--- Milliseconds (hrtime), the clock of prompts' deadlines and key delays.
---@return number
function M.now_ms()
  return vim.uv.hrtime() / 1e6
end

--- Modes in which keys go somewhere other than normal-mode commands (first letters of
--- nvim_get_mode().mode), and operator-pending ("no…").
local busy_modes = {
  i = true,
  R = true,
  c = true,
  t = true,
  v = true,
  V = true,
  s = true,
  S = true,
  ["\22"] = true,
  ["\19"] = true,
  r = true,
}

--- Why a float must not take focus now because the user is typing, or nil.
---@return string?
function M.busy()
  local mode = api.nvim_get_mode()
  if mode.blocking then
    return "waiting for a key"
  end
  if busy_modes[mode.mode:sub(1, 1)] or mode.mode:sub(1, 2) == "no" then
    return "mode " .. mode.mode
  end
  if M.now_ms() - last_key.ms() < (tonumber(options().idle) or 0) * 1000 then
    return "typing"
  end
  return nil
end

--- Windows where the user looks at the agent: the conversation float, its input, a float that
--- asks (a permission prompt, the agent's question: the user there is answering the agent, so
--- one kind's float takes the focus from the other's, as from the conversation).
local AGENT_WINDOWS = { turn = true, input = true, permission = true, elicitation = true }

--- Whether the current window is one where the user looks at the agent.
---@return boolean
function M.at_agent()
  return AGENT_WINDOWS[vim.b[api.nvim_get_current_buf()].minime] == true
end

--- Whether a float shown now takes the focus by itself. `answering`: the user just answered the
--- previous prompt in its float (looking at the prompts), so the next one may take it in
--- normal mode even within `idle`, under either policy.
---@param answering? boolean
---@return boolean
function M.may_enter(answering)
  local policy = M.policy()
  if not policy then
    return false
  end
  if answering then
    local mode = api.nvim_get_mode()
    return not mode.blocking and mode.mode == "n"
  end
  if policy == "agent" and not M.at_agent() then
    return false
  end
  return M.busy() == nil
end

--- Whether a float's keys work (its key delay is over).
---@param p {live_at?: number}
---@return boolean
function M.live(p)
  return not p.live_at or M.now_ms() >= p.live_at
end

local function stop(p, field)
  local timer = p[field]
  if timer then
    p[field] = nil
    timer:stop()
    timer:close()
  end
end

--- Keys typed in the first `key_delay` seconds after the float took focus do nothing; `on_live`
--- runs (scheduled) when they start to work.
---@param p table
---@param on_live fun()
function M.start_delay(p, on_live)
  local delay = (tonumber(options().key_delay) or 0) * 1000
  if delay <= 0 then
    return
  end
  p.live_at = M.now_ms() + delay
  p.delay_timer = assert(vim.uv.new_timer())
  p.delay_timer:start(
    math.ceil(delay),
    0,
    vim.schedule_wrap(function()
      p.live_at = nil -- a timer may fire a little before hrtime reaches live_at
      on_live()
    end)
  )
end

--- Under "agent", a float shown without focus takes it when the user comes to look at the
--- agent and stops typing there: `take()` runs then (scheduled), once. Checked every 200 ms
--- until the float first has focus (`p.entered`) or is gone.
---@param p table
---@param take fun()
function M.watch(p, take)
  if M.policy() ~= "agent" then
    return
  end
  p.watch_timer = assert(vim.uv.new_timer())
  p.watch_timer:start(
    200,
    200,
    vim.schedule_wrap(function()
      if p.done or p.entered or not (p.win and api.nvim_win_is_valid(p.win)) then
        stop(p, "watch_timer")
      elseif M.may_enter(false) then
        stop(p, "watch_timer")
        take()
      end
    end)
  )
end

--- Stop a float's timers (key delay, watch).
---@param p table
function M.stop_timers(p)
  stop(p, "delay_timer")
  stop(p, "watch_timer")
end

---@class minime.focus.Origin where the user was when a float took the focus
---@field win integer
---@field insert? "i"|"R" the mode to resume: insert or replace
---@field cursor integer[] (1, 0)-indexed, as in that mode

--- Where the user is now (the window, and insert or replace mode with its cursor).
---@return minime.focus.Origin
function M.origin()
  local mode = api.nvim_get_mode().mode
  local insert = mode:sub(1, 1) == "i" and "i" or (mode == "R" and "R") or nil
  return { win = api.nvim_get_current_win(), insert = insert, cursor = api.nvim_win_get_cursor(0) }
end

--- Focus goes back to `origin`: its window, and the insert (replace) mode the user was in, at
--- the same place, so the next letters typed go on into the text.
---@param origin minime.focus.Origin?
function M.go_back(origin)
  if not (origin and api.nvim_win_is_valid(origin.win)) then
    return
  end
  pcall(api.nvim_set_current_win, origin.win)
  if not origin.insert or api.nvim_get_current_win() ~= origin.win then
    return
  end
  local row, col = origin.cursor[1], origin.cursor[2]
  local line = api.nvim_buf_get_lines(api.nvim_win_get_buf(origin.win), row - 1, row, false)[1]
  if not line then
    return
  end
  pcall(api.nvim_win_set_cursor, origin.win, { row, math.min(col, #line) })
  if origin.insert == "R" then
    vim.cmd.startreplace({ bang = col >= #line })
  else
    vim.cmd.startinsert({ bang = col >= #line }) -- after the line's end: append there
  end
end

--- The user goes to float `p` on purpose (:MiniMePermission): its keys act at once. Returns
--- false when it has no window.
---@param p table?
---@return boolean
function M.enter(p)
  local win = p and p.win
  if not (win and api.nvim_win_is_valid(win)) then
    return false
  end
  if api.nvim_get_current_win() ~= win then
    p.origin = M.origin()
    api.nvim_set_current_win(win)
  end
  p.entered = true
  stop(p, "delay_timer")
  p.live_at = nil
  local mode = api.nvim_get_mode().mode
  if mode:sub(1, 1) == "i" or mode == "R" then
    vim.cmd.stopinsert()
  end
  return true
end

--- Say once that a float waits without focus, and how to reach it: one line that fits the
--- screen (`what` is cut to fit; the float shows it whole).
---@param asked string e.g. "permission asked"
---@param what string e.g. the request's title
---@param how string e.g. ":MiniMePermission to answer"
---@return string said the message as shown (ui/say.lua's withdraw clears it once answered)
function M.ring(asked, what, how)
  what = require("minime.ui.printable").line(what, 121) -- the agent's words: printable
  local head, tail = "minime: " .. asked .. ": ", " — " .. how
  local room = math.max(10, vim.o.columns - 1 - api.nvim_strwidth(head .. tail))
  if api.nvim_strwidth(what) > room then
    what = vim.fn.strcharpart(what, 0, room - 1) .. "…"
    while api.nvim_strwidth(what) > room do
      what = vim.fn.strcharpart(what, 0, vim.fn.strchars(what) - 2) .. "…"
    end
  end
  return require("minime.ui.say").say(head .. what .. tail, vim.log.levels.WARN)
end

return M
