--- The UI's view of the threads (:h minime-threads): each thread is one ACP session of one
--- agent, with its own conversation (the buffer of the same id, minime.ui.turn). This module
--- keeps the list (its cwd, agent, title, state, last activity, whether something waits) as
--- the host says it is (rpc.thread_update), and the CURRENT thread of each cwd, which Lua must
--- know at once: `:MiniMeNew` then `:MiniMeAsk` goes to the new thread, so the ids are minted
--- here (opaque, unique across restarts, never a path) and every operation names its thread.
local M = {}

---@class minime.Thread
---@field id string
---@field cwd string the real path it works in
---@field definition? string the agent definition it runs (nil: the configured `agent`)
---@field agent string the definition's name, as the host last said it ("" until known)
---@field label string how messages name its agent
---@field title string the user's name for it, else the agent's title, else its first ask
---@field state string running|waiting|done|cancelled|error|idle
---@field waiting? string permission|question, while state is "waiting"
---@field last_activity number seconds since the epoch
---@field session_id? string
---@field last_session_id? string its session, kept while it has none (the agent stopped): reopened
---@field worktree? minime.Worktree its own git worktree (cwd is its directory)
---@field saved? boolean kept from an earlier Neovim (thread_store), not reopened yet

---@type table<string, minime.Thread>
local by_id = {}
---@type string[] ids, oldest first
local order = {}
---@type table<string, string> cwd (real path) -> the id of its current thread
local current = {}

