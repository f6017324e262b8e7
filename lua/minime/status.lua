--- Statusline piece: a spinner while a minime turn runs, that a permission prompt waits, the
--- session mode of the current thread when its agent has one (lua/minime/modes.lua), and with
--- several threads how many run and how many wait for you; '' when there is none of them.
---
--- In 'statusline':  %{%v:lua.require'minime.status'.statusline()%}
--- In lualine:       sections = { lualine_x = { require('minime.status').statusline } }
local M = {}

local uv = vim.uv

M.frames = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }
--- Milliseconds between redraws while a turn runs.
M.interval = 100

---@type uv.uv_timer_t?
local timer

local function running()
  return require("minime.ui.turn").running_count()
end

--- " · permission asked (:MiniMePermission)" while prompts wait, " · question asked …" while
--- the agent's questions do (how many, when several).
local function asking()
  local permission = package.loaded["minime.ui.permission"]
  local elicitation = package.loaded["minime.ui.elicitation"]
  local said = {}
  for _, waiting in ipairs({
    { permission and #permission.pending() or 0, "permission", "permissions" },
    { elicitation and #elicitation.pending() or 0, "question", "questions" },
  }) do
    local n = waiting[1]
    if n > 0 then
      said[#said + 1] = n > 1 and (n .. " " .. waiting[3]) or waiting[2]
    end
  end
  if #said == 0 then
    return ""
  end
  return (" · %s asked (:MiniMePermission)"):format(table.concat(said, " and "))
end

--- " · 2 running · 1 waits" when there are several threads (minime.threads), else "".
local function counts()
  local threads = package.loaded["minime.threads"]
  if not threads or threads.count() < 2 then
    return ""
  end
  local busy, waits = threads.counts()
  local out = busy > 0 and (" · %d running"):format(busy) or ""
  return out .. (waits > 0 and (" · %d waits"):format(waits) or "")
end

--- The statusline text with its `%` as they are: a spinner frame and "minime" while a turn
--- runs, then " · mode: <name>" when the current thread's session has a mode and
--- " · 53k/200k · $0.42" when its agent said its usage (with a budget, " · $1.62/$2.00":
--- spent of it, minime.budget), then the threads' counts; '' when
--- none of these.
---@return string
local function text()
  local n = running()
  local modes = package.loaded["minime.modes"]
  local threads = package.loaded["minime.threads"]
  local key = threads and threads.here() or vim.fn.getcwd()
  local mode = modes and modes.label(key)
  local usage = require("minime.budget").usage(key)
  local tail = asking() .. (mode and (" · " .. mode) or "") .. (usage and (" · " .. usage) or "")
  tail = tail .. counts()
  if n == 0 then
    return tail ~= "" and ("minime" .. tail) or ""
  end
  -- The frame follows the clock, so every window's statusline shows the same one.
  local frame = M.frames[math.floor(uv.hrtime() / (M.interval * 1e6)) % #M.frames + 1]
  return (n > 1 and ("%s minime (%d)"):format(frame, n) or frame .. " minime") .. tail
end

--- The statusline text (see text()), printable (minime.ui.printable: a currency or a mode's
--- name with an ESC in it), every `%` doubled: the text is evaluated as a statusline
--- ('statusline' with `%{%…%}` or `%!`, lualine), where an agent's `%{…}` in a mode's name or
--- id would run as Vimscript.
---@return string
function M.statusline()
  return (require("minime.ui.printable").line(text(), math.huge):gsub("%%", "%%%%"))
end

local function redraw()
  pcall(vim.cmd, "redrawstatus!")
end

--- Start or stop the redraw timer to match the running turns (turn.lua calls it).
function M.refresh()
  if running() > 0 then
    if not timer then
      timer = assert(uv.new_timer())
      timer:start(M.interval, M.interval, vim.schedule_wrap(redraw))
    end
  elseif timer then
    timer:stop()
    timer:close()
    timer = nil
  end
  -- Once the caller is done: redrawing the screen now cost the turn float's apply() 3.5 ms.
  vim.schedule(redraw)
end

--- Whether the redraw timer runs (for tests).
---@return boolean
function M.ticking()
  return timer ~= nil
end

return M
