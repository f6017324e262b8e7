--- A diff content item ({path, oldText?, newText}, as ACP agents send it) as unified diff
--- lines, its path relative to the session's cwd: shown by the permission float and the turn.
--- Texts larger than MAX_BYTES are not compared (vim.diff would hold the editor): a note says so.
local M = {}

-- Old + new text beyond this is not diffed: comparing two different megabytes takes ~60 ms.
M.MAX_BYTES = 1024 * 1024

local function size(n)
  if n < 1024 then
    return ("%d bytes"):format(n)
  end
  return n < 1024 * 1024 and ("%.1f KB"):format(n / 1024) or ("%.1f MB"):format(n / 1048576)
end

--- The line shown instead of the diff of texts too large to compare (`old` nil: a new file).
---@param old? integer bytes before
---@param new integer bytes after
---@return string
function M.too_large(old, new)
  if not old then
    return ("(too large to show as a diff: a new file of %s)"):format(size(new))
  end
  return ("(too large to show as a diff: %s before, %s after)"):format(size(old), size(new))
end

local function str(x)
  return type(x) == "string" and x or ""
end

-- No oldText: a new file, as ACP has it.
local function no_old(item)
  return item.oldText == nil or item.oldText == vim.NIL
end

--- `path` relative to `cwd` when under it, else as it is.
---@param path string
---@param cwd? string
---@return string path, boolean relative
function M.relative(path, cwd)
  cwd = str(cwd):gsub("/+$", "")
  if cwd ~= "" and path:sub(1, #cwd + 1) == cwd .. "/" then
    return path:sub(#cwd + 2), true
  end
  return path, path:sub(1, 1) ~= "/"
end

--- The two header lines of one item's diff: `--- a/x`, `+++ b/x` (an absolute path outside cwd
--- as itself, a new file from /dev/null).
---@param item table
---@param cwd? string
---@return string[]
function M.header(item, cwd)
  local path, relative = M.relative(str(item.path), cwd)
  path = path:gsub("\r?\n", "⏎") -- one line of the diff, whatever the agent sent
  local function side(prefix)
    return relative and prefix .. path or path
  end
  return {
    "--- " .. (no_old(item) and "/dev/null" or side("a/")),
    "+++ " .. side("b/"),
  }
end

-- The text of `real` as the editor has it: its loaded buffer's lines, else the disk (nil when
-- neither, or when it is larger than MAX_BYTES: not diffed anyway).
local function current_text(real)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) or ""
    if name ~= "" and vim.bo[buf].buftype == "" and vim.uv.fs_realpath(name) == real then
      local eol = vim.bo[buf].eol or vim.bo[buf].fixeol
      local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      return table.concat(lines, "\n") .. (eol and "\n" or "")
    end
  end
  local stat = vim.uv.fs_stat(real)
  if not stat or stat.type ~= "file" or stat.size > M.MAX_BYTES then
    return nil
  end
  local fd = vim.uv.fs_open(real, "r", 0)
  if not fd then
    return nil
  end
  local data = vim.uv.fs_read(fd, stat.size, 0)
  vim.uv.fs_close(fd)
  return data
end

--- `item` as the float should compare it. An item without oldText means a new file, but
--- claude-agent-acp's Write sends none over an existing file too (it does not read the file
--- before asking): when `item.path` is a file under `cwd` (symlinks resolved), the copy returned
--- compares against its text as the editor has it now (unsaved edits included), and says so.
---@param item table
---@param cwd? string
---@return table
function M.with_current(item, cwd)
  local path, root = str(item.path), type(cwd) == "string" and vim.uv.fs_realpath(cwd)
  if not no_old(item) or path:sub(1, 1) ~= "/" or not root then
    return item
  end
  local real = vim.uv.fs_realpath(path)
  if not real or real:sub(1, #root + 1) ~= root .. "/" then
    return item
  end
  if require("minime.editor.deny").file(require("minime.config").options.deny, real, cwd) then
    return vim.tbl_extend("force", item, { denied = true }) -- never read (the deny list)
  end
  local text = current_text(real)
  if text == nil then
    return item
  end
  return vim.tbl_extend("force", item, { oldText = text, current = true })
end

--- The unified diff of one item: its header, then the hunks.
---@param item table
---@param cwd? string
---@return string[]
function M.lines(item, cwd)
  local lines = M.header(item, cwd)
  if item.current then
    lines[#lines + 1] = "(the agent sent no old text: compared with the file as it is now)"
  elseif item.denied then
    lines[#lines + 1] = "(the agent sent no old text; the file is on the deny list: not read)"
  end
  local old, new = str(item.oldText), str(item.newText)
  -- Without a final newline on both sides, the last line would show as changed.
  if old ~= "" and old:sub(-1) ~= "\n" then
    old = old .. "\n"
  end
  if new ~= "" and new:sub(-1) ~= "\n" then
    new = new .. "\n"
  end
  if #old + #new > M.MAX_BYTES then
    local new_file = no_old(item)
    lines[#lines + 1] = M.too_large(not new_file and #old or nil, #new)
    return lines
  end
  local diff = vim.text and vim.text.diff or vim.diff
  local ok, d = pcall(diff, old, new, { result_type = "unified", ctxlen = 3 })
  if not ok then
    lines[#lines + 1] = "(diff failed: " .. tostring(d):gsub("\n", " ") .. ")"
  elseif d == "" then
    lines[#lines + 1] = "(no changes)"
  else
    d = d:gsub("\n$", "")
    vim.list_extend(lines, vim.split(d, "\n", { plain = true }))
  end
  return lines
end

return M
