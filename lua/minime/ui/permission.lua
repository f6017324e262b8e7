--- Permission prompts: one float at a time, the others wait in a queue.
---
--- `open(req, on_answer)` with
---   req = {id, cwd, session_id, title, tool_kind, input = table|nil,
---          content = {{type="diff", path, oldText, newText} | {type="text", text} | ...},
---          options = {{option_id, name, kind}, ...}, timeout = seconds|nil}
--- shows the request and the agent's own options, numbered in the order sent. Keys 1..9 pick
--- an option, <CR> the one under the cursor, q/<Esc> dismiss; `a` picks the allow-once option
--- and asks the host to remember it for this session (client side, for agents whose options
--- lack "always"). With `timeout`, the title counts down from when the float shows, and an
--- unanswered prompt is dismissed at zero. `on_answer(option_id, remember)` is called exactly
--- once, with nil when dismissed; never after `close(id)` (the host already answered).
local window = require("minime.ui.window")

local api = vim.api

local M = {}

---@class minime.permission.Config
---@field focus boolean enter the float (the user must answer; default true)
---@field width number fraction of the editor (<= 1) or columns; the float shrinks to its text
---@field height number fraction of the editor (<= 1) or lines; the float shrinks to its text
---@field border string|string[]
local defaults = { focus = true, width = 0.7, height = 0.8, border = "rounded" }

---@type minime.permission.Config
M.config = vim.deepcopy(defaults)

--- Errors raised by on_answer callbacks (they are also notified).
---@type string[]
M.errors = {}

---@class minime.permission.Prompt
---@field req table
---@field on_answer fun(option_id: string?, remember: boolean?)
---@field deadline? number hrtime (ms) at which an unanswered prompt is dismissed
---@field timer? uv.uv_timer_t
---@field buf? integer
---@field win? integer
---@field prev_win? integer
---@field done? boolean

---@type minime.permission.Prompt[]
local queue = {}
---@type minime.permission.Prompt?
local current

local ns = api.nvim_create_namespace("minime.permission")

local function str(x)
  if x == nil or x == vim.NIL then
    return ""
  end
  return type(x) == "string" and x or tostring(x)
end

