--- Session modes and config options, per thread, as the host last said they are
--- (rplugin/python3/minime/nvim/session_modes.py calls update()); :MiniMeMode and :MiniMeConfig.
--- Kept here so the turn float's title, the statusline and the commands' completion read them
--- at once, without asking the host.
local printable = require("minime.ui.printable")

local M = {}

---@class minime.modes.State
---@field agent string how messages name the agent
---@field mode? string the current mode's id
---@field modes {id: string, name: string, description?: string}[]
---@field config {id: string, name: string, type: string, current: string|boolean,
---  values: {value: string|boolean, name: string, description?: string}[]}[]
---@field usage? {used: integer, size: integer, cost?: {amount: number, currency: string}}
---@field title? string the session's title, as the agent last named it

---@type table<string, minime.modes.State> thread id -> its session's state
local states = {}

--- The state of `key`: a thread id, or a cwd (its current thread).
---@param key string
---@return minime.modes.State?
local function lookup(key)
  return require("minime.threads").pick(states, key)
end

local function notify(message, level)
  require("minime.ui.say").say("minime: " .. message, vim.log.levels[level or "WARN"])
end

--- Called by the host: the state of thread `id`'s session (nil: it has none any more).
---@param id string
---@param state? minime.modes.State
function M.update(id, state)
  states[id] = type(state) == "table" and state or nil
  M.restate(id)
end

--- What shows thread `id`'s state besides its events changed: its float's title and footer,
--- and the statusline, are drawn again (minime.budget calls it too).
---@param id string
function M.restate(id)
  local turn = package.loaded["minime.ui.turn"]
  if turn and turn.refresh then
    turn.refresh(id)
  end
  pcall(vim.cmd, "redrawstatus!")
end

--- The state of `key`'s session (a thread id, or a cwd: its current thread; default: the
--- thread commands act on here), or nil.
---@param key? string
---@return minime.modes.State?
function M.get(key)
  if key == nil then
    local threads = package.loaded["minime.threads"]
    key = threads and threads.here() or vim.fn.getcwd()
  end
  return lookup(key)
end

--- "mode: <name>" of `key`'s session (printable: it goes into titles and statuslines),
--- or nil when it has no mode.
---@param key string
---@return string?
function M.label(key)
  local state = lookup(key)
  if not state or not state.mode then
    return nil
  end
  local name = state.mode
  for _, mode in ipairs(state.modes or {}) do
    if mode.id == state.mode then
      name = mode.name
      break
    end
  end
  return "mode: " .. printable.line(name, 40)
end

local function tokens(n)
  if n >= 1e6 then
    return (("%.1f"):format(n / 1e6):gsub("%.0$", "")) .. "M"
  elseif n >= 1000 then
    return ("%dk"):format(math.floor(n / 1000 + 0.5))
  end
  return tostring(math.floor(n))
end

--- The context window and cost of the session in `cwd` as the agent last said it
--- (`usage_update`): "53k/200k · $0.42", or nil when it said nothing; `no_cost`: the
--- context only (a budget shows the cost).
---@param key string
---@param no_cost? boolean
---@return string?
function M.usage(key, no_cost)
  local state = lookup(key)
  local usage = state and state.usage
  if type(usage) ~= "table" or type(usage.used) ~= "number" or type(usage.size) ~= "number" then
    return nil
  end
  local text = tokens(usage.used) .. "/" .. tokens(usage.size)
  local cost = usage.cost
  if not no_cost and type(cost) == "table" and type(cost.amount) == "number" then
    local amount = ("%.2f"):format(cost.amount)
    local usd = cost.currency == "USD"
    local currency = printable.line(cost.currency, 12) -- ISO 4217 codes have 3 letters
    text = text .. " · " .. (usd and ("$" .. amount) or (amount .. " " .. currency))
  end
  return text
end

--- The title the agent gave `key`'s session (`session_info_update`), or nil.
---@param key string
---@return string?
function M.title(key)
  local state = lookup(key)
  local title = state and state.title
  return type(title) == "string" and title ~= "" and title or nil
end

