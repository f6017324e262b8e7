--- The asks waiting for the running turn (the host's queue: rplugin/python3/minime/nvim/
--- ask_queue.py), shown as virtual lines under the conversation's end, oldest first:
---   ⧗ queued 1: explain the tests
--- Virtual, not text: they are not part of any turn, move with the end as the answer grows,
--- and go when the host says the queue changed (an ask sent, :MiniMeCancel). The cursor on the
--- last line never brings them into view: following the end scrolls them in (float.follow). A
--- closed fold at the end (a running tool's) hides them, so the footer counts them too.
local printable = require("minime.ui.printable")

local api = vim.api

local M = {}

local ns = api.nvim_create_namespace("minime_queued")

--- A `queued` event: the prompts waiting now.
---@param t table the conversation (minime.ui.turn)
---@param ev {prompts?: string[]}
function M.set(t, ev)
  t.queued = type(ev.prompts) == "table" and ev.prompts or {}
end

--- Draw the waiting asks under the last line of `t`'s buffer (none: nothing).
---@param t table
function M.draw(t)
  if not api.nvim_buf_is_valid(t.buf) then
    return
  end
  api.nvim_buf_clear_namespace(t.buf, ns, 0, -1)
  local prompts = t.queued or {}
  if #prompts == 0 then
    return
  end
  local lines = {}
  for i, prompt in ipairs(prompts) do
    local text = ("⧗ queued %d: %s"):format(i, printable.line(prompt, 200))
    lines[i] = { { text, "MiniMeQueued" } }
  end
  local last = api.nvim_buf_line_count(t.buf) - 1
  api.nvim_buf_set_extmark(t.buf, ns, last, 0, { virt_lines = lines })
end

--- The prompts waiting in `t` (for tests and the statusline).
---@param t table
---@return string[]
function M.get(t)
  return t.queued or {}
end

return M
