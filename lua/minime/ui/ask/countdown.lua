--- An ask's countdown (minime.ui.ask): from the float showing until `p.deadline`, `on_second`
--- runs on each whole second left (the title says it), `on_zero` once at the deadline.
--- Stopped by stopping `p.timer`; not run after `p.done`.
local now_ms = require("minime.ui.permission_focus").now_ms

local M = {}

---@param p minime.ask.Ask
---@param on_second fun()
---@param on_zero fun()
function M.start(p, on_second, on_zero)
  p.timer = assert(vim.uv.new_timer())
  local function tick()
    if p.done then
      return
    end
    local left = p.deadline - now_ms()
    if left <= 0 then
      on_zero()
      return
    end
    on_second()
    -- Wake on the next whole second left (or at the deadline).
    local wait = math.ceil(left % 1000)
    p.timer:start(wait > 0 and wait or 1000, 0, vim.schedule_wrap(tick))
  end
  tick()
end

return M
