--- When a permission prompt may take focus: never from someone typing. Not in insert,
--- command-line, terminal, operator-pending, visual or select mode, nor while Neovim waits for
--- a key, nor within `idle` seconds of the last key (ui/last_key.lua). A prompt that does not
--- take focus says once how to answer it (:MiniMePermission). One that does ignores keys for
--- `key_delay` seconds: keys already in flight do not answer it. permission.lua owns the float;
--- this module only decides and keeps time.
local config = require("minime.config")
local last_key = require("minime.ui.last_key")
local view = require("minime.ui.permission_view")

local api = vim.api

local M = {}

--- The `permission` option as it is now (see :h minime-config-permission).
---@return {focus: boolean, key_delay: number, idle: number}
local function options()
  return config.options.permission
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

--- Why a prompt must not take focus now, or nil when it may.
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

--- Whether a prompt shown now takes focus. `answering`: the user just answered the previous
--- prompt in its float, so the next one may take it in normal mode even within `idle`.
---@param answering? boolean
---@return boolean
function M.may_enter(answering)
  local mode = api.nvim_get_mode()
  return options().focus and (answering and not mode.blocking and mode.mode == "n" or not M.busy())
end

--- Whether a prompt's keys work (its key delay is over).
---@param p minime.permission.Prompt
---@return boolean
function M.live(p)
  return not p.live_at or M.now_ms() >= p.live_at
end

--- Keys typed in the first `key_delay` seconds after the float took focus do nothing; `on_live`
--- runs (scheduled) when they start to work.
---@param p minime.permission.Prompt
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

--- Say once that a prompt waits (shown without focus), and how to answer it.
---@param p minime.permission.Prompt
function M.ring(p)
  local title = view.str(p.req.title) ~= "" and p.req.title or "a tool call"
  title = require("minime.ui.printable").line(title, 121) -- the float shows it whole
  require("minime.ui.say").say(
    ("minime: permission asked: %s — :MiniMePermission to answer"):format(title),
    vim.log.levels.WARN
  )
end

--- Enter the float of prompt `p` (a permission prompt, or a question from the agent: they keep
--- `win` and `prev_win` alike). The user chose to go there, so its keys work at once (the delay
--- is for a float that took focus). Returns whether it has a float.
---@param p? {win?: integer, prev_win?: integer}
---@return boolean
function M.enter(p)
  local win = p and p.win
  if not (win and api.nvim_win_is_valid(win)) then
    return false
  end
  if api.nvim_get_current_win() ~= win then
    p.prev_win = api.nvim_get_current_win()
    api.nvim_set_current_win(win)
  end
  if api.nvim_get_mode().mode:sub(1, 1) == "i" then
    vim.cmd.stopinsert()
  end
  return true
end

--- Enter the float of the oldest pending prompt (the shown one): :MiniMePermission.
---@return boolean
function M.enter_shown()
  return M.enter(require("minime.ui.permission_queue").shown)
end

--- :MiniMePermission: go to the oldest pending prompt, or say there is none.
function M.jump()
  if not M.enter_shown() then
    require("minime.ui.say").say("minime: no permission prompt is waiting", vim.log.levels.INFO)
  end
end

return M
