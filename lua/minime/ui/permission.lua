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
--- cursor's line (placement.lua), and moves when the cursor comes under it. The float's life,
--- keys and redraws are minime.ui.ask's (shared with the agent's questions, elicitation.lua);
--- this module is what a prompt shows and what its keys answer.
local ask = require("minime.ui.ask")
local focus = require("minime.ui.permission_focus")
local keys = require("minime.ui.ask.keys")
local view = require("minime.ui.permission_view")

local api = vim.api

local M = {}

-- Its size and look: permission_view.win_config; when it may take focus: permission_focus.
-- Its behaviour (focus, key_delay, idle) is the `permission` option, read when needed.

---@class minime.permission.Prompt: minime.ask.Ask
---@field on_answer fun(option_id: string?, remember: boolean?, reason: string?)

local prompts

--- Keys of the float besides q/<Esc>: the options' numbers, <CR>, `a`.
---@param p minime.permission.Prompt
---@param first integer row before the first option
local function map_keys(p, first)
  local options = view.options(p.req)
  local allow = view.remember_option(p.req)
  keys.picks(p, {
    first = first,
    items = options,
    noun = "option",
    label = function(o)
      return o.name
    end,
    pick = function(o)
      prompts:answer(p, o.option_id)
    end,
    beyond = function(row)
      if allow and row == first + #options + 1 then
        prompts:answer(p, allow, true)
      end
    end,
  })
  if allow then
    keys.map(p, "a", function()
      prompts:answer(p, allow, true)
    end, "allow this exact request again without asking, until :MiniMeReset")
  else
    keys.unmap(p, "a") -- no longer offered (call_update)
  end
end

prompts = ask.new({
  kind = "permission",
  placed = true,
  words = {
    noun = "permission prompt",
    waiting = "waiting for permission",
    asked = "permission asked",
    refuse = "reject",
    refused = "rejected",
    answer_failed = "permission answer failed",
  },
  render = function(p)
    local lines, marks, first, has_diff = view.render(p.req)
    return lines, marks, first, has_diff and "diff" or nil
  end,
  win_config = function(p, lines, state)
    return view.win_config(p.req, lines, state)
  end,
  keys = map_keys,
  refusal = function(reason)
    return nil, nil, reason
  end,
  title = function(p)
    return view.title_line(p.req)
  end,
  timeout = function(p)
    return p.req.timeout
  end,
  -- The cursor on the line above the options (<CR> there does nothing: a habit's <CR> answers
  -- nothing), after the last line: a long diff is scrolled to its end, the options shown.
  cursor = function(win, lines, first)
    pcall(api.nvim_win_set_cursor, win, { #lines, 0 })
    pcall(api.nvim_win_set_cursor, win, { math.max(1, first), 0 })
  end,
})

-- open(req, on_answer), close(id), pending(), waiting(key), win(), live(), focus(), errors:
-- every asking float's (minime.ui.ask.askers.surface). on_answer(option_id|nil, remember,
-- reason) is called exactly once, unless close(req.id) (the host answered).
require("minime.ui.ask.askers").surface(prompts, M)

--- Why the float must not take focus now, or nil when it may (see permission_focus.lua).
M.busy = focus.busy

local function empty(value)
  return value == nil or value == vim.NIL or (type(value) == "table" and next(value) == nil)
end

--- What the agent said of call `call_id` after asking about it: a prompt (shown or waiting)
--- that asked with no input gets `input`. claude-agent-acp asks to approve a plan with an empty
--- toolCall and may send the plan (the call's rawInput) just after the request.
---@param key string the conversation (its thread; a request naming none: its cwd)
---@param call_id string
---@param input any
function M.call_update(key, call_id, input)
  if empty(input) or type(input) ~= "table" then
    return
  end
  local function fill_input(p)
    local req = p.req
    local of = (req.thread ~= nil and req.thread ~= vim.NIL) and req.thread or req.cwd
    if p.done or view.str(of) ~= key or view.str(req.call_id) ~= call_id then
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
  for _, p in ipairs(prompts.queue.waiting) do
    fill_input(p)
  end
  local shown = prompts.queue.shown
  if shown and fill_input(shown) and shown.buf and api.nvim_buf_is_valid(shown.buf) then
    local ok, err = pcall(prompts.redraw, prompts, shown)
    if not ok then
      prompts:record("a permission prompt could not be redrawn", err)
    end
  end
end

--- :MiniMePermission: go to the oldest pending prompt, or say there is none.
function M.jump()
  if not M.focus() then
    require("minime.ui.say").say("minime: no permission prompt is waiting", vim.log.levels.INFO)
  end
end

return M
