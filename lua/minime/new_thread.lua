--- :MiniMeNew [agent] [worktree]: a new thread, made current, its (empty) conversation shown,
--- its agent started at once; in a worktree of its own when asked (minime.worktree.thread).
local M = {}

local function say_error(message)
  require("minime.ui.say").say(message, vim.log.levels.ERROR)
end

--- :MiniMeNew [agent] [worktree]: a new thread in the current cwd running agent definition
--- `definition` (default: the configured one), made current, its (empty) conversation shown;
--- its agent and session start at once. With `worktree` (or setup{ worktree = "always" }) in
--- a git repository it works in a new worktree of its own, in a tab page of its own
--- (minime.worktree.thread).
---@param definition? string
---@param worktree? boolean
function M.new(definition, worktree)
  definition = definition ~= "" and definition or nil
  -- A tab page's directory removed under it (a worktree closed elsewhere): getcwd() says "".
  local cwd = vim.fn.getcwd()
  if cwd == "" or vim.fn.isdirectory(cwd) == 0 then
    return say_error("minime: no new thread: this window's directory is gone (:cd to another)")
  end
  if definition then
    local ok, err = pcall(require("minime.agents").load, definition)
    if not ok then
      say_error("minime: " .. tostring(err))
      return
    end
  end
  local function plain()
    local threads = require("minime.threads")
    local id = threads.new(cwd, definition)
    local thread = threads.get(id)
    local turn = require("minime.ui.turn")
    turn.make(id, thread.cwd, definition or nil)
    turn.open(id)
    require("minime.warm").thread(id)
  end
  if worktree or require("minime.config").options.worktree == "always" then
    return require("minime.worktree.thread").new(cwd, definition, worktree == true, plain)
  end
  plain()
end

--- :MiniMeNew's arguments: an agent definition and/or the word `worktree`, in any order.
---@param args string[]
function M.command(args)
  local definition, worktree = nil, false
  for _, arg in ipairs(args) do
    if arg == "worktree" then
      worktree = true
    elseif definition then
      return say_error(
        "minime: :MiniMeNew takes one agent and `worktree`, got " .. table.concat(args, " ")
      )
    else
      definition = arg
    end
  end
  M.new(definition, worktree)
end

return M
