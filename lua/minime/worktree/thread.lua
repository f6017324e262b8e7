--- A thread in a worktree of its own (:h minime-worktrees): `:MiniMeNew [agent] worktree` makes
--- the worktree, then a tab page whose cwd (`:tcd`) is that worktree, and runs the thread there
--- (the agent's cwd, the tools' scope, the review and the checkpoints are the worktree's, as
--- they follow the thread's cwd). Closing the thread asks what to do with a worktree that
--- holds changes or commits not merged; an empty one is removed. The thread's record is
--- written before git makes the worktree: a crash never leaves one no record names.
local worktree = require("minime.worktree")

local M = {}

local function say(text, level)
  require("minime.ui.say").say(text, level or vim.log.levels.INFO)
end

--- The tab page whose cwd is `path` (nil: none).
---@param path string
---@return integer?
local function tab_of(path)
  for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
    local nr = vim.api.nvim_tabpage_get_number(tab)
    if vim.fn.getcwd(-1, nr) == path then
      return tab
    end
  end
  return nil
end

--- Show thread `t`'s worktree: its tab page, or a new one whose cwd (`:tcd`) it is. No room
--- for a tab page (E36 on a small screen) is said plainly, and the thread works in its
--- worktree all the same: this runs from git's answer, where an error would be a stack trace.
---@param t minime.Thread
function M.enter(t)
  local tab = tab_of(t.cwd)
  if tab then
    vim.api.nvim_set_current_tabpage(tab)
    return
  end
  local from = vim.api.nvim_get_current_tabpage()
  -- pcall, not window.quietly: under :silent! a :tabnew with no room is no error, and the
  -- failure could not be told from a tab page made.
  local ok, err = pcall(vim.cmd, "tabnew")
  if ok then
    ok, err = pcall(vim.cmd, "tcd " .. vim.fn.fnameescape(t.cwd))
  end
  if not ok then
    local made = vim.api.nvim_get_current_tabpage()
    if made ~= from then -- :tabnew may make the page, then find no room for its window
      pcall(vim.cmd, "tabclose " .. vim.api.nvim_tabpage_get_number(made))
      pcall(vim.api.nvim_set_current_tabpage, from)
    end
    local why = tostring(err):match("(E%d+: .*)$") or tostring(err)
    say(
      ("minime: no tab page for the worktree (%s); the thread works in %s all the same"):format(
        why,
        vim.fn.fnamemodify(t.cwd, ":~")
      ),
      vim.log.levels.WARN
    )
  end
end

--- The slug of a thread's worktree and branch: its agent and the random part of its id.
local function slug(id, definition)
  local agent = (definition or require("minime.config").options.agent)
  agent = type(agent) == "string" and agent:gsub("[^%w]", "-"):sub(1, 20) or "agent"
  return ("%s-%s"):format(agent, (id:match("%-(%x+)$") or id:sub(2)))
end

--- `:MiniMeNew [agent] worktree` in `cwd`: a new worktree and branch, then the thread in its
--- own tab page (made current, its conversation shown, its agent started). Outside a git
--- repository with `required`, nothing is made and that is said; without, a plain thread is.
---@param cwd string
---@param definition? string
---@param required boolean
---@param plain fun() makes a plain thread instead
function M.new(cwd, definition, required, plain)
  local threads = require("minime.threads")
  local id = threads.new_id()
  worktree.plan(cwd, slug(id, definition), function(wt, why)
    if not wt then
      if required or not (why or ""):find("is not in a git repository$") then
        return say("minime: no worktree: " .. tostring(why), vim.log.levels.ERROR)
      end
      return plain()
    end
    -- The record first: a crash from here on leaves a worktree the list still names.
    local store = require("minime.thread_store")
    local t = { id = id, cwd = wt.path, agent = definition or "", label = definition or "" }
    t.title, t.worktree, t.last_activity = "", wt, os.time()
    store.save(store.record_of(t) --[[@as minime.ThreadRecord]])
    worktree.add(wt, function(ok, err)
      if not ok then
        store.remove(id)
        return say("minime: no worktree: " .. tostring(err), vim.log.levels.ERROR)
      end
      threads.new(wt.path, definition, { id = id, worktree = wt })
      M.enter(threads.get(id) --[[@as minime.Thread]])
      local turn = require("minime.ui.turn")
      turn.make(id, wt.path, definition)
      turn.open(id)
      require("minime.warm").thread(id)
      say(
        ("minime: thread in worktree %s (branch %s)"):format(
          vim.fn.fnamemodify(wt.path, ":~"),
          wt.branch
        )
      )
    end)
  end)
end

--- "2 commits, changes": what a worktree's status holds, in words ("" when nothing).
---@param status {changes: boolean, ahead: integer, missing?: boolean}
---@return string
function M.describe(status)
  local parts = {}
  if status.missing then
    parts[#parts + 1] = "gone"
  end
  if status.changes then
    parts[#parts + 1] = "changes"
  end
  if status.ahead > 0 then
    parts[#parts + 1] = ("%d commit%s not merged"):format(
      status.ahead,
      status.ahead == 1 and "" or "s"
    )
  end
  return table.concat(parts, ", ")
end

--- Before thread `t` closes: go(remove) — remove its worktree (true) or keep it (false). An
--- empty one (no change, no commit not merged) is removed; else the user chooses (no choice:
--- go is not called, nothing closes).
---@param t minime.Thread
---@param go fun(remove: boolean)
function M.ask(t, go)
  local wt = t.worktree
  if not wt then
    return go(false)
  end
  worktree.status(wt, function(status)
    if not status.changes and status.ahead == 0 then
      return go(true)
    end
    local where = vim.fn.fnamemodify(wt.path, ":~")
    require("minime.ui.pick").select(
      { "Keep the worktree and its branch", "Remove them (what they hold is lost)" },
      {
        prompt = ("%s (%s) holds %s:"):format(where, wt.branch, M.describe(status)),
        kind = "minime.worktree",
      },
      function(_, i)
        if i then
          go(i == 2)
        end
      end
    )
  end)
end

--- Thread `t` is closed: its worktree removed (when M.ask said so) with its tab page, or kept.
---@param t minime.Thread
function M.closed(t)
  local wt = t.worktree
  if not wt then
    return
  end
  if t.remove_worktree ~= true then
    return say(
      ("minime: worktree kept: %s (branch %s)"):format(vim.fn.fnamemodify(wt.path, ":~"), wt.branch)
    )
  end
  worktree.remove(wt, function(ok, why)
    if not ok then
      return say("minime: the worktree was not removed: " .. tostring(why), vim.log.levels.WARN)
    end
    local tab = tab_of(wt.path)
    if tab and #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose " .. vim.api.nvim_tabpage_get_number(tab))
    elseif tab then
      pcall(vim.cmd, "tcd " .. vim.fn.fnameescape(wt.root))
    end
  end)
end

return M
