-- minime.nvim: commands only. Nothing starts until the first ask is begun (minime.warm).
if vim.g.loaded_minime then
  return
end
vim.g.loaded_minime = true

local function cmd(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts or {})
end

cmd("MiniMeAsk", function(o)
  local range = o.range > 0 and { o.line1, o.line2 } or nil
  require("minime").ask(o.args, range)
end, {
  nargs = "*",
  range = true,
  complete = function(lead, line, pos)
    return require("minime.ui.complete").cmdline(lead, line, pos)
  end,
  desc = "Ask the mini-me agent",
})
vim.keymap.set({ "n", "x" }, "<Plug>(minime-ask)", function()
  local mode = vim.fn.mode()
  local range = nil
  if mode == "v" or mode == "V" or mode == "\22" then
    local a, b = vim.fn.line("v"), vim.fn.line(".")
    range = { math.min(a, b), math.max(a, b) }
    vim.api.nvim_feedkeys(vim.keycode("<Esc>"), "nx", false)
  end
  require("minime").ask(nil, range)
end, { desc = "minime: ask the agent (the input float; a visual selection is its context)" })
cmd("MiniMeCommands", function()
  require("minime.ui.complete_commands").pick()
end, { desc = "Pick one of the agent's slash commands; it goes into the input float" })
cmd("MiniMeCancel", function()
  require("minime").cancel()
end, { desc = "Cancel the running turn of the current thread" })
cmd("MiniMeReset", function()
  require("minime").reset()
end, { desc = "Start a new conversation in the current thread" })
cmd("MiniMeNew", function(o)
  require("minime").new(o.fargs[1])
end, {
  nargs = "?",
  complete = function(lead)
    return vim.tbl_filter(function(name)
      return vim.startswith(name, lead)
    end, require("minime.agents").names())
  end,
  desc = "Start a new thread in this cwd (with the named agent definition) and make it current",
})
cmd("MiniMeThreads", function()
  require("minime.ui.threads").open()
end, { desc = "List every thread: <CR> shows one, x closes, d deletes, r renames" })
cmd("MiniMeLog", function()
  require("minime").log()
end, { desc = "Show mm's stderr and minime's log" })
cmd("MiniMeTerminal", function(o)
  require("minime.actions").terminal(o.fargs[1])
end, {
  nargs = "?",
  complete = function(lead)
    return require("minime.ui.terminal").complete(
      require("minime.threads").here() or vim.fn.getcwd(),
      lead
    )
  end,
  desc = "Show the output of a command the agent ran in the client terminal (default: the last)",
})
cmd("MiniMeStop", function()
  require("minime").stop()
end, { desc = "Stop every thread's agent" })
cmd("MiniMeShow", function()
  require("minime").show()
end, { desc = "Reopen the last turn's float" })
cmd("MiniMeToggle", function()
  require("minime").toggle()
end, { bar = true, desc = "Hide or show the conversation float (the turn goes on)" })
vim.keymap.set({ "n", "i", "x" }, "<Plug>(minime-toggle)", "<Cmd>MiniMeToggle<CR>", {
  desc = "minime: hide or show the conversation float",
})
cmd("MiniMeSessions", function()
  require("minime").sessions()
end, { desc = "Reopen an earlier session of the agent in the current thread" })
cmd("MiniMeLogin", function(o)
  require("minime.actions").login(o.fargs[1])
end, {
  nargs = "?",
  desc = "Log in to the current thread's agent (authenticate); no method: pick one",
})
cmd("MiniMeMode", function(o)
  require("minime.modes").set_mode(o.fargs[1])
end, {
  nargs = "?",
  complete = function(lead)
    return require("minime.modes").complete_mode(lead)
  end,
  desc = "Set the session mode of the current thread's agent (none: pick one)",
})
cmd("MiniMeConfig", function(o)
  require("minime.modes").set_config(o.fargs[1], o.fargs[2])
end, {
  nargs = "*",
  complete = function(lead, line)
    return require("minime.modes").complete_config(lead, line)
  end,
  desc = "Set a session config option of the current thread's agent (none: pick one)",
})
cmd("MiniMePermission", function()
  -- A permission prompt first, else a question from the agent (elicitation), else say none.
  local permission = require("minime.ui.permission")
  if not permission.focus() and not require("minime.ui.elicitation").enter() then
    permission.jump()
  end
end, { desc = "Go to the oldest permission prompt or question waiting for an answer" })
vim.keymap.set({ "n", "i", "x" }, "<Plug>(minime-permission)", "<Cmd>MiniMePermission<CR>", {
  desc = "minime: go to the oldest permission prompt waiting for an answer",
})
cmd("MiniMeReview", function(o)
  require("minime.review").review(o.fargs[1])
end, {
  nargs = "?",
  complete = function()
    return { "all" }
  end,
  desc = "Review the last turn's changes, hunk by hunk, in the quickfix list (all: the session)",
})
cmd("MiniMeAccept", function(o)
  require("minime.review").accept(o.bang)
end, { bang = true, desc = "Keep the reviewed hunk under the cursor (!: every hunk of the file)" })
cmd("MiniMeReject", function(o)
  require("minime.review").reject(o.bang)
end, {
  bang = true,
  desc = "Put back the baseline of the reviewed hunk under the cursor (!: every hunk of the file)",
})
cmd("MiniMeRewind", function(o)
  require("minime.rewind").command(o.args, o.bang)
end, {
  nargs = "?",
  bang = true,
  complete = function()
    return { "undo" }
  end,
  desc = "Put the files back as they were before ask N of the current thread (none: the last; undo)",
})
cmd("MiniMeComment", function(o)
  require("minime.review").comment(o.args)
end, {
  nargs = "*",
  desc = "Ask the agent about the reviewed hunk under the cursor (its lines go along)",
})
cmd("MiniMeFollow", function()
  require("minime.ui.follow").toggle()
end, { desc = "Follow the agent: show the files its tool calls work on (toggles `follow`)" })
cmd("MiniMeInstall", function()
  require("minime").install()
end, { desc = "Create or update the plugin's Python environment" })

-- Keys are timed from the start: a permission prompt never takes focus right after one.
require("minime.ui.last_key")

local group = vim.api.nvim_create_augroup("minime", { clear = true })
-- Typing `:MiniMe…` starts the host (and for :MiniMeAsk the agent) before <CR>: minime.warm.
vim.api.nvim_create_autocmd("CmdlineChanged", {
  group = group,
  pattern = ":",
  callback = function()
    if vim.fn.getcmdline():find("MiniMe", 1, true) then
      require("minime.warm").on_cmdline()
    end
  end,
})
vim.api.nvim_create_autocmd("VimLeavePre", {
  group = group,
  callback = function()
    if package.loaded["minime.host"] then
      require("minime.host").shutdown()
    end
    if package.loaded["minime.review.checkpoints"] then
      require("minime.review.checkpoints").drop_all(1000) -- this Neovim's refs in repositories
    end
  end,
})
