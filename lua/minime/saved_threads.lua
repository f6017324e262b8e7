--- The threads of earlier Neovims (minime.thread_store) in :MiniMeThreads, "saved" until
--- `<CR>` reopens one: its session loaded (`session/load`, its history replayed) or resumed
--- where its agent can, else said; a worktree thread in its worktree's tab page.
---
--- What the plugin can prove is its own is cleaned as the list is read: the worktree of a
--- thread that never had a session, whose Neovim is gone, and which holds nothing (no change,
--- no commit not merged) is removed with its record (a crash right after :MiniMeNew worktree).
local M = {}

local uv = vim.uv

--- Whether process `pid` (another Neovim) still runs.
local function alive(pid)
  return type(pid) == "number" and pid > 0 and uv.kill(pid, 0) == 0
end

--- The thread a record stands for, saved.
---@param r minime.ThreadRecord
---@return minime.Thread
local function as_thread(r)
  return {
    id = r.id,
    cwd = r.cwd,
    definition = r.agent ~= "" and r.agent ~= "inline" and r.agent or nil,
    agent = r.agent,
    label = r.label,
    title = r.title,
    state = "saved",
    saved = true,
    last_session_id = r.session_id,
    worktree = r.worktree,
    last_activity = r.updated,
  }
end

--- Read the saved threads into the list (off the main loop): done() once they are there.
---@param done? fun()
function M.load(done)
  local threads = require("minime.threads")
  require("minime.thread_store").load(function(records)
    local saved = {}
    for _, r in ipairs(records) do
      if not threads.get(r.id) then
        saved[#saved + 1] = as_thread(r)
        if r.worktree and not r.session_id and r.pid ~= uv.os_getpid() and not alive(r.pid) then
          M.clean(saved[#saved])
        end
      end
    end
    threads.add_saved(saved)
    if done then
      done()
    end
  end)
end

--- Thread `t` (saved, never had a session): its worktree removed and the thread dropped if
--- the worktree holds nothing.
---@param t minime.Thread
function M.clean(t)
  local worktree = require("minime.worktree")
  worktree.status(t.worktree, function(status)
    if status.changes or status.ahead > 0 then
      return
    end
    worktree.remove(t.worktree, function(ok)
      if ok then
        require("minime.threads").drop(t.id)
      end
    end)
  end)
end

--- `<CR>` on saved thread `id`: one of this Neovim's again, its conversation shown, its
--- session reopened (or, without one, its agent started).
---@param id string
function M.reopen(id)
  local threads = require("minime.threads")
  local t = threads.get(id)
  if not (t and t.saved) then
    return
  end
  uv.fs_stat(t.cwd, function(_, st)
    vim.schedule(function()
      if not (st and st.type == "directory") then
        return require("minime.ui.say").say(
          ("minime: %s is gone: this thread cannot reopen there (x forgets it)"):format(t.cwd),
          vim.log.levels.WARN
        )
      end
      if not t.saved then
        return -- reopened meanwhile
      end
      threads.revive(id)
      if t.worktree then
        require("minime.worktree.thread").enter(t)
      end
      local turn = require("minime.ui.turn")
      turn.make(id, t.cwd, t.label ~= "" and t.label or nil)
      turn.open(id)
      if t.last_session_id then
        require("minime.actions").load_session(t.last_session_id, { thread = id, title = t.title })
      else
        require("minime.warm").thread(id)
      end
    end)
  end)
end

return M
