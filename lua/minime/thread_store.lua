--- The thread list kept across restarts (:h minime-threads-saved): one small JSON file per
--- thread in `stdpath("data")/minime/threads/<id>.json` — its agent definition, session id,
--- title, cwd and worktree, what reopening it takes. Why one file each: two Neovims write
--- only their own threads' files, each replaced whole (written beside it, then renamed), so
--- neither can corrupt or undo the other's; no lock is needed.
---
--- Every read and write goes through libuv's thread pool (never Neovim's main loop); nothing
--- is read at start-up: `load` runs when the list is first needed (:MiniMeThreads). Bounded:
--- M.MAX threads without a worktree are kept (the oldest go first); a thread with a worktree
--- stays until it is closed, so no worktree is ever forgotten.
local uv = vim.uv

local M = {}

--- Threads kept without a worktree.
M.MAX = 100
-- A file larger than this is not a record of ours: skipped.
local MAX_BYTES = 65536

local dir

--- The directory of the records (found once, on the main loop: libuv's callbacks use it).
---@return string
function M.dir()
  dir = dir or vim.fn.stdpath("data") .. "/minime/threads"
  return dir
end

---@class minime.ThreadRecord
---@field id string
---@field cwd string where it works (its worktree's directory, when it has one)
---@field agent string the agent definition's name ("" or "inline": the configured agent)
---@field label string
---@field title string
---@field session_id? string the session to reopen
---@field worktree? minime.Worktree
---@field updated number seconds since the epoch
---@field pid? integer the Neovim that wrote it last

local function is_str(v)
  return type(v) == "string"
end

--- `data` as a record, or nil when it is not one (any field of the wrong type).
---@param data any
---@return minime.ThreadRecord?
function M.check(data)
  if type(data) ~= "table" or not is_str(data.id) or not data.id:match("^t[%w%-]+$") then
    return nil
  end
  if not is_str(data.cwd) or data.cwd:sub(1, 1) ~= "/" then
    return nil
  end
  local wt = data.worktree
  if wt ~= nil and wt ~= vim.NIL then
    for _, key in ipairs({ "path", "branch", "root", "base", "common_dir", "format" }) do
      if type(wt) ~= "table" or not is_str(wt[key]) then
        return nil
      end
    end
  else
    wt = nil
  end
  local sid = data.session_id
  return {
    id = data.id,
    cwd = data.cwd,
    agent = is_str(data.agent) and data.agent or "",
    label = is_str(data.label) and data.label or "",
    title = is_str(data.title) and data.title or "",
    session_id = is_str(sid) and sid ~= "" and sid or nil,
    worktree = wt,
    updated = type(data.updated) == "number" and data.updated or 0,
    pid = type(data.pid) == "number" and data.pid or nil,
  }
end

--- What is kept of thread `t` across restarts, or nil when nothing could be reopened: no
--- session yet and no worktree.
---@param t minime.Thread
---@return minime.ThreadRecord?
function M.record_of(t)
  local sid = t.session_id or t.last_session_id
  if not sid and not t.worktree then
    return nil
  end
  return {
    id = t.id,
    cwd = t.cwd,
    agent = t.agent ~= "" and t.agent or (t.definition or ""),
    label = t.label,
    title = t.title,
    session_id = sid,
    worktree = t.worktree,
    updated = t.last_activity,
    pid = uv.os_getpid(),
  }
end

-- id -> the JSON last written (or being written); id -> what waits for that write: a newer
-- JSON, or false (removed).
local written, waiting, writing = {}, {}, {}
local serial = 0
local pruning = false
-- Removals in flight.
local unlinking = 0

--- Remove `path` off the main loop (counted until it is done: see M.idle).
local function unlink(path)
  unlinking = unlinking + 1
  uv.fs_unlink(path, function()
    unlinking = unlinking - 1
  end)
end

local function mkdirs(done)
  local threads = M.dir()
  uv.fs_mkdir(vim.fs.dirname(threads), 448, function()
    uv.fs_mkdir(threads, 448, function()
      done(threads)
    end)
  end)
end

local prune

--- Write `json` as record `id`: into a new file beside it, renamed over it (a reader sees the
--- old or the new one, never half). One write per id at a time; the newest waits.
local function write(id, json)
  if writing[id] then
    waiting[id] = json
    return
  end
  writing[id] = true
  serial = serial + 1
  mkdirs(function(threads)
    local path = ("%s/%s.json"):format(threads, id)
    local tmp = ("%s.%d.%d.tmp"):format(path, uv.os_getpid(), serial)
    --- `landed`: the file now holds `json` (then the same JSON waiting is not written again).
    local function finish(landed)
      writing[id] = nil
      local next_json = waiting[id]
      waiting[id] = nil
      if next_json == false then -- removed while it was written
        unlink(path)
      elseif next_json and not (landed and next_json == json) then
        write(id, next_json)
      else
        prune()
      end
    end
    uv.fs_open(tmp, "wx", 384, function(_, fd)
      if not fd then
        return finish()
      end
      uv.fs_write(fd, json, 0, function()
        uv.fs_close(fd, function()
          uv.fs_rename(tmp, path, function(rerr)
            if rerr then
              unlink(tmp)
            end
            finish(not rerr)
          end)
        end)
      end)
    end)
  end)
end

--- Keep record `record` (written off the main loop; nothing when it did not change).
---@param record minime.ThreadRecord
function M.save(record)
  local json = vim.json.encode(record)
  if written[record.id] == json then
    return
  end
  written[record.id] = json
  write(record.id, json)
end

--- Forget record `id` (its file removed, off the main loop, after a write of it in flight).
---@param id string
function M.remove(id)
  written[id] = nil
  if writing[id] then
    waiting[id] = false
    return
  end
  waiting[id] = nil
  unlink(("%s/%s.json"):format(M.dir(), id))
end

--- Read the regular file `path` (at most MAX_BYTES) without ever blocking: done(text|nil), in
--- libuv's callback. Opened O_NONBLOCK and checked on the open file: a FIFO put there is
--- skipped.
local function read_small(path, done)
  local c = uv.constants
  uv.fs_open(path, bit.bor(c.O_RDONLY, c.O_NONBLOCK), 0, function(_, fd)
    if not fd then
      return done(nil)
    end
    uv.fs_fstat(fd, function(_, st)
      if not st or st.type ~= "file" or st.size > MAX_BYTES then
        return uv.fs_close(fd, function()
          done(nil)
        end)
      end
      uv.fs_read(fd, st.size, 0, function(_, data)
        uv.fs_close(fd, function()
          done(data)
        end)
      end)
    end)
  end)
end

--- No write or removal of this Neovim's is in flight (its records on disk are its last word).
---@return boolean
function M.idle()
  return next(writing) == nil and unlinking == 0 and not pruning
end

--- Every record kept (of this Neovim and of others), newest last: done(records) on the main
--- loop. Files that are not records are skipped.
---@param done fun(records: minime.ThreadRecord[])
function M.load(done)
  local texts, pending, listed = {}, 1, false
  local function settle()
    pending = pending - 1
    if pending > 0 or not listed then
      return
    end
    vim.schedule(function()
      local records = {}
      for name, text in pairs(texts) do
        local ok, data = pcall(vim.json.decode, text)
        local record = ok and M.check(data) or nil
        if record and name == record.id .. ".json" then
          records[#records + 1] = record
          written[record.id] = written[record.id] or text
        end
      end
      table.sort(records, function(a, b)
        return a.updated < b.updated
      end)
      done(records)
    end)
  end
  uv.fs_scandir(M.dir(), function(_, handle)
    while handle do
      local name, kind = uv.fs_scandir_next(handle)
      if not name then
        break
      end
      if kind == "file" and name:match("^t[%w%-]+%.json$") then
        pending = pending + 1
        read_small(M.dir() .. "/" .. name, function(text)
          texts[name] = text
          settle()
        end)
      end
    end
    listed = true
    settle()
  end)
end

--- Past M.MAX records without a worktree, the oldest go (run after a write; off the loop).
prune = function()
  if pruning then
    return
  end
  pruning = true
  uv.fs_scandir(M.dir(), function(_, handle)
    local count = 0
    while handle and uv.fs_scandir_next(handle) do
      count = count + 1
    end
    if count <= M.MAX then
      pruning = false
      return
    end
    M.load(function(records)
      local plain = vim.tbl_filter(function(r)
        return r.worktree == nil
      end, records)
      for i = 1, #plain - M.MAX do
        M.remove(plain[i].id)
      end
      pruning = false
    end)
  end)
end

return M