--- The state and what names its thread to the host ({thread, cwd}), or nil after saying
--- plainly why there is none.
local function session_state(command)
  local cwd = vim.fn.getcwd()
  local id = require("minime.threads").here()
  local state = id and states[id]
  if not state then
    notify(("no session in %s yet: :MiniMeAsk starts one, then %s"):format(cwd, command))
    return nil, nil
  end
  return state, { thread = id, cwd = require("minime.threads").cwd_of(id) }
end

--- `where` ({thread, cwd}) with `fields` added: an operation's payload.
local function payload(where, fields)
  return vim.tbl_extend("force", where, fields)
end

local function send(op, fields)
  local ok, err = pcall(require("minime.host").notify, op, fields)
  if not ok then
    notify(tostring(err), "ERROR")
  end
end

--- :MiniMeMode [id]: set the mode of this cwd's session; without an id, pick one.
---@param id? string
function M.set_mode(id)
  local state, where = session_state(":MiniMeMode")
  if not state then
    return
  end
  if id and id ~= "" then
    send("mode", payload(where, { mode_id = id })) -- the host refuses a mode not offered
    return
  end
  if #(state.modes or {}) == 0 then
    notify(("%s offers no session modes"):format(state.agent))
    return
  end
  require("minime.ui.pick").select(state.modes, {
    prompt = "Session mode:",
    kind = "minime.mode",
    format_item = function(mode)
      local mark = mode.id == state.mode and "● " or "  "
      local about = mode.description and (" — " .. printable.line(mode.description)) or ""
      return mark .. printable.line(mode.name, 60) .. about
    end,
  }, function(mode)
    if mode then
      send("mode", payload(where, { mode_id = mode.id }))
    end
  end)
end

local function find_option(state, id)
  for _, option in ipairs(state.config or {}) do
    if option.id == id then
      return option
    end
  end
end

local function pick_value(where, option)
  require("minime.ui.pick").select(option.values or {}, {
    prompt = printable.line(option.name, 60) .. ":",
    kind = "minime.config_value",
    format_item = function(v)
      local mark = v.value == option.current and "● " or "  "
      local about = v.description and (" — " .. printable.line(v.description)) or ""
      return mark .. printable.line(v.name, 60) .. about
    end,
  }, function(v)
    if v then
      send("config", payload(where, { config_id = option.id, value = v.value }))
    end
  end)
end

--- :MiniMeConfig [id [value]]: set a config option of this cwd's session; pick what is missing.
---@param id? string
---@param value? string
function M.set_config(id, value)
  local state, where = session_state(":MiniMeConfig")
  if not state then
    return
  end
  if id and value then
    send("config", payload(where, { config_id = id, value = value })) -- the host checks both
    return
  end
  if #(state.config or {}) == 0 then
    notify(("%s offers no config options"):format(state.agent))
    return
  end
  if id then
    local option = find_option(state, id)
    if option then
      pick_value(where, option)
    else
      send("config", payload(where, { config_id = id, value = "" })) -- refused, naming options
    end
    return
  end
  require("minime.ui.pick").select(state.config, {
    prompt = "Config option:",
    kind = "minime.config",
    format_item = function(option)
      local line = printable.line
      return ("%s (%s): %s"):format(
        line(option.name, 60),
        line(option.id, 60),
        line(option.current, 60)
      )
    end,
  }, function(option)
    if option then
      pick_value(where, option)
    end
  end)
end

local function matching(items, lead)
  return vim.tbl_filter(function(item)
    return vim.startswith(item, lead)
  end, items)
end

--- Completion of :MiniMeMode: the modes of this cwd's session.
function M.complete_mode(lead)
  local state = M.get()
  local ids = vim.tbl_map(function(mode)
    return mode.id
  end, state and state.modes or {})
  return matching(ids, lead)
end

--- Completion of :MiniMeConfig: an option's id, then its values.
function M.complete_config(lead, line)
  local state = M.get()
  if not state then
    return {}
  end
  local words = vim.split(vim.trim(line:sub(1, #line - #lead)), "%s+")
  if #words <= 1 then
    return matching(
      vim.tbl_map(function(option)
        return option.id
      end, state.config or {}),
      lead
    )
  end
  local option = find_option(state, words[2])
  local values = option
      and vim.tbl_map(function(v)
        return tostring(v.value)
      end, option.values or {})
    or {}
  return #words == 2 and matching(values, lead) or {}
end

return M