--- The real path of `cwd`, the key of its current thread (the host's word for it).
---@param cwd string
---@return string
local function real(cwd)
  return vim.uv.fs_realpath(cwd) or cwd
end

M.real = real

local function base36(n)
  local digits, out = "0123456789abcdefghijklmnopqrstuvwxyz", ""
  repeat
    local d = n % 36
    out = digits:sub(d + 1, d + 1) .. out
    n = math.floor(n / 36)
  until n == 0
  return out
end

--- A new thread id: "t" + the time + random bytes (`t` first, no `/`: never a path).
---@return string
function M.new_id()
  local ok, bytes = pcall(vim.uv.random, 4)
  local noise = ok and type(bytes) == "string" and bytes or tostring(vim.uv.hrtime()):sub(-4)
  local hex = noise:gsub(".", function(c)
    return ("%02x"):format(c:byte())
  end)
  return ("t%s-%s"):format(base36(os.time()), hex)
end

--- Thread `id`, or nil.
---@param id string
---@return minime.Thread?
function M.get(id)
  return by_id[id]
end

--- Every thread, oldest first.
---@return minime.Thread[]
function M.all()
  local out = {}
  for _, id in ipairs(order) do
    out[#out + 1] = by_id[id]
  end
  return out
end

--- The id of the current thread of `cwd` (default: the current window's), or nil.
---@param cwd? string
---@return string?
function M.current(cwd)
  return current[real(cwd or vim.fn.getcwd())]
end

--- The thread a command acts on: the one whose conversation the current buffer is, else the
--- current thread of the window's cwd (nil: none yet).
---@return string?
function M.here()
  local id = vim.b.minime_thread
  if type(id) == "string" and by_id[id] then
    return id
  end
  return M.current()
end

--- Keep thread `t` for the next Neovim (when there is something to reopen).
---@param t minime.Thread
function M.save(t)
  local store = require("minime.thread_store")
  local record = not t.saved and store.record_of(t)
  if record then
    store.save(record)
  end
end

--- A new thread in `cwd` running agent definition `definition` (nil: the configured one),
--- made the cwd's current thread. The host learns of it with its first operation.
--- `opts.id`: its id (minted beforehand); `opts.worktree`: the worktree it works in (`cwd`).
---@param cwd string
---@param definition? string
---@param opts? {id?: string, worktree?: minime.Worktree}
---@return string id
function M.new(cwd, definition, opts)
  opts = opts or {}
  local id = opts.id or M.new_id()
  local where = real(cwd)
  by_id[id] = {
    id = id,
    cwd = where,
    definition = definition,
    agent = definition or "",
    label = definition or "",
    title = "",
    state = "idle",
    last_activity = os.time(),
    worktree = opts.worktree,
  }
  order[#order + 1] = id
  current[where] = id
  M.save(by_id[id])
  M.changed()
  return id
end

--- The current thread of `cwd` (default: the current window's); one is made (with the
--- configured agent) when it has none.
---@param cwd? string
---@return string id
function M.ensure(cwd)
  cwd = cwd or vim.fn.getcwd()
  return M.current(cwd) or M.new(cwd)
end

--- Make thread `id` its cwd's current thread.
---@param id string
function M.make_current(id)
  local t = by_id[id]
  if t then
    current[t.cwd] = id
    M.changed()
  end
end

--- The thread a key names: a thread id as it is, else a cwd's current thread (nil: none).
---@param key string
---@return string?
function M.key(key)
  if by_id[key] then
    return key
  end
  return type(key) == "string" and current[real(key)] or nil
end

--- `tbl[key]`, where `tbl` is keyed by thread and `key` names one: a thread id as it is (any
--- key a table holds), else a cwd — its current thread's entry (nil: none). The one rule by
--- which a cwd stands for its current thread, wherever a key is taken.
---@generic V
---@param tbl table<string, V>
---@param key any
---@return V?
function M.pick(tbl, key)
  local found = tbl[key]
  if found ~= nil or type(key) ~= "string" then
    return found
  end
  local id = current[real(key)]
  return id and tbl[id] or nil
end

--- The cwd thread `key` works in (nil: not a thread).
---@param key string
---@return string?
function M.cwd_of(key)
  local t = by_id[key]
  return t and t.cwd or nil
end

--- "claude · refactor parser": how messages and the overview name a thread (printable).
---@param t minime.Thread
---@return string
function M.name(t)
  local line = require("minime.ui.printable").line
  local agent = t.label ~= "" and t.label or (t.agent ~= "" and t.agent or "agent")
  local name = line(agent, 40)
  if t.title ~= "" then
    name = name .. " · " .. line(t.title, 60)
  end
  return name
end

--- Saved threads (minime.saved_threads) into the list, before this Neovim's own; those
--- already listed are left as they are.
---@param saved minime.Thread[]
function M.add_saved(saved)
  local at = 1
  for _, t in ipairs(saved) do
    if not by_id[t.id] then
      by_id[t.id] = t
      table.insert(order, at, t.id)
      at = at + 1
    end
  end
  M.changed()
end

--- Thread `id`, saved by an earlier Neovim, is one of this Neovim's again (idle, made its
--- cwd's current thread); its session is reopened by the caller.
---@param id string
function M.revive(id)
  local t = by_id[id]
  if t and t.saved then
    t.saved, t.state = nil, "idle"
    current[t.cwd] = id
    M.changed()
  end
end

--- Thread `id` is gone for good (closed or deleted): out of the list and of the saved ones.
---@param id string
function M.drop(id)
  M.forget_here(id)
  require("minime.thread_store").remove(id)
  M.changed()
end

--- How many threads run a turn, and how many wait for the user.
---@return integer running, integer waits
function M.counts()
  local running, waits = 0, 0
  for _, t in pairs(by_id) do
    if t.state == "running" then
      running = running + 1
    elseif t.state == "waiting" then
      waits = waits + 1
    end
  end
  return running, waits
end

--- How many threads there are (those saved by an earlier Neovim and not reopened aside).
---@return integer
function M.count()
  local n = 0
  for _, t in pairs(by_id) do
    n = n + (t.saved and 0 or 1)
  end
  return n
end

--- Thread `id` out of this Neovim's list (its conversation with it); the saved record stays.
---@param id string
function M.forget_here(id)
  local t = by_id[id]
  by_id[id] = nil
  for i, known in ipairs(order) do
    if known == id then
      table.remove(order, i)
      break
    end
  end
  if t and current[t.cwd] == id then
    current[t.cwd] = nil
    for i = #order, 1, -1 do -- the newest other thread of the cwd is its current one
      local other = by_id[order[i]]
      if other.cwd == t.cwd and not other.saved then
        current[t.cwd] = order[i]
        break
      end
    end
  end
  local turn = package.loaded["minime.ui.turn"]
  if turn then
    turn.forget(id) -- its conversation goes with it
  end
end

--- Whether thread `id`'s conversation shows in a window of the current tab page.
---@param id string
---@return boolean
local function on_screen(id)
  local turn = package.loaded["minime.ui.turn"]
  return turn ~= nil and turn.on_screen(id)
end

--- The name of thread `id` (see name) when its conversation is not on screen, else nil: a
--- float asking for it says whose it is.
---@param id any
---@return string?
function M.named_off_screen(id)
  local t = type(id) == "string" and by_id[id] or nil
  if t and not on_screen(id) then
    return M.name(t)
  end
  return nil
end

local WAITS = { permission = "waiting for permission", question = "waiting for your answer" }

--- Called by the host (rpc.thread_update): a thread's state (events.ThreadState).
---@param state table
function M.update(state)
  if type(state) ~= "table" or type(state.id) ~= "string" then
    return
  end
  local id = state.id
  if state.closed == true then
    local gone = by_id[id]
    M.drop(id)
    if gone and gone.worktree then
      require("minime.worktree.thread").closed(gone)
    end
    local baseline = package.loaded["minime.review.baseline"]
    if baseline then
      baseline.reset(id) -- and its checkpoints
    end
    return
  end
  local t = by_id[id]
  if not t then
    t = { id = id, cwd = state.cwd, title = "", agent = "", label = "", state = "idle" }
    by_id[id] = t
    order[#order + 1] = id
    current[t.cwd] = current[t.cwd] or id
  end
  local was = t.state
  for _, field in ipairs({ "agent", "label", "title", "state", "last_activity" }) do
    if state[field] ~= nil and state[field] ~= vim.NIL then
      t[field] = state[field]
    end
  end
  t.waiting = state.waiting ~= vim.NIL and state.waiting or nil
  t.session_id = state.session_id ~= vim.NIL and state.session_id or nil
  t.last_session_id = t.session_id or t.last_session_id
  M.save(t)
  if t.state == "waiting" and was ~= "waiting" and not on_screen(id) then
    -- Its float opens anyway (never taking the focus); this line says whose it is.
    local why = ("%s: %s"):format(M.name(t), WAITS[t.waiting] or "waiting for you")
    require("minime.ui.say").say(("minime: %s (:MiniMeThreads)"):format(why), vim.log.levels.INFO)
    require("minime.ui.os_notify").send(why)
  end
  M.changed()
end

--- The list changed: the overview redrawn in place, the statusline too.
function M.changed()
  local overview = package.loaded["minime.ui.threads"]
  if overview then
    pcall(overview.refresh)
  end
  pcall(vim.cmd, "redrawstatus!")
end

return M
