--- Follow the agent (`follow = true`, :MiniMeFollow): the file a tool call works on (its ACP
--- `locations`) is shown at that line as the agent reaches it, in one follow window: a split
--- below the user's code window (beside it, it would sit under the side float), reused for
--- each location, never entered.
---
--- Never the window the user is in, never while the user types: the permission prompt's rule
--- (minime.ui.permission_focus.busy: insert, command-line, visual, operator-pending mode, a key
--- awaited, a key within `permission.idle` seconds). A location reached then waits (the latest
--- one) and shows once the user stops. Only a regular file under the turn's cwd that the deny
--- list allows (minime.editor.scope), and not too big to load.
local config = require("minime.config")
local permission_focus = require("minime.ui.permission_focus")

local api, uv = vim.api, vim.uv

local M = {}

--- A file larger than this is not loaded to be followed (one already loaded is shown).
M.MAX_BYTES = 4 * 1024 * 1024
--- How often a location that waits for the user to stop typing is tried again (ms).
M.RETRY_MS = 150

--- The follow window (nil: none yet, or closed).
---@type integer?
M.win = nil

--- What the follow window shows now: { path (real), line } (tests read it).
---@type {path: string, line: integer}?
M.shown = nil

--- Why a location could not be shown, newest last (tests read it; the user is not told:
--- following is a courtesy, and the conversation's tool line says where the agent is).
---@type string[]
M.errors = {}

---@type {path: string, line: integer}?
local pending
---@type uv.uv_timer_t?
local timer
--- thread -> call id -> the location last taken from that call ("path:line"): an update that
--- repeats the call's locations shows nothing again.
---@type table<string, table<string, string>>
local taken = {}

local function say(text)
  require("minime.ui.say").say("minime: " .. text, vim.log.levels.INFO)
end

---@return boolean
function M.enabled()
  return config.options.follow == true
end

local function stop_timer()
  if timer then
    timer:stop()
    timer:close()
    timer = nil
  end
end

--- :MiniMeFollow: follow on or off (until the next setup()); says which.
function M.toggle()
  config.options.follow = not M.enabled()
  if M.enabled() then
    say("follow on: the files the agent works on show beside the code")
  else
    pending = nil
    stop_timer()
    say("follow off")
  end
end

--- The real path of a location's file when it may be followed: under `cwd`, allowed by the
--- deny list, a regular file; else nil.
---@param cwd string
---@param path string
---@return string?
local function allowed(cwd, path)
  local abs = path:sub(1, 1) == "/" and path or cwd .. "/" .. path
  local ok, scope =
    pcall(require("minime.editor.scope").new, { cwd = cwd, deny = config.options.deny })
  if not ok then
    return nil
  end
  local real = scope:file(abs)
  local stat = real and uv.fs_stat(real)
  return stat and stat.type == "file" and real or nil
end

--- Whether `win` is a normal window (no float) of the current tab page.
local function normal(win)
  return win ~= 0
    and api.nvim_win_is_valid(win)
    and api.nvim_win_get_config(win).relative == ""
    and api.nvim_win_get_tabpage(win) == api.nvim_get_current_tabpage()
end

--- Whether `win` is a normal window showing a file (not a quickfix list, help, terminal).
local function code(win)
  return normal(win) and vim.bo[api.nvim_win_get_buf(win)].buftype == ""
end

--- The user's code window: the current one, or the one they came from to a float, else the
--- first window of the tab page showing a file, else its first normal window.
---@return integer?
function M.code_window()
  local candidates = { api.nvim_get_current_win(), vim.fn.win_getid(vim.fn.winnr("#")) }
  vim.list_extend(candidates, api.nvim_tabpage_list_wins(0))
  for _, fits in ipairs({ code, normal }) do
    for _, win in ipairs(candidates) do
      if fits(win) then
        return win
      end
    end
  end
end

--- The buffer of `path`, loaded (a swap file's question never asked: it would wait for keys).
local function buffer(path)
  local buf = require("minime.editor.paths").loaded_buffer(path)
  if buf then
    return buf
  end
  local stat = uv.fs_stat(path)
  if not stat or stat.size > M.MAX_BYTES then
    return nil
  end
  buf = vim.fn.bufadd(path)
  local shortmess = vim.o.shortmess
  vim.o.shortmess = shortmess .. "A"
  local ok = pcall(vim.fn.bufload, buf)
  vim.o.shortmess = shortmess
  if not ok then
    return nil
  end
  vim.bo[buf].buflisted = true
  return buf
end

--- Show `loc` in the follow window (made when there is none in this tab page), unfocused.
local function show(loc)
  local buf = buffer(loc.path)
  if not buf then
    return
  end
  local win = M.win
  local shown = win and normal(win) and api.nvim_win_get_buf(win) == buf
  if not shown and (not (win and normal(win)) or not pcall(api.nvim_win_set_buf, win, buf)) then
    local under = M.code_window()
    if not under then
      return
    end
    win = api.nvim_open_win(buf, false, { split = "below", win = under })
    vim.wo[win].cursorline = true
    vim.w[win].minime_follow = true
    M.win = win
  end
  local line = math.max(1, math.min(loc.line, api.nvim_buf_line_count(buf)))
  api.nvim_win_set_cursor(win, { line, 0 })
  api.nvim_win_call(win, function()
    vim.cmd("normal! zz")
  end)
  M.shown = { path = loc.path, line = line }
end

--- <CR> on a tool line (minime.ui.turn.tools.jump): `path` opens at `line` in the code
--- window, which is entered; a path that is no regular file is said, not opened.
---@param path string absolute
---@param line integer
---@return boolean
function M.jump(path, line)
  local stat = uv.fs_stat(path)
  local win = M.code_window()
  if not (stat and stat.type == "file") or not win then
    say("the tool's location is not a file that can be opened: " .. vim.fn.fnamemodify(path, ":~"))
    return true
  end
  api.nvim_set_current_win(win)
  local ok, err = pcall(vim.cmd.edit, vim.fn.fnameescape(path))
  if not ok then
    say(tostring(err))
    return true
  end
  local last = api.nvim_buf_line_count(0)
  api.nvim_win_set_cursor(win, { math.max(1, math.min(line, last)), 0 })
  return true
end

--- Why a location may not show now (nil: it may).
local function held()
  local busy = permission_focus.busy()
  if busy then
    return busy
  end
  if M.win and api.nvim_get_current_win() == M.win then
    return "in the follow window"
  end
end

--- Show the location waiting, unless the user types (then tried again soon).
local function try()
  if not pending or not M.enabled() then
    pending = nil
    return stop_timer()
  end
  if held() then
    if not timer then
      timer = assert(uv.new_timer())
      timer:start(M.RETRY_MS, M.RETRY_MS, vim.schedule_wrap(try))
    end
    return
  end
  local loc = pending
  pending = nil
  stop_timer()
  local ok, err = pcall(show, loc) -- E36 (no room for the split), a buffer's autocommand
  if not ok then
    M.errors[#M.errors + 1] = tostring(err)
    if #M.errors > 20 then
      table.remove(M.errors, 1)
    end
  end
end

--- Call `id`'s location `loc` ({path, line?}) when it is new for the call (then noted: the
--- call's later events that name it again show nothing), else nil. `key`: the conversation.
local function new_for_call(key, id, loc)
  local path = type(loc) == "table" and loc.path
  if type(path) ~= "string" or path == "" then
    return nil
  end
  local line = tonumber(loc.line) or 1
  local at, calls = path .. ":" .. line, taken[key] or {}
  taken[key] = calls
  if calls[tostring(id)] == at then
    return nil
  end
  calls[tostring(id)] = at
  return { path = path, line = line }
end

--- One batch of turn events (minime.rpc.apply): a tool call's first location, when it is new
--- for the call, is where the agent is now. `key`: the conversation (its thread), `cwd`: where
--- its files are.
---@param key string
---@param cwd string
---@param events table[]
function M.see(key, cwd, events)
  if not M.enabled() then
    return
  end
  local reached = {} -- the locations new for their call, in order
  for _, ev in ipairs(events) do
    if type(ev) == "table" and ev.kind == "begin" then
      taken[key] = {}
    elseif type(ev) == "table" and ev.kind == "tool_call" and type(ev.locations) == "table" then
      reached[#reached + 1] = new_for_call(key, ev.id, ev.locations[1])
    end
  end
  M.reach(cwd, reached)
end

--- A permission request's call (minime.rpc.permission): its first location is where the
--- agent is now. codex-acp names the files it edits only there (its `toolCall` is an update of
--- the call), never in the call's own updates.
---@param key string the conversation (its thread)
---@param cwd string where its files are
---@param call_id string
---@param paths string[]
function M.see_request(key, cwd, call_id, paths)
  if M.enabled() and type(paths) == "table" then
    M.reach(cwd, { new_for_call(key, call_id, { path = paths[1] }) })
  end
end

--- Of the locations the agent reached, in order, the last one that may be shown is shown:
--- where the agent is now (one check in the usual batch).
---@param cwd string
---@param reached {path: string, line: integer}[]
function M.reach(cwd, reached)
  for i = #reached, 1, -1 do
    local real = allowed(cwd, reached[i].path)
    if real then
      pending = { path = real, line = reached[i].line }
      return try()
    end
  end
end

return M
