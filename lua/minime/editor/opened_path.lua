--- Which file an open descriptor really is. The scope check resolves a path before the file is
--- opened; in between, an agent (it runs commands in the cwd) could swap the file, or one of its
--- directories, for a symlink out of the cwd, and the open would follow it. On Linux
--- /proc/self/fd/<fd> names the file actually opened, so a read or write goes ahead only when
--- that is the path the scope check resolved. (Kernel-side, never a disk wait: run in place.)
---
---   opened_path.matches(fd, real)  -- true, false (another file), or nil (cannot tell here)
local uv = vim.uv or vim.loop

local M = {}

---@param fd integer
---@param real string the real path the scope check accepted
---@return boolean|nil
function M.matches(fd, real)
  local target = uv.fs_readlink("/proc/self/fd/" .. fd)
  if not target then
    return nil
  end
  return target == real
end

return M
