--- Path spellings to real absolute paths: symlinks and `..` resolved by the system, also for
--- a file that does not exist yet, and the `$VAR` / `~` spellings a user types. Nothing here
--- knows the session's scope; scope.lua decides what a real path may be shown.
local uv = vim.uv or vim.loop

local M = {}

--- The names of `path`, without empty names and `.`.
---@param path string
---@return string[]
function M.split(path)
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return parts
end

--- Directory `dir` (absolute) followed by the names `rest`.
---@param dir string
---@param rest string[]
---@return string
function M.join(dir, rest)
  if #rest == 0 then
    return dir
  end
  return (dir == "/" and "" or dir) .. "/" .. table.concat(rest, "/")
end

--- The last name of `path` ("" when it ends in "/").
---@param path string
---@return string
function M.basename(path)
  return path:match("[^/]*$", (path:find("/[^/]*$") or 0) + 1)
end

--- The real absolute path of `path` (absolute): symlinks and `..` resolved by the system. For a
--- file that does not exist yet (a new unsaved buffer), the nearest existing ancestor is
--- resolved and the remaining names appended; a `..` among those remaining names, or a first
--- remaining name that exists (a dangling symlink), cannot be placed safely and gives nil.
---@param path string
---@return string|nil
function M.realpath(path)
  if type(path) ~= "string" or path:sub(1, 1) ~= "/" then
    return nil
  end
  local real = uv.fs_realpath(path)
  if real then
    return real
  end
  local parts = M.split(path)
  for i = #parts - 1, 0, -1 do
    local base = uv.fs_realpath("/" .. table.concat(parts, "/", 1, i))
    if base then
      local rest = { unpack(parts, i + 1) }
      -- The first missing name exists after all: a dangling symlink (its target may be created
      -- outside), a loop, or no permission. None of them is safe to place.
      if uv.fs_lstat(M.join(base, { rest[1] })) then
        return nil
      end
      for _, part in ipairs(rest) do
        if part == ".." then
          return nil
        end
      end
      return M.join(base, rest)
    end
  end
  return nil
end

--- `text` with $VAR and ${VAR} replaced by the environment's values and a leading `~` by the
--- home directory, as a shell would; nil when a variable is unset or the spelling is one we do
--- not follow (`${VAR:-x}`, `$(cmd)`, `~user`): such a word may name any place.
---@param text string
---@return string|nil
function M.expand(text)
  if text:find("%$[^%w_{]") or text:find("%${[^}]*[^%w_}]") or text:match("^~[^/]") then
    return nil
  end
  local unknown = false
  local out = text:gsub("%${?([%a_][%w_]*)}?", function(name)
    local value = vim.env[name]
    if type(value) ~= "string" or value == "" then
      unknown = true
      return ""
    end
    return value
  end)
  if unknown or out:find("%$") then
    return nil
  end
  if out == "~" or out:sub(1, 2) == "~/" then
    out = (uv.os_homedir() or "/") .. out:sub(2)
  end
  return out
end

--- The loaded normal buffer whose file is `real` (a resolved path), if any: by exact name
--- after resolving it, never by vim.fn.bufnr(), which matches file patterns and partial names
--- (`.e` found the loaded `.env`).
---@param real string
---@return integer?
function M.loaded_buffer(real)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = vim.api.nvim_buf_get_name(buf)
      if name ~= "" and M.realpath(name) == real then
        return buf
      end
    end
  end
  return nil
end

--- A loaded buffer's text as writing it would give (unsaved edits included).
---@param buf integer
---@return string
function M.buffer_text(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local eol = vim.bo[buf].eol or vim.bo[buf].fixeol
  return table.concat(lines, "\n") .. (eol and "\n" or "")
end

return M
