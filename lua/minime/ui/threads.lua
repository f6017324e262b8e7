--- :MiniMeThreads: every thread (all cwds) in a buffer of its own (`b:minime == "threads"`),
--- one line each: whether it is its cwd's current one, its state, its agent, its title, where
--- it works (a worktree: its branch and what it holds) and when it last changed. Redrawn in
--- place when a thread's state changes (minime.threads calls refresh: a change of state, not
--- every chunk), never taking the focus. The threads of earlier Neovims are read (off the
--- main loop) when it first opens, and listed "saved" (minime.saved_threads).
---   <CR>  make that thread its cwd's current one and show its conversation (a saved one:
---         reopened)
---   x     close it (session/close where the agent offers it; mid-turn the turn is cancelled;
---         a worktree holding changes or commits not merged: keep or remove it?)
---   d     delete its session for good (session/delete), after a confirmation
---   r     rename it (the title shown here and in messages)
local printable = require("minime.ui.printable")

local api = vim.api

local M = {}

---@type integer?
local buf
---@type string[] the thread id of each line
local ids = {}
-- thread id -> its worktree's status (minime.worktree.status), and the activity it was read at.
local worktrees, read_at = {}, {}

--- "now", "42 s ago", "5 min ago", "3 h ago", else the date.
---@param when? number seconds since the epoch
---@return string
function M.ago(when)
  if type(when) ~= "number" or when <= 0 then
    return ""
  end
  local s = os.time() - when
  if s < 5 then
    return "now"
  elseif s < 60 then
    return ("%d s ago"):format(s)
  elseif s < 3600 then
    return ("%d min ago"):format(math.floor(s / 60))
  elseif s < 86400 then
    return ("%d h ago"):format(math.floor(s / 3600))
  end
  return os.date("%Y-%m-%d", when) --[[@as string]]
end

--- One thread's line (every agent string made printable).
---@param t minime.Thread
---@param current boolean
---@return string
function M.line(t, current)
  local line = printable.line
  local state = line(tostring(t.state), 12)
  if t.state == "waiting" and t.waiting then
    state = "waits: " .. line(tostring(t.waiting), 12)
  end
  local agent = t.label ~= "" and t.label or (t.agent ~= "" and t.agent or "agent")
  local title = t.title ~= "" and line(t.title, 60) or "(no ask yet)"
  local where = line(vim.fn.fnamemodify(t.cwd, ":~"), 200)
  if vim.fn.strchars(where) > 40 then -- its end names it: the start goes
    where = "…" .. vim.fn.strcharpart(where, vim.fn.strchars(where) - 39)
  end
  if t.worktree then
    local status = worktrees[t.id]
    local holds = status and require("minime.worktree.thread").describe(status)
    where = ("%s [%s]"):format(
      line(t.worktree.branch, 60),
      not status and "…" or (holds == "" and "no changes" or holds)
    )
  end
  return ("%s %-18s %-12s %s — %s · %s"):format(
    current and "●" or " ",
    state,
    line(agent, 12),
    title,
    where,
    M.ago(t.last_activity)
  )
end

--- Read the status of thread `t`'s worktree again when something happened in it since (not
--- while a turn runs in it); the list is redrawn with it.
---@param t minime.Thread
local function check_worktree(t)
  if not t.worktree or t.state == "running" or read_at[t.id] == t.last_activity then
    return
  end
  read_at[t.id] = t.last_activity
  require("minime.worktree").status(t.worktree, function(status)
    worktrees[t.id] = status
    M.refresh()
  end)
end

