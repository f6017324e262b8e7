--- The agent's slash commands (ACP `available_commands_update`, as the host last said them:
--- minime.modes' state of the cwd): completed after `/` at the start of an ask (the input
--- float, :MiniMeAsk), and listed by :MiniMeCommands. A command is sent as the prompt's text,
--- `/name input`, as ACP says.
local printable = require("minime.ui.printable")

local M = {}

---@class minime.Command
---@field name string
---@field description string
---@field hint? string what input it takes

--- The commands of the session in `cwd` (none before the agent sent them).
---@param cwd string
---@return minime.Command[]
function M.list(cwd)
  local state = require("minime.modes").get(cwd)
  local commands = state and state.commands
  return type(commands) == "table" and commands or {}
end

local function matching(cwd, typed)
  local found = {}
  for _, command in ipairs(M.list(cwd)) do
    if type(command.name) == "string" and vim.startswith(command.name, typed) then
      found[#found + 1] = command
    end
  end
  return found
end

--- "description ‹hint›", one printable line.
---@param command minime.Command
function M.describe(command)
  local text = printable.line(command.description or "", 80)
  if type(command.hint) == "string" and command.hint ~= "" then
    text = text .. " ‹" .. printable.line(command.hint, 40) .. "›"
  end
  return text
end

--- The input's first line up to the cursor is `/word` (blanks before it allowed): where the
--- `/` is (0-based), else nil.
function M.start(before, row)
  if row ~= 1 then
    return nil
  end
  local blanks = before:match("^(%s*)/[^%s]*$")
  return blanks and #blanks or nil
end

--- Complete-items for `base` (`/` and what follows it).
function M.items(base, cwd)
  local items = {}
  for _, command in ipairs(matching(cwd, ((base or ""):gsub("^/", "")))) do
    local info = command.description or ""
    if type(command.hint) == "string" and command.hint ~= "" then
      info = info .. "\n\ninput: " .. command.hint
    end
    items[#items + 1] = {
      word = "/" .. command.name,
      abbr = "/" .. printable.line(command.name, 40), -- a UI may draw the menu itself
      menu = M.describe(command),
      info = info,
      kind = "cmd",
      icase = 0,
    }
  end
  return items
end

--- :MiniMeAsk's first argument, when it starts with `/`: the matching commands.
function M.cmdline(lead, line, pos, cwd)
  local before = line:sub(1, pos)
  if not before:match("MiniMeAsk!?%s+/[^%s]*$") or lead:sub(1, 1) ~= "/" then
    return nil
  end
  return vim.tbl_map(function(command)
    return "/" .. command.name
  end, matching(cwd, lead:sub(2)))
end

--- :MiniMeCommands: the commands in vim.ui.select; the chosen one goes into the input float.
function M.pick()
  local cwd = vim.fn.getcwd()
  local commands = M.list(cwd)
  if #commands == 0 then
    local state = require("minime.modes").get(cwd)
    local why = state and ("%s sent no slash commands for %s"):format(state.agent, cwd)
      or ("no session in %s yet: :MiniMeAsk starts one, then :MiniMeCommands"):format(cwd)
    require("minime.ui.say").say("minime: " .. why, vim.log.levels.WARN)
    return
  end
  require("minime.ui.pick").select(commands, {
    prompt = "Agent command:",
    kind = "minime.command",
    format_item = function(command)
      return "/" .. printable.line(command.name, 40) .. " — " .. M.describe(command)
    end,
  }, function(command)
    if command then
      require("minime.actions").input(cwd, "/" .. command.name .. " ")
    end
  end)
end

return M
