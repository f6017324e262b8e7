--- The answer's fenced code blocks: `gy` yanks the one under the cursor, `gs` opens it in a
--- scratch buffer whose 'filetype' is the block's language. A block is CommonMark's fenced
--- code: a line of three or more backticks (or tildes), indented less than four columns,
--- whose first word after the fence is the language, up to a line of the same fence
--- character at least as long (or the end of the conversation).
local api = vim.api

local M = {}

--- The fence a line opens or closes: its character, its length and the text after it.
---@param line string
---@return string? char, integer? len, string? info
local function fence(line)
  local indent, marks, info = line:match("^( *)(```+)(.*)$")
  if not marks then
    indent, marks, info = line:match("^( *)(~~~+)(.*)$")
  end
  if not marks or #indent > 3 then
    return nil
  end
  if marks:sub(1, 1) == "`" and info:find("`", 1, true) then
    return nil -- a backtick fence's info string holds no backtick (inline code instead)
  end
  return marks:sub(1, 1), #marks, info
end

---@class minime.turn.Block
---@field lines string[] the block's text, without its fences
---@field lang? string the first word of its info string
---@field first integer its opening fence's line (1-based)

--- The fenced block around line `row` (1-based) of `lines`, fences included, or nil.
---@param lines string[]
---@param row integer
---@return minime.turn.Block?
function M.at(lines, row)
  local open -- {line, char, len, info} of the block open at the line read
  for i = 1, #lines do
    local char, len, info = fence(lines[i])
    if open then
      if char == open.char and len >= open.len and vim.trim(info) == "" then
        if row >= open.line and row <= i then
          return {
            lines = vim.list_slice(lines, open.line + 1, i - 1),
            lang = open.info:match("^%s*([%w_+#.-]+)"),
            first = open.line,
          }
        end
        open = nil
      end
    elseif char then
      if i > row then
        return nil
      end
      open = { line = i, char = char, len = len, info = info }
    end
  end
  if open and row >= open.line then -- still streaming: up to the end
    return {
      lines = vim.list_slice(lines, open.line + 1, #lines),
      lang = open.info:match("^%s*([%w_+#.-]+)"),
      first = open.line,
    }
  end
  return nil
end

--- The block under the cursor of the current window, or nil (said).
---@return minime.turn.Block?
local function under_cursor()
  local row = api.nvim_win_get_cursor(0)[1]
  local block = M.at(api.nvim_buf_get_lines(0, 0, -1, false), row)
  if not block then
    require("minime.ui.say").say("minime: no code block under the cursor", vim.log.levels.INFO)
  end
  return block
end

--- Yank the block under the cursor (linewise) into the unnamed register, and into `+` where
--- Neovim has a clipboard (has('clipboard')).
function M.yank()
  local block = under_cursor()
  if not block then
    return
  end
  vim.fn.setreg('"', block.lines, "l")
  local where = '"'
  if vim.fn.has("clipboard") == 1 and pcall(vim.fn.setreg, "+", block.lines, "l") then
    where = '" and +'
  end
  require("minime.ui.say").say(
    ("minime: yanked %d line%s%s to %s"):format(
      #block.lines,
      #block.lines == 1 and "" or "s",
      block.lang and (" of " .. block.lang) or "",
      where
    ),
    vim.log.levels.INFO
  )
end

--- A window for the scratch buffer: a code window split above (never the panel's or the
--- float's place), the panel split at its left when it is the only window.
---@return integer win the window entered
local function code_window()
  require("minime.ui.bottom").clear_the_view() -- the float hides the code: hidden (it goes on)
  local function code(win)
    return win ~= 0
      and api.nvim_win_is_valid(win)
      and api.nvim_win_get_config(win).relative == ""
      and vim.b[api.nvim_win_get_buf(win)].minime ~= "turn"
  end
  local target = vim.fn.win_getid(vim.fn.winnr("#"))
  if not code(target) then
    target = 0
    for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
      if code(win) then
        target = win
        break
      end
    end
  end
  if target ~= 0 then
    api.nvim_set_current_win(target)
    vim.cmd("aboveleft new")
  else
    vim.cmd("vertical aboveleft new")
  end
  return api.nvim_get_current_win()
end

--- Open the block under the cursor in a new scratch buffer ('buftype' nofile, wiped when
--- hidden) whose 'filetype' is the block's language.
function M.scratch()
  local block = under_cursor()
  if not block then
    return
  end
  local ok, err = pcall(code_window)
  if not ok then
    require("minime.ui.say").say(
      "minime: no room for the code block: " .. tostring(err):gsub("^.-(E%d+)", "%1"),
      vim.log.levels.WARN
    )
    return
  end
  local buf = api.nvim_get_current_buf()
  local bo = vim.bo[buf]
  bo.buftype, bo.bufhidden, bo.swapfile = "nofile", "wipe", false
  api.nvim_buf_set_lines(buf, 0, -1, false, block.lines)
  if block.lang then
    local ft = vim.filetype.match({ filename = "block." .. block.lang })
    pcall(function()
      bo.filetype = ft or block.lang
    end)
  end
end

--- The keys of the conversation's buffer `buf`.
---@param buf integer
function M.map_keys(buf)
  vim.keymap.set("n", "gy", M.yank, { buffer = buf, desc = "minime: yank the code block" })
  vim.keymap.set("n", "gs", M.scratch, {
    buffer = buf,
    desc = "minime: open the code block in a scratch buffer",
  })
end

return M