--- Draw the list again, if its buffer is open (minime.threads calls it at each change).
function M.refresh()
  if not (buf and api.nvim_buf_is_valid(buf)) then
    return
  end
  local threads = require("minime.threads")
  local lines = {}
  ids = {}
  for _, t in ipairs(threads.all()) do
    lines[#lines + 1] = M.line(t, threads.current(t.cwd) == t.id)
    ids[#ids + 1] = t.id
    check_worktree(t)
  end
  if #lines == 0 then
    lines = { "no threads yet: :MiniMeAsk starts one, :MiniMeNew [agent] another" }
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

--- The thread of the line under the cursor (nil: none).
---@return string?
local function under_cursor()
  return ids[api.nvim_win_get_cursor(0)[1]]
end

local function host_op(op, payload)
  local ok, err = pcall(require("minime.host").notify, op, payload)
  if not ok then
    require("minime.ui.say").say("minime: " .. tostring(err), vim.log.levels.ERROR)
  end
end

--- `<CR>`: the thread under the cursor is its cwd's current one; its conversation shows.
function M.choose()
  local id = under_cursor()
  local threads = require("minime.threads")
  local t = id and threads.get(id)
  if not t then
    return
  end
  if t.saved then
    return require("minime.saved_threads").reopen(id)
  end
  threads.make_current(id)
  local turn = require("minime.ui.turn")
  turn.make(id, t.cwd, t.label ~= "" and t.label or nil)
  turn.open(id)
end

--- Close thread `t` (`action`): the host ends its session; a saved one is dropped here (its
--- session deleted first, for `d`). Its worktree goes when `remove`.
---@param t minime.Thread
---@param action "close"|"delete"
---@param remove boolean
local function close_thread(t, action, remove)
  t.remove_worktree = remove
  if not t.saved then
    return host_op("close_thread", { thread = t.id, cwd = t.cwd, action = action })
  end
  if action == "delete" and t.last_session_id then
    local ok, payload = pcall(require("minime.actions").host_payload, t.id)
    if ok then
      payload.session_id, payload.action, payload.title = t.last_session_id, "delete", t.title
      host_op("manage_session", payload)
    end
  end
  require("minime.threads").drop(t.id)
  require("minime.ui.say").say(
    ("minime: thread %s closed"):format(require("minime.threads").name(t)),
    vim.log.levels.INFO
  )
  require("minime.worktree.thread").closed(t)
end

--- `x` (close) or `d` (delete, confirmed) on the thread under the cursor; a worktree that
--- holds something is kept or removed as the user says first (minime.worktree.thread.ask).
---@param action "close"|"delete"
function M.close(action)
  local id = under_cursor()
  local t = id and require("minime.threads").get(id)
  if not t then
    return
  end
  local function go()
    require("minime.worktree.thread").ask(t, function(remove)
      close_thread(t, action, remove)
    end)
  end
  if action == "close" then
    return go()
  end
  local name = require("minime.threads").name(t)
  require("minime.ui.pick").select({ "Delete " .. name .. " for good", "Keep it" }, {
    prompt = "Delete this thread's session (session/delete)?",
    kind = "minime.confirm",
  }, function(_, i)
    if i == 1 then
      go()
    end
  end)
end

--- `r`: a new title for the thread under the cursor ("" gives back the agent's).
function M.rename()
  local id = under_cursor()
  local t = id and require("minime.threads").get(id)
  if not t then
    return
  end
  require("minime.ui.pick").input({ prompt = "Rename thread: ", default = t.title }, function(title)
    if title and t.saved then -- the host does not know it: its record is renamed
      t.title = require("minime.ui.printable").line(title, 80)
      local store = require("minime.thread_store")
      store.save(store.record_of(t) --[[@as minime.ThreadRecord]])
      M.refresh()
    elseif title then
      host_op("rename_thread", { thread = id, cwd = t.cwd, title = title })
    end
  end)
end

--- :MiniMeThreads: the list in a split at the bottom (entered; refreshed if already open).
function M.open()
  if not (buf and api.nvim_buf_is_valid(buf)) then
    buf = require("minime.ui.window").scratch("threads", "hide")
    pcall(api.nvim_buf_set_name, buf, "minime://threads")
    vim.bo[buf].modifiable = false
    local function map(lhs, fn, desc)
      vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = "minime: " .. desc })
    end
    map("<CR>", M.choose, "make this thread current and show its conversation")
    map("x", function()
      M.close("close")
    end, "close this thread")
    map("d", function()
      M.close("delete")
    end, "delete this thread's session")
    map("r", M.rename, "rename this thread")
    map("q", "<Cmd>close<CR>", "close the list")
  end
  require("minime.saved_threads").load()
  M.refresh()
  require("minime.ui.bottom").show_at_bottom(buf, "the threads", ":MiniMeThreads")
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    pcall(api.nvim_win_set_height, win, math.min(math.max(#ids, 1) + 1, 15))
  end
end

--- The list's buffer, if open (tests).
---@return integer?
function M.buf()
  return buf and api.nvim_buf_is_valid(buf) and buf or nil
end

return M
