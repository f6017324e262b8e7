--- What a permission float says: the request (title, kind, input, diffs) and what each answer
--- does. Any text an agent sends is made safe for a buffer line here (newlines in keys or
--- paths, control characters, huge values): a request that cannot be drawn cannot be seen.
local window = require("minime.ui.window")

local M = {}

--- Bytes of one line shown; the rest is counted, not dropped silently.
M.MAX_LINE = 20000
--- Lines of one request shown.
M.MAX_LINES = 5000

local function str(x)
  if x == nil or x == vim.NIL then
    return ""
  end
  return type(x) == "string" and x or tostring(x)
end
M.str = str

local function split(s)
  local lines = vim.split((s:gsub("\r\n", "\n")), "\n", { plain = true })
  if #lines > 1 and lines[#lines] == "" then
    lines[#lines] = nil
  end
  return lines
end

--- One buffer line from any text: a newline shows as ⏎ (nvim_buf_set_lines refuses it; other
--- control characters Neovim shows as ^X itself), an overlong line is cut at a character
--- boundary and says how much is left.
---@param s any
---@return string
function M.safe(s)
  s = str(s):gsub("\n", "⏎")
  if #s > M.MAX_LINE then
    local cut = M.MAX_LINE + vim.str_utf_start(s, M.MAX_LINE + 1)
    s = ("%s … [%d more bytes]"):format(s:sub(1, cut), #s - cut)
  end
  return s
end

-- What each option reaches, in words (after the agent's own label): permission_reach.lua.
local reach = require("minime.ui.permission_reach")

-- What `a` does: the host allows the same request (title, kind and input) without asking.
M.REMEMBER_LINE = "a. allow, and allow the same request (same input) until :MiniMeReset"

local option_hl = {
  allow_once = "MiniMeOptionAllow",
  allow_always = "MiniMeOptionAllow",
  reject_once = "MiniMeOptionReject",
  reject_always = "MiniMeOptionReject",
}

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

--- The request's title on one line, for a message ("a tool call" when it has none).
---@param req table
---@return string
function M.title_line(req)
  return M.safe(str(req.title) ~= "" and window.oneline(req.title) or "a tool call")
end

--- The allow-once option `a` answers (the host remembers the exact request for the session),
--- if offered; none when what the float shows came after the request (`req.filled`): the host
--- remembers the request as it was asked.
---@param req table
---@return string?
function M.remember_option(req)
  if req.filled then
    return nil
  end
  for _, o in ipairs(type(req.options) == "table" and req.options or {}) do
    if type(o) == "table" and str(o.kind) == "allow_once" then
      return o.option_id
    end
  end
  return nil
end

---@param req table
---@return table[]
function M.options(req)
  local options = {}
  for _, o in ipairs(type(req.options) == "table" and req.options or {}) do
    if type(o) == "table" then
      options[#options + 1] = o
    end
  end
  return options
end

---@param req table
---@return string[] lines
---@return table[] marks {row, col, end_col, group}
---@return integer first row of the options (0-based)
---@return boolean has_diff
function M.render(req)
  local lines, marks = {}, {}
  local function add(line, group)
    line = str(line):gsub("\n", "⏎")
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
  vim.list_extend(lines, input_lines(req.input, has_diff))
  for _, note in ipairs(type(req.skipped) == "table" and req.skipped or {}) do
    add("(" .. window.oneline(note) .. ")", "Comment")
  end
  for _, item in ipairs(content) do
    add("")
    if type(item) ~= "table" then
      add(window.oneline(item))
    elseif item.type == "diff" then
      local diff = require("minime.ui.diff")
      vim.list_extend(lines, diff.lines(diff.with_current(item, req.cwd), req.cwd))
    elseif item.type == "text" or item.type == "content" then
      local text = item.text or (type(item.content) == "table" and item.content.text)
      vim.list_extend(lines, split(str(text)))
    else
      add("[" .. str(item.type) .. "]", "Comment")
    end
  end
  -- Whatever came in above, each line is now one safe buffer line, and there are not too many.
  if #lines > M.MAX_LINES then
    local more = #lines - M.MAX_LINES
    lines = vim.list_slice(lines, 1, M.MAX_LINES)
    lines[#lines + 1] = ("… [%d more lines not shown: reject if unsure]"):format(more)
  end
  for i, l in ipairs(lines) do
    lines[i] = M.safe(l)
  end
  add("")
  local first = #lines
  local options = M.options(req)
  local own = reach.own_words(req)
  for i, o in ipairs(options) do
    local key = i <= 9 and tostring(i) or " "
    local kind = str(o.kind)
    local line = ("%s. %s"):format(key, window.oneline(o.name or o.option_id))
    local label_end = #line
    local words = reach.words(req, kind, own)
    if words then
      line = line .. " — " .. window.oneline(words)
    end
    add(line)
    marks[#marks + 1] = { #lines - 1, 0, #key + 1, "MiniMeOptionKey" }
    if option_hl[kind] then
      marks[#marks + 1] = { #lines - 1, #key + 2, label_end, option_hl[kind] }
    end
    if #line > label_end then
      marks[#marks + 1] = { #lines - 1, label_end, #line, "Comment" }
    end
  end
  if M.remember_option(req) then
    add(M.REMEMBER_LINE)
    marks[#marks + 1] = { #lines - 1, 0, 2, "MiniMeOptionKey" }
  end
  if #options == 0 then
    add("(the agent sent no options: q rejects)", "Comment")
  end
  for i = first + 1, #lines do
    lines[i] = M.safe(lines[i])
  end
  return lines, marks, first, has_diff
end

-- Its size and border (the float shrinks to its text): fractions (<= 1) of the editor, or cells.
local LAYOUT = { width = 0.7, height = 0.8, border = "rounded" }

--- The float's window config for request `req` drawn as `lines`: sized to them, its title
--- saying how many prompts wait behind it and the seconds `left` before it is rejected, its
--- footer the keys (dimmed while they do not work yet: not `live`).
---@param req table
---@param lines string[]
---@param state {waiting: integer, live: boolean, left?: integer, suffix: string} suffix: the
---   end of the title every asking float has (minime.ui.ask.draw)
---@return table
function M.win_config(req, lines, state)
  local widest = 0
  for _, l in ipairs(lines) do
    widest = math.max(widest, vim.api.nvim_strwidth(l))
  end
  local n = #M.options(req)
  local footer = n > 0 and (" 1-%d choose · "):format(math.min(n, 9)) or " "
  if M.remember_option(req) then
    footer = footer .. "a allow again · "
  end
  footer = footer .. "q reject "
  local title = " minime · permission " .. state.suffix
  local c = LAYOUT
  local aw = window.area()
  local fit =
    math.max(widest + 1, 40, vim.api.nvim_strwidth(footer) + 2, vim.api.nvim_strwidth(title) + 2)
  local width = math.min(window.size(c.width, aw, 40), fit)
  local rows = 0 -- screen rows of the text: a line wider than the float wraps
  for _, l in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.api.nvim_strwidth(l) / width))
  end
  return window.centered({
    width = width,
    height = c.height,
    border = c.border,
    zindex = 60,
    title = title,
    footer = footer,
  }, rows)
end

return M