local function split(s)
  local lines = vim.split((s:gsub("\r\n", "\n")), "\n", { plain = true })
  if #lines > 1 and lines[#lines] == "" then
    lines[#lines] = nil
  end
  return lines
end

--- The input as `key: value` lines; multi-line strings go on indented lines beneath, or
--- are summarised when a diff already shows them.
---@param input any
---@param has_diff boolean
---@return string[]
local function input_lines(input, has_diff)
  if type(input) ~= "table" then
    return (input ~= nil and input ~= vim.NIL) and { "input: " .. window.oneline(input) } or {}
  end
  local keys = vim.tbl_keys(input)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  local lines = {}
  for _, k in ipairs(keys) do
    local v = input[k]
    local head = tostring(k) .. ": "
    if type(v) == "string" and v:find("\n") then
      local vl = split(v)
      if has_diff then
        lines[#lines + 1] = ("%s(%d lines)"):format(head, #vl)
      else
        lines[#lines + 1] = head
        for _, l in ipairs(vl) do
          lines[#lines + 1] = "  " .. l
        end
      end
    elseif type(v) == "string" then
      lines[#lines + 1] = head .. v
    else
      local ok, s = pcall(vim.json.encode, v)
      lines[#lines + 1] = head .. window.oneline(ok and s or vim.inspect(v))
    end
  end
  return lines
end

--- A unified diff of one diff content item.
---@return string[]
local function diff_lines(item)
  local path = str(item.path)
  local old, new = str(item.oldText), str(item.newText)
  local lines = {
    "--- " .. ((item.oldText == nil or item.oldText == vim.NIL) and "/dev/null" or "a/" .. path),
    "+++ b/" .. path,
  }
  -- Without a final newline on both sides, the last line would show as changed.
  if old ~= "" and old:sub(-1) ~= "\n" then
    old = old .. "\n"
  end
  if new ~= "" and new:sub(-1) ~= "\n" then
    new = new .. "\n"
  end
  local diff = vim.text and vim.text.diff or vim.diff
  local ok, d = pcall(diff, old, new, { result_type = "unified", ctxlen = 3 })
  if not ok then
    lines[#lines + 1] = "(diff failed: " .. window.oneline(d) .. ")"
  elseif d == "" then
    lines[#lines + 1] = "(no changes)"
  else
    vim.list_extend(lines, split(d))
  end
  return lines
end

local option_hl = {
  allow_once = "MiniMeOptionAllow",
  allow_always = "MiniMeOptionAllow",
  reject_once = "MiniMeOptionReject",
  reject_always = "MiniMeOptionReject",
}

---@param req table
---@return string[] lines
---@return table[] marks {row, col, end_col, group}
---@return integer first row of the options (0-based)
---@return boolean has_diff
local function render(req)
  local lines, marks = {}, {}
  local function add(line, group)
    lines[#lines + 1] = line
    if group then
      marks[#marks + 1] = { #lines - 1, 0, #line, group }
    end
  end
  local content = type(req.content) == "table" and req.content or {}
  local has_diff = false
  for _, item in ipairs(content) do
    has_diff = has_diff or (type(item) == "table" and item.type == "diff")
  end

  local title = str(req.title) ~= "" and window.oneline(req.title) or "Permission"
  add(title, "MiniMeTitle")
  if str(req.tool_kind) ~= "" then
    add("kind: " .. window.oneline(req.tool_kind), "MiniMeToolKind")
  end
  for _, l in ipairs(input_lines(req.input, has_diff)) do
    add(l)
  end
  for _, item in ipairs(content) do
    add("")
    if type(item) ~= "table" then
      add(window.oneline(item))
    elseif item.type == "diff" then
      vim.list_extend(lines, diff_lines(item))
    elseif item.type == "text" or item.type == "content" then
      local text = item.text or (type(item.content) == "table" and item.content.text)
      vim.list_extend(lines, split(str(text)))
    else
      add("[" .. str(item.type) .. "]", "Comment")
    end
  end
  add("")
  local first = #lines
  local options = type(req.options) == "table" and req.options or {}
  for i, o in ipairs(options) do
    local key = i <= 9 and tostring(i) or " "
    local line = ("%s. %s"):format(key, window.oneline(o.name or o.option_id))
    add(line)
    marks[#marks + 1] = { #lines - 1, 0, #key + 1, "MiniMeOptionKey" }
    if option_hl[str(o.kind)] then
      marks[#marks + 1] = { #lines - 1, #key + 2, #line, option_hl[str(o.kind)] }
    end
  end
  if #options == 0 then
    add("(the agent sent no options: q dismisses)", "Comment")
  end
  return lines, marks, first, has_diff
end

--- The allow-once option `a` answers (remembered by the host for the session), if offered.
---@param req table
---@return string?
local function remember_option(req)
  for _, o in ipairs(type(req.options) == "table" and req.options or {}) do
    if str(o.kind) == "allow_once" then
      return o.option_id
    end
  end
  return nil
end

local function now_ms()
  return vim.uv.hrtime() / 1e6
end

local function win_config(p, lines)
  local widest = 0
  for _, l in ipairs(lines) do
    widest = math.max(widest, api.nvim_strwidth(l))
  end
  local n = #(type(p.req.options) == "table" and p.req.options or {})
  local footer = n > 0 and (" 1-%d choose · "):format(math.min(n, 9)) or " "
  if remember_option(p.req) then
    footer = footer .. "a always (this session) · "
  end
  footer = footer .. "q dismiss "
  local title = " minime · permission "
  if #queue > 0 then
    title = title .. ("(+%d waiting) "):format(#queue)
  end
  if p.deadline then
    local left = math.max(0, math.ceil((p.deadline - now_ms()) / 1000))
    title = title .. ("· rejected in %d s "):format(left)
  end
  local c = M.config
  local aw = window.area()
  local fit = math.max(widest + 1, 40, api.nvim_strwidth(footer) + 2, api.nvim_strwidth(title) + 2)
  local width = math.min(window.size(c.width, aw, 40), fit)
  return window.centered({
    width = width,
    height = c.height,
    border = c.border,
    zindex = 60,
    title = title,
    footer = footer,
  }, #lines)
end

local function record(msg)
  M.errors[#M.errors + 1] = tostring(msg)
  vim.notify("minime: permission answer failed: " .. tostring(msg), vim.log.levels.ERROR)
end

--- Close a prompt's float and give focus back.
---@param p minime.permission.Prompt
local function teardown(p)
  if p.timer then
    p.timer:stop()
    p.timer:close()
    p.timer = nil
  end
  local was_current = p.win and api.nvim_get_current_win() == p.win
  window.close(p.win)
  if p.buf and api.nvim_buf_is_valid(p.buf) then
    pcall(api.nvim_buf_delete, p.buf, { force = true })
  end
  if was_current and p.prev_win and api.nvim_win_is_valid(p.prev_win) then
    pcall(api.nvim_set_current_win, p.prev_win)
  end
end

local show_next, start_countdown

---@param p minime.permission.Prompt
---@param option_id string?
---@param remember? boolean
local function answer(p, option_id, remember)
  if p.done then
    return
  end
  p.done = true
  current = nil
  teardown(p)
  local ok, err = pcall(p.on_answer, option_id, remember)
  if not ok then
    record(err)
  end
  show_next()
end

---@param p minime.permission.Prompt
local function show(p)
  local lines, marks, first, has_diff = render(p.req)
  local buf = window.scratch("permission")
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  for _, m in ipairs(marks) do
    local opts = { end_col = m[3], hl_group = m[4], strict = false }
    api.nvim_buf_set_extmark(buf, ns, m[1], m[2], opts)
  end
  vim.bo[buf].modifiable = false
  if has_diff then
    vim.bo[buf].filetype = "diff"
  end
  p.buf = buf

  local options = type(p.req.options) == "table" and p.req.options or {}
  local map = function(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = "minime: " .. desc })
  end
  for i = 1, math.min(#options, 9) do
    map(tostring(i), function()
      answer(p, options[i].option_id)
    end, "answer " .. window.oneline(options[i].name))
  end
  map("<CR>", function()
    local i = api.nvim_win_get_cursor(0)[1] - first
    if options[i] then
      answer(p, options[i].option_id)
    end
  end, "answer the option under the cursor")
  for _, lhs in ipairs({ "q", "<Esc>" }) do
    map(lhs, function()
      answer(p, nil)
    end, "dismiss (reject)")
  end
  local allow = remember_option(p.req)
  if allow then
    map("a", function()
      answer(p, allow, true)
    end, "allow, and always for this session (client side)")
  end
  local timeout = tonumber(p.req.timeout)
  if timeout and timeout > 0 then
    p.deadline = now_ms() + timeout * 1000
  end

  p.prev_win = api.nvim_get_current_win()
  -- Not entered from the command line: the user is typing, and switching could fail there.
  local enter = M.config.focus and api.nvim_get_mode().mode:sub(1, 1) ~= "c"
  local ok, win = pcall(api.nvim_open_win, buf, enter, win_config(p, lines))
  if not ok and enter then
    enter = false
    win = api.nvim_open_win(buf, false, win_config(p, lines))
  elseif not ok then
    error(win, 0)
  end
  p.win = win
  -- Show the options: the cursor on the first one scrolls a long diff to its end.
  pcall(api.nvim_win_set_cursor, p.win, { math.min(first + 1, #lines), 0 })
  if enter then
    vim.cmd.stopinsert()
  end
  -- Closed some other way (:q, <C-w>c): a dismissal. Scheduled: no new float in WinClosed.
  api.nvim_create_autocmd("WinClosed", {
    pattern = tostring(p.win),
    once = true,
    callback = function()
      vim.schedule(function()
        answer(p, nil)
      end)
    end,
  })
  if p.deadline then
    start_countdown(p)
  end
end

show_next = function()
  while not current and #queue > 0 do
    local p = table.remove(queue, 1)
    current = p
    local ok, err = pcall(show, p)
    if not ok then
      -- A prompt that cannot be shown must still be answered, or the agent waits forever.
      M.errors[#M.errors + 1] = tostring(err)
      answer(p, nil)
    end
  end
end

local function retitle()
  if current and current.win and api.nvim_win_is_valid(current.win) then
    local lines = api.nvim_buf_get_lines(current.buf, 0, -1, false)
    api.nvim_win_set_config(current.win, win_config(current, lines))
  end
end

--- The title counts down each second; at zero the prompt is dismissed (the agent: rejected).
---@param p minime.permission.Prompt
start_countdown = function(p)
  p.timer = assert(vim.uv.new_timer())
  local function tick()
    if p.done then
      return
    end
    local left = p.deadline - now_ms()
    if left <= 0 then
      vim.notify(
        ("minime: no answer within %s s — rejected: %s"):format(
          tostring(p.req.timeout),
          window.oneline(str(p.req.title))
        ),
        vim.log.levels.WARN
      )
      answer(p, nil)
      return
    end
    retitle()
    -- Wake on the next whole second left (or at the deadline).
    local wait = math.ceil(left % 1000)
    p.timer:start(wait > 0 and wait or 1000, 0, vim.schedule_wrap(tick))
  end
  tick()
end

--- Ask the user; `on_answer(option_id|nil, remember)` is called exactly once (unless
--- `close(req.id)`).
---@param req table see the module header
---@param on_answer fun(option_id: string?, remember: boolean?)
function M.open(req, on_answer)
  queue[#queue + 1] = { req = req, on_answer = on_answer }
  if current then
    retitle()
  else
    show_next()
  end
end

--- Drop a prompt the host already answered (e.g. the turn was cancelled): its float closes,
--- or it leaves the queue; on_answer is not called. Returns whether it was pending.
---@param id any
---@return boolean
function M.close(id)
  id = str(id)
  if current and str(current.req.id) == id then
    local p = current
    p.done, current = true, nil
    teardown(p)
    show_next()
    return true
  end
  for i, p in ipairs(queue) do
    if str(p.req.id) == id then
      table.remove(queue, i)
      retitle()
      return true
    end
  end
  return false
end

--- Ids of the pending prompts, the shown one first.
---@return any[]
function M.pending()
  local ids = {}
  if current then
    ids[1] = current.req.id
  end
  for _, p in ipairs(queue) do
    ids[#ids + 1] = p.req.id
  end
  return ids
end

--- The float of the shown prompt, if any.
---@return integer?
function M.win()
  return current and current.win
end

--- Enter the float of the shown prompt (when config.focus is false).
---@return boolean
function M.focus()
  local win = M.win()
  if win and api.nvim_win_is_valid(win) then
    api.nvim_set_current_win(win)
    return true
  end
  return false
end

--- Merge options into the config (see minime.permission.Config).
---@param opts? minime.permission.Config|{}
function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
end

api.nvim_create_autocmd("VimResized", {
  group = api.nvim_create_augroup("minime.ui.permission", { clear = true }),
  callback = retitle,
})

return M
