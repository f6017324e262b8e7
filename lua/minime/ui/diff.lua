--- A diff content item ({path, oldText?, newText}, as ACP agents send it) as unified diff
--- lines, its path relative to the session's cwd: shown by the permission float and the turn.
local M = {}

local function str(x)
  return type(x) == "string" and x or ""
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

--- The unified diff of one item: `--- a/x`, `+++ b/x` (an absolute path outside cwd as
--- itself, a new file from /dev/null), then the hunks.
---@param item table
---@param cwd? string
---@return string[]
function M.lines(item, cwd)
  local path, relative = M.relative(str(item.path), cwd)
  path = path:gsub("\r?\n", "⏎") -- one line of the diff, whatever the agent sent
  local function side(prefix)
    return relative and prefix .. path or path
  end
  local old, new = str(item.oldText), str(item.newText)
  local lines = {
    "--- " .. ((item.oldText == nil or item.oldText == vim.NIL) and "/dev/null" or side("a/")),
    "+++ " .. side("b/"),
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
