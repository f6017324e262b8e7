-- minime.nvim: commands only. Nothing starts until the first ask is begun (minime.warm).
-- Read at every start of Neovim: the commands are data in one string, for a Lua closure each
-- cost ~10 times as much to parse (bench/README.md, start-up). Their bodies are in minime.*.
if vim.g.loaded_minime then
  return
end
vim.g.loaded_minime = true

local api = vim.api

-- One command a line: its name; what it runs, `module:function` (that module's function);
-- what the function gets (- nothing, 1 the first argument, 2 the first two, * the line, !
-- whether ! was given, o the command's table); -nargs (- none); flags (- none, r: a range,
-- b: a bar, ! : a bang); its completion (- none, else a name of minime.commands.complete);
-- its description, after its arguments in brackets when it takes some (`[id [value]]`,
-- `[agent] [worktree]`: for :h minime-commands, which scripts/gen-help writes from these
-- lines; not part of `desc`; the string is `[=[`: an argument list may hold `]]`).
local COMMANDS = [=[
MiniMeAsk minime.commands:ask o * r ask [text] Ask the agent of the current thread (no text: the input float; a range's lines go along)
MiniMeCommands minime.ui.complete_commands:pick - - - - Pick one of the agent's slash commands; it goes into the input float
MiniMeCancel minime:cancel - - - - Cancel the running turn of the current thread
MiniMeReset minime:reset - - - - Start a new conversation in the current thread
MiniMeNew minime.commands:new o * - agent [agent] [worktree] Start a new thread in this cwd (agent definition; worktree: in a git worktree of its own)
MiniMeThreads minime.ui.threads:open - - - - List every thread: <CR> shows one, x closes, d deletes, r renames
MiniMeLog minime:log - - - - Show mm's stderr and minime's log
MiniMeTerminal minime.actions:terminal 1 ? - terminal [id] Show the output of a command the agent ran in the client terminal (default: the last)
MiniMeStop minime:stop - - - - Stop every thread's agent
MiniMeShow minime:show - - - - Reopen the last turn's float
MiniMeToggle minime:toggle - - b - Hide or show the conversation float (the turn goes on)
MiniMeSessions minime:sessions - - - - Reopen an earlier session of the agent in the current thread
MiniMeLogin minime.actions:login 1 ? - - [method] Log in to the current thread's agent (authenticate); no method: pick one
MiniMeMode minime.modes:set_mode 1 ? - mode [id] Set the session mode of the current thread's agent (none: pick one)
MiniMeConfig minime.commands:config o * - config [id [value]] Set a session config option of the current thread's agent (none: pick one)
MiniMePermission minime.commands:permission - - - - Go to the oldest permission prompt or question waiting for an answer
MiniMeReview minime.review:review 1 ? - review [all] Review the last turn's changes, hunk by hunk, in the quickfix list (all: the session)
MiniMeAccept minime.review:accept ! - ! - Keep the reviewed hunk under the cursor (!: every hunk of the file)
MiniMeReject minime.review:reject ! - ! - Put back the baseline of the reviewed hunk under the cursor (!: every hunk of the file)
MiniMeRewind minime.commands:rewind o ? ! rewind [N] Put the files back as they were before ask N of the current thread (none: the last; undo)
MiniMeComment minime.commands:comment o * ! - [text] Ask the agent about the reviewed hunk under the cursor (!: kept for the next ask)
MiniMeFix minime.feedback.diagnostics:fix - - - - Send the errors and warnings the last turn caused to the agent, as the next ask
MiniMeBudget minime.budget:command * ? - - [amount] Raise the current thread's budget (5, +2, 300k tokens); none: say it
MiniMeFollow minime.ui.follow:toggle - - - - Follow the agent: show the files its tool calls work on (toggles `follow`)
MiniMeInstall minime:install - - - - Create or update the plugin's Python environment
]=]

local runs = {} -- command name -> { module, function, what it gets }

local function run(o)
  local target = runs[o.name]
  local gets, fn = target[3], require(target[1])[target[2]]
  if gets == "1" then
    fn(o.fargs[1])
  elseif gets == "2" then
    fn(o.fargs[1], o.fargs[2])
  elseif gets == "*" then
    fn(o.args)
  elseif gets == "!" then
    fn(o.bang)
  elseif gets == "o" then
    fn(o)
  else
    fn()
  end
end

local function completion(name)
  return function(...)
    return require("minime.commands").complete[name](...)
  end
end

-- A description without the arguments it starts with (`[agent] [worktree]`: one group each).
local function described(desc)
  local rest = desc:match("^%b[] (.+)")
  return rest and described(rest) or desc
end

local pattern = "(%S+) ([^:]+):(%S+) (%S) (%S) (%S) (%S+) ([^\n]+)"
for name, module, fn, gets, nargs, flag, complete, desc in COMMANDS:gmatch(pattern) do
  runs[name] = { module, fn, gets }
  api.nvim_create_user_command(name, run, {
    desc = described(desc),
    nargs = nargs ~= "-" and nargs or nil,
    range = flag == "r" or nil,
    bar = flag == "b" or nil,
    bang = flag == "!" or nil,
    complete = complete ~= "-" and completion(complete) or nil,
  })
end

local function plug(modes, lhs, rhs, desc)
  for mode in modes:gmatch(".") do
    api.nvim_set_keymap(mode, lhs, rhs, { desc = desc })
  end
end
plug(
  "nx",
  "<Plug>(minime-ask)",
  '<Cmd>lua require("minime.commands").ask_key()<CR>',
  "minime: ask the agent (the input float; a visual selection is its context)"
)
plug(
  "nix",
  "<Plug>(minime-toggle)",
  "<Cmd>MiniMeToggle<CR>",
  "minime: hide or show the conversation float"
)
plug(
  "nix",
  "<Plug>(minime-permission)",
  "<Cmd>MiniMePermission<CR>",
  "minime: go to the oldest permission prompt waiting for an answer"
)

local group = api.nvim_create_augroup("minime", { clear = true })
-- Typing `:MiniMe…` starts the host (and for :MiniMeAsk the agent) before <CR>: minime.warm.
api.nvim_create_autocmd("CmdlineChanged", {
  group = group,
  pattern = ":",
  callback = function()
    if vim.fn.getcmdline():find("MiniMe", 1, true) then
      require("minime.warm").on_cmdline()
    end
  end,
})
api.nvim_create_autocmd("VimLeavePre", {
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
