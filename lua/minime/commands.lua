--- The user commands' and <Plug> keys' bodies that do more than call one function, and their
--- completions: plugin/minime.lua (read at every start) names them, this file is read on first
--- use.
local M = {}

--- :[range]MiniMeAsk [text]: the range is the ask's context.
function M.ask(o)
  local range = o.range > 0 and { o.line1, o.line2 } or nil
  require("minime").ask(o.args, range)
end

--- <Plug>(minime-ask): the input float; a visual selection is its context.
function M.ask_key()
  local mode = vim.fn.mode()
  local range = nil
  if mode == "v" or mode == "V" or mode == "\22" then
    local a, b = vim.fn.line("v"), vim.fn.line(".")
    range = { math.min(a, b), math.max(a, b) }
    vim.api.nvim_feedkeys(vim.keycode("<Esc>"), "nx", false)
  end
  require("minime").ask(nil, range)
end

--- :MiniMeNew [agent] [worktree]
function M.new(o)
  require("minime.new_thread").command(o.fargs)
end

--- :MiniMeRewind[!] [N|undo]
function M.rewind(o)
  require("minime.rewind").command(o.args, o.bang)
end

--- :MiniMeConfig [id [value]]
function M.config(o)
  require("minime.modes").set_config(o.fargs[1], o.fargs[2])
end

--- :MiniMeComment[!] [text] (!: kept for the thread's next ask, not asked now)
function M.comment(o)
  require("minime.review").comment(o.args, o.bang)
end

--- :MiniMePermission: a permission prompt first, else a question from the agent
--- (elicitation), else say there is none.
function M.permission()
  local permission = require("minime.ui.permission")
  if not permission.focus() and not require("minime.ui.elicitation").enter() then
    permission.jump()
  end
end

--- Completions, by the name plugin/minime.lua gives them.
M.complete = {
  ask = function(lead, line, pos)
    return require("minime.ui.complete").cmdline(lead, line, pos)
  end,
  terminal = function(lead)
    return require("minime.ui.terminal").complete(
      require("minime.threads").here() or vim.fn.getcwd(),
      lead
    )
  end,
  agent = function(lead)
    return vim.tbl_filter(function(name)
      return vim.startswith(name, lead)
    end, vim.list_extend(require("minime.agents").names(), { "worktree" }))
  end,
  mode = function(lead)
    return require("minime.modes").complete_mode(lead)
  end,
  config = function(lead, line)
    return require("minime.modes").complete_config(lead, line)
  end,
  review = function()
    return { "all" }
  end,
  rewind = function()
    return { "undo" }
  end,
}

return M
