---@mod minime.proctree The processes of our agents, found through /proc, ended whole (Linux).
---
--- The Lua twin of rplugin/python3/minime/proctree.py, for when the Python host cannot end its
--- agents itself: Neovim quits (VimLeavePre) or the host died. Agents run their tool commands in
--- sessions of their own, and such commands outlive their parents, re-parented to init. So the
--- tree is the closure of its roots under "parent in the tree", "session or process group led
--- (once) by a member", plus every process whose environment carries `tag` (the host's
--- environment has it, and so every agent and everything they start). Never in it: Neovim, its
--- session and its process group. Elsewhere than Linux it is empty.
local M = {}

---@class minime.Proc
---@field pid integer
---@field ppid integer
---@field pgid integer
---@field sid integer
---@field state string
---@field start string its start time: a reused pid is not the same process

local function read(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local data = f:read("*a")
  f:close()
  return data
end

---@param pid integer
---@return minime.Proc?
function M.read(pid)
  local stat = read("/proc/" .. pid .. "/stat")
  if not stat then
    return nil
  end
  -- The command name (field 2) may hold spaces and parentheses: split after its last ")".
  local rest = stat:match(".*%)%s(.*)")
  if not rest then
    return nil
  end
  local f = vim.split(vim.trim(rest), "%s+")
  if #f < 20 then
    return nil
  end
  return {
    pid = pid,
    state = f[1],
    ppid = tonumber(f[2]),
    pgid = tonumber(f[3]),
    sid = tonumber(f[4]),
    start = f[20],
  }
end

local function all()
  local procs = {}
  local dir = vim.uv.fs_scandir("/proc")
  if not dir then
    return procs
  end
  while true do
    local name = vim.uv.fs_scandir_next(dir)
    if not name then
      break
    end
    local pid = tonumber(name)
    local p = pid and M.read(pid)
    if p and p.state ~= "Z" then
      table.insert(procs, p)
    end
  end
  return procs
end

--- The live members of the tree of `roots` (pid -> start time) and of the processes whose
--- environment holds `tag` ("NAME=value"). A root's pid also counts as a session and group id
--- once its process is gone (no new process gets a pid still used as one) — unless a process
--- of another start time now has that pid: then it is not ours at all.
---@param roots table<integer, string|false> false: the start time is not known
---@param tag string?
---@return table<integer, minime.Proc>
function M.snapshot(roots, tag)
  local me = vim.fn.getpid()
  local mine = M.read(me) or { sid = -1, pgid = -1 }
  local procs = all()
  local by_pid, members, leaders = {}, {}, {}
  for _, p in ipairs(procs) do
    by_pid[p.pid] = p
  end
  for pid, start in pairs(roots) do
    local now = by_pid[pid]
    if not now then
      leaders[pid] = true
    elseif now.start == start and pid ~= me then
      members[pid] = now
      leaders[pid] = true
    end
  end
  if tag then
    for _, p in ipairs(procs) do
      if p.pid ~= me and not members[p.pid] then
        local env = read("/proc/" .. p.pid .. "/environ")
        if env and ("\0" .. env):find("\0" .. tag .. "\0", 1, true) then
          members[p.pid] = p
          leaders[p.pid] = true
        end
      end
    end
  end
  local grown = true
  while grown do
    grown = false
    for _, p in ipairs(procs) do
      if
        not members[p.pid]
        and p.pid ~= me
        and (
          members[p.ppid]
          or (leaders[p.sid] and p.sid ~= mine.sid)
          or (leaders[p.pgid] and p.pgid ~= mine.pgid)
        )
      then
        members[p.pid] = p
        leaders[p.pid] = true
        grown = true
      end
    end
  end
  return members
end

--- The members that have not exited (a zombie has).
---@param members table<integer, minime.Proc>
---@return table<integer, minime.Proc>
function M.alive(members)
  local live = {}
  for pid, seen in pairs(members) do
    local now = M.read(pid)
    if now and now.start == seen.start and now.state ~= "Z" then
      live[pid] = seen
    end
  end
  return live
end

--- Send `sig` to each member still alive (and still the process the snapshot saw).
---@param members table<integer, minime.Proc>
---@param sig string
function M.signal(members, sig)
  for pid in pairs(M.alive(members)) do
    pcall(vim.uv.kill, pid, sig)
  end
end

--- SIGTERM every member as at one instant: all stopped, then signalled, then continued (see
--- terminate_all in rplugin/python3/minime/proctree.py: signalled one by one, a shell whose
--- command got its SIGTERM first ran its next line before its own arrived).
---@param members table<integer, minime.Proc>
function M.terminate(members)
  M.signal(members, "sigstop")
  M.signal(members, "sigterm")
  M.signal(members, "sigcont")
end

return M
