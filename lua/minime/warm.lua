--- The first ask without its start-up: the host (which imports the ACP SDK, ~0.4 s), the
--- thread's agent and session, and the review's first git snapshot are started while the user
--- is still typing that ask — when the command line starts `:MiniMe`, the input float opens,
--- <Plug>(minime-ask) or the toggle is used. Nothing starts in an idle editor, nothing is sent
--- to the agent but `initialize` and `session/new` (an abandoned ask sends no prompt; the
--- warmed agent stays, as after any ask, until :MiniMeStop or the editor quits), and a warm-up
--- that fails says nothing: the ask that follows starts again and says what went wrong.
--- `warm = false` turns it off.
---
---   require("minime.warm").thread(id)  -- the host and the thread's session (once per host)
---   require("minime.warm").cwd(cwd)    -- the same for the current thread of `cwd`
---   require("minime.warm").host()      -- the host only
local M = {}

-- threads warmed on the host's channel of that time: { [chan] = { [id] = true } }.
local warmed = {}

local function enabled()
  local config = require("minime.config")
  return config.options.warm ~= false and config.options.host ~= "rplugin"
end

--- Start the host, if it is not running. Never throws, never says anything.
---@return integer? chan
function M.host()
  if not enabled() then
    return nil
  end
  local host = require("minime.host")
  local ok, chan = pcall(host.start)
  return ok and chan or nil
end

--- Start the host and the session of thread `id` for the ask to come (:MiniMeNew: at once).
---@param id string
function M.thread(id)
  local chan = M.host()
  if not chan then
    return
  end
  warmed = warmed[chan] and warmed or { [chan] = {} }
  if warmed[chan][id] then
    return
  end
  warmed[chan][id] = true
  pcall(function()
    local payload = require("minime.actions").host_payload(id)
    require("minime.host").notify("warm", payload)
  end)
  -- The review's git snapshot, once, off the main loop: its first (which copies the index and
  -- reads what changed) is then not the one the ask waits for (minime.review.git).
  pcall(require("minime.review.git").prepare, require("minime.threads").cwd_of(id))
end

--- Start the host and the session of the current thread of `cwd` (default: the one commands
--- act on here), made if it has none.
---@param cwd? string
function M.cwd(cwd)
  if enabled() then
    M.thread(require("minime.actions").thread_of(cwd))
  end
end

--- The sessions warmed are gone (:MiniMeStop) or replaced (:MiniMeReset of thread `id`):
--- warm them again.
---@param id? string
function M.forget(id)
  if id == nil then
    warmed = {}
    return
  end
  for _, ids in pairs(warmed) do
    ids[id] = nil
  end
end

-- A command line that names a command of ours: a range first is allowed (:'<,'>MiniMeAsk).
local OURS = "^[%s%d,;.'<>$%%+%-]*MiniMe"
local ASK = "^[%s%d,;.'<>$%%+%-]*MiniMeA"

--- CmdlineChanged: `:MiniMe` starts the host; `:MiniMeA…` (MiniMeAsk) the cwd's session too.
function M.on_cmdline()
  if vim.fn.getcmdtype() ~= ":" then
    return
  end
  require("minime.ui.last_key") -- the keys of this command are timed, even with `warm = false`
  local line = vim.fn.getcmdline()
  if line:find(ASK) then
    M.cwd()
  elseif line:find(OURS) then
    M.host()
  end
end

return M
