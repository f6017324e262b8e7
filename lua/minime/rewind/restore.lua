--- A rewind's writes and unlinks (inside minime.editor.async.run), each checked at its moment,
--- not when the plan was made nor before a confirmation waited: the path is still under the
--- thread's cwd and not denied (baseline.allowed: the scope's rule, resolving links), its
--- directory still the one it was (no link swapped in on the way), the file a regular file
--- (or, to be created, a free name), and its text still the one the plan saw. A file written
--- goes through its loaded buffer (one undo step, saved: editor/buffer_writer.lua), else to
--- disk (editor/file_writer.lua: O_EXCL for a new file, never through a link, the open file
--- checked to be the path meant). A missing directory is made, one level at a time, each
--- checked the same way.
local async = require("minime.editor.async")
local baseline = require("minime.review.baseline")
local files = require("minime.review.files")
local plan_mod = require("minime.rewind.plan")

local api, uv = vim.api, vim.uv

local M = {}

---@class minime.rewind.Done
---@field path string
---@field before string|false what the file was before the rewind wrote it
---@field after string|false what the rewind left

--- The directory of `path` made, under `cwd` (each level checked); nil, or why not.
local function make_dir(dir, cwd)
  if uv.fs_realpath(dir) == dir then
    return nil
  elseif dir == cwd or not vim.startswith(dir, cwd .. "/") then
    return "its directory is gone"
  end
  local problem = make_dir(vim.fs.dirname(dir), cwd)
  if problem then
    return problem
  end
  local ok, err = uv.fs_mkdir(dir, 493) -- 0755, less the umask
  if not ok and not tostring(err):match("^EEXIST") then
    return tostring(err)
  end
  return uv.fs_realpath(dir) ~= dir and "its directory is no longer where it was (a link?)" or nil
end

--- Why `file` must not be touched now (nil: it may).
---@param file minime.rewind.File
---@param cwd string
---@param buffers table<string, integer>
---@param allowed fun(path: string): boolean baseline.allowed(cwd)
local function problem(file, cwd, buffers, allowed)
  if not allowed(file.path) then
    return "no longer a file under the thread's directory"
  end
  if file.kind == "create" then
    local missing = make_dir(vim.fs.dirname(file.path), cwd)
    if missing then
      return missing
    end
  end
  local moved = files.moved(file.path, file.kind == "create")
  if moved then
    return moved
  end
  if plan_mod.now(file.path, buffers) ~= file.now then
    return "it changed since the rewind looked"
  end
  return nil
end

--- Close the undo block of `buf` (setting 'undolevels' does): a change made through the API
--- joins the last one otherwise, and one `u` would take back the agent's write too.
local function undo_break(buf)
  api.nvim_buf_call(buf, function()
    vim.cmd("let &l:undolevels = &l:undolevels")
  end)
end

--- `text` into the loaded buffer `buf` (one undo step of its own) and saved.
local function through_buffer(buf, text)
  undo_break(buf)
  require("minime.editor.buffer_writer").write(buf, text)
  undo_break(buf)
end

--- Apply `file` (checked first, see the header): nil when done, else why not.
---@param file minime.rewind.File
---@param cwd string
---@param buffers table<string, integer>
---@param allowed? fun(path: string): boolean
---@return string?
function M.one(file, cwd, buffers, allowed)
  local why = problem(file, cwd, buffers, allowed or baseline.allowed(cwd))
  if why then
    return why
  end
  local buf = buffers[file.path]
  if buf and not api.nvim_buf_is_valid(buf) then
    buf = nil
  end
  if file.kind == "remove" then
    local ok, err = uv.fs_unlink(file.path)
    if not ok then
      return tostring(err)
    end
    if buf then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
    return nil
  end
  local text = file.target --[[@as string]]
  if buf and file.kind == "restore" then
    local ok, err = pcall(through_buffer, buf, text)
    return not ok and (type(err) == "table" and err.message or tostring(err)) or nil
  end
  local err = require("minime.editor.file_writer").write(file.path, text)
  if err then
    return err
  end
  if buf and not vim.bo[buf].modified then -- a buffer of the file that was deleted
    pcall(api.nvim_buf_call, buf, function()
      vim.cmd("silent keepalt edit!")
    end)
  end
  return nil
end

--- Apply `list` (inside async.run), yielding to the main loop between files: what was done
--- (for an undo) and what was not, with why.
---@param list minime.rewind.File[]
---@param cwd string
---@return minime.rewind.Done[] done, {rel: string, why: string}[] failed
function M.all(list, cwd)
  local done, failed = {}, {}
  local buffers, allowed = plan_mod.buffers(), baseline.allowed(cwd)
  for _, file in ipairs(list) do
    async.yield()
    local why = M.one(file, cwd, buffers, allowed)
    if why then
      failed[#failed + 1] = { rel = file.rel, why = why }
    else
      done[#done + 1] = { path = file.path, before = file.now, after = file.target }
    end
  end
  return done, failed
end

return M
