--- The review's baseline: what every file a turn may change looked like when the turn began.
---
--- Taken before the turn's prompt is sent (M.take: the host asks, and waits for `done` before
--- it sends the prompt — at most `bound_ms`), so nothing the agent does in that turn is part
--- of it:
---   * the text of each loaded buffer under the cwd, unsaved edits included: the review never
---     shows the user's own edits as the agent's;
---   * in a git work tree, a snapshot of the whole tree (minime.review.git), off the main loop.
--- Then, for a file the turn names (a tool call's diff path or locations, a permission
--- request's, an fs write; see M.name) and not yet recorded, its text at that moment — when it
--- has not changed since the turn began. One that has (the agent wrote it, then named it) is
--- never recorded as it is now: its baseline is the turn's snapshot (git), else the last turn
--- that holds its text, else the review says it has none (M.unsure).
---
--- State, per conversation `key` (its thread id): the session record
--- holds the `cwd` its files live in, and its turns by number, each with its snapshot's tree
--- and texts: each turn's checkpoint, kept for the session (a rewind restores one; in git the
--- trees are referenced so that git gc keeps them, review/checkpoints.lua). At a turn's end
--- its files are recorded again (`ended_tree`, or outside git `ended`): what the user changes
--- after it is told from what the agent did. Texts are shared, never copied: a buffer not
--- changed since the last turn (same buffer, same changedtick) or a file read with the same
--- text is the earlier turn's table.
local checkpoints = require("minime.review.checkpoints")
local git = require("minime.review.git")

local api, uv = vim.api, vim.uv

local M = {}

---@class minime.review.Turn
---@field n integer the turn's number in this conversation, from 1
---@field agent string
---@field at number when it began, in seconds of the real-time clock (ctime's)
---@field tree? string the git snapshot at the start (nil: outside git, or it failed)
---@field root? string the git work tree's top directory
---@field repo? minime.git.Repo
---@field pending boolean the snapshot still runs
---@field late? boolean the snapshot was written after the prompt went (git too slow)
---@field failed? string why git could not take the snapshot
---@field texts table<string, string[]|false> a file's lines when first seen (false: absent)
---@field stamps table<string, string> what a text was taken from: an unsaved buffer's
--- "<buf>:<changedtick>", else the file's "<ino>:<size>:<mtime>" (the same: the same text)
---@field unsure table<string, true> files changed before the turn named them, no text known
---@field ended_at? number when it ended (the real-time clock's seconds)
---@field ended_tree? string the git snapshot at its end
---@field ended? table<string, string[]|false> outside git: its files' lines at its end

---@class minime.review.Session
---@field cwd string where its files live
---@field turns minime.review.Turn[] turns[i].n == i
---@field count integer the turns begun
---@field rewinding? boolean a rewind writes its files: a new baseline waits (`after`)
---@field after? fun()[] baselines waiting for the rewind

---@type table<string, minime.review.Session>
M.sessions = {}

--- Turns whose snapshot ran, for tests and the bench: key -> count.
---@type table<string, integer>
M.snapshots = {}

---@param cwd string
---@param path string absolute
---@return string? rel the path relative to cwd, nil when not under it
local function under(cwd, path)
  local rel = vim.fs.relpath(cwd, path)
  if rel == nil or rel == "." or rel:match("^%.%./") then
    return nil
  end
  return rel
end

--- The check of what the review may read and show under `cwd`: fn(path) (absolute) is true
--- when `path` is in scope and not denied (editor/scope.lua: the one rule of what leaves the
--- editor; a `.env` is never loaded, read or listed by the review).
---@param cwd string
---@return fun(path: string): boolean
function M.allowed(cwd)
  local ok, scope = pcall(require("minime.editor.scope").new, {
    cwd = cwd,
    deny = require("minime.config").options.deny,
  })
  return function(path)
    return ok and scope:file(path) ~= nil
  end
end

--- Files larger than this are not recorded (a review of them is not worth the read).
M.MAX_BYTES = 4 * 1024 * 1024
M.LIMITS = { read_timeout_ms = 2000, max_file_bytes = M.MAX_BYTES }

--- The lines of a regular file on disk; false when absent; nil when it is no regular file
--- (a fifo would block the open), too big, or unreadable. Checked before it is opened, and on
--- the open file (opened non-blocking: a FIFO put in its place since cannot hold the editor).
---@param path string
---@return string[]|false|nil
function M.disk(path)
  local stat = uv.fs_stat(path)
  if not stat then
    return false
  elseif stat.type ~= "file" or stat.size > M.MAX_BYTES then
    return nil
  end
  local fd = uv.fs_open(path, bit.bor(uv.constants.O_RDONLY, uv.constants.O_NONBLOCK), 0)
  if not fd then
    return nil
  end
  local st = uv.fs_fstat(fd)
  local data = st and st.type == "file" and uv.fs_read(fd, math.min(st.size, M.MAX_BYTES), 0)
  uv.fs_close(fd)
  return data and M.lines(data) or nil
end

--- A file's bytes as lines; `noeol` set when its last line has no newline (an empty file
--- too), so that rewind/plan.lua's text(lines) gives the very bytes back.
---@param data string
---@return string[]
function M.lines(data)
  local lines = vim.split(data:gsub("\n$", ""), "\n", { plain = true })
  if data:sub(-1) ~= "\n" then
    lines.noeol = true
  end
  return lines
end

--- The lines of `path` now: its loaded buffer's, else the disk's (see M.disk).
---@param path string
---@return string[]|false|nil
function M.current(path)
  local buf = require("minime.editor.paths").loaded_buffer(path)
  if buf then
    return api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  return M.disk(path)
end

--- The last turn of the conversation `key` (a thread id; a cwd: its current thread).
---@param key string
---@return minime.review.Turn?
function M.last(key)
  local s = require("minime.threads").pick(M.sessions, key)
  return s and s.turns[#s.turns] or nil
end

--- The text of `path` an earlier turn holds, when it equals `lines`: the one table kept.
---@param session minime.review.Session
---@param path string
---@param lines string[]|false|nil
local function shared(session, path, lines)
  if type(lines) ~= "table" then
    return lines
  end
  for i = #session.turns - 1, 1, -1 do
    local earlier = session.turns[i].texts[path]
    if earlier ~= nil then
      return vim.deep_equal(earlier, lines) and earlier or lines
    end
  end
  return lines
end

--- Record the baseline of a new turn of conversation `key`, whose files live in `cwd`; done()
--- once it is complete (the snapshot written, or git failed). `bound_ms`: how long the host
--- waits for it; a snapshot written later is marked `late`.
---@param key string
---@param cwd string
---@param agent string
---@param bound_ms integer
---@param done fun()
function M.take(key, cwd, agent, bound_ms, done)
  local session = M.sessions[key]
  if not session or session.cwd ~= cwd then
    checkpoints.drop(key)
    session = { cwd = cwd, turns = {}, count = 0 }
    M.sessions[key] = session
  end
  if session.rewinding then -- after the rewind's writes, which are not the agent's
    session.after = session.after or {}
    table.insert(session.after, function()
      M.take(key, cwd, agent, bound_ms, done)
    end)
    return
  end
  local turns = session.turns
  local previous = turns[#turns]
  session.count = session.count + 1
  local now = uv.clock_gettime("realtime")
  local turn = { n = session.count, agent = agent, at = now.sec + now.nsec / 1e9, pending = true }
  turn.texts, turn.unsure, turn.stamps = {}, {}, {}
  turns[#turns + 1] = turn
  local allowed, from_disk = M.allowed(cwd), {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local real = require("minime.editor.paths").realpath(api.nvim_buf_get_name(buf))
      local size = api.nvim_buf_get_offset(buf, api.nvim_buf_line_count(buf))
      -- A huge log is not copied; a denied file (.env) never read.
      if real and under(cwd, real) and size <= M.MAX_BYTES and allowed(real) then
        -- Unsaved edits: the buffer's text. Else the file's: a buffer not reloaded yet
        -- after a write on disk holds an older text.
        local modified = vim.bo[buf].modified
        local st = not modified and uv.fs_stat(real)
        local stamp = modified and ("%d:%d"):format(buf, api.nvim_buf_get_changedtick(buf))
          or st and ("%d:%d:%d.%d"):format(st.ino, st.size, st.mtime.sec, st.mtime.nsec)
          or "absent"
        local same = previous and previous.stamps[real] == stamp and previous.texts[real]
        turn.stamps[real] = stamp
        if same ~= nil and same ~= false then
          turn.texts[real] = same
        elseif modified then
          turn.texts[real] = api.nvim_buf_get_lines(buf, 0, -1, false)
        elseif st then
          from_disk[#from_disk + 1] = real
        else
          turn.texts[real] = false -- a buffer of a file not written yet
        end
      end
    end
  end
  -- The files read and the snapshot taken at once, off the main loop; done() after both.
  local left = 2
  local function one_done()
    left = left - 1
    if left == 0 then
      turn.pending = false
      done()
    end
  end
  require("minime.editor.async").run(function()
    for _, path in ipairs(from_disk) do
      local text = require("minime.editor.file_reader").read_all(path, M.LIMITS)
      turn.texts[path] = text and M.lines(text) or nil
    end
  end, one_done)
  local started = uv.now()
  git.snapshot(cwd, function(tree, repo, why)
    turn.tree, turn.repo, turn.root, turn.failed = tree, repo, repo and repo.root, why
    turn.late = uv.now() - started > bound_ms
    M.snapshots[key] = (M.snapshots[key] or 0) + 1
    one_done()
    if tree and M.sessions[key] == session then
      checkpoints.keep(key, repo, turn.n .. "s", tree)
    end
  end)
end

--- :MiniMeReset, a session reopened, the thread gone: the next turn starts a new session of
--- turns; the checkpoints go.
---@param key string
function M.reset(key)
  M.sessions[key] = nil
  checkpoints.drop(key)
end

--- A rewind of `key` writes files (`on`), or is done: the baselines asked meanwhile go now.
---@param key string
---@param on boolean
function M.rewinding(key, on)
  local session = M.sessions[key]
  if not session then
    return
  end
  session.rewinding = on or nil
  if not on then
    local after = session.after or {}
    session.after = nil
    for _, take in ipairs(after) do
      take()
    end
  end
end

--- The text of `path` in the last turn before the last that holds one (nil: none does).
---@param session minime.review.Session
local function checkpoint(session, path)
  for i = #session.turns - 1, 1, -1 do
    local text = session.turns[i].texts[path]
    if text ~= nil then
      return text
    end
  end
  return nil
end

-- A file's times come from a clock that may lag the real-time one by a tick (1-10 ms).
local TICK = 0.02

--- Whether `path` changed since `at` (a turn's start): its ctime (or, gone, its directory's),
--- which no program can set back, not older than that (less a clock tick).
---@param path string
---@param at number
function M.changed_since(path, at)
  local st = uv.fs_lstat(path) or uv.fs_stat(vim.fs.dirname(path))
  return st ~= nil and st.ctime.sec + st.ctime.nsec / 1e9 >= at - TICK
end

--- The turn names `path` (absolute, resolved): its text now is its baseline, unless known, or
--- unless it changed since the turn began (see the header). A file absent now is taken as
--- absent at the start, unless an earlier turn saw it (it may have been deleted since).
---@param key string
---@param path string
function M.name(key, path)
  local session = M.sessions[key]
  local turn = session and session.turns[#session.turns]
  if not turn or turn.texts[path] ~= nil or turn.unsure[path] then
    return
  elseif not under(session.cwd, path) or not M.allowed(session.cwd)(path) then
    return
  end
  if M.changed_since(path, turn.at) then
    local earlier = not turn.tree and checkpoint(session, path) or nil
    if earlier ~= nil then
      turn.texts[path] = earlier
    elseif uv.fs_lstat(path) or turn.tree then
      turn.unsure[path] = true -- the tree's text (git), else none: said by the review
    else
      turn.texts[path] = false
    end
    return
  end
  turn.texts[path] = shared(session, path, M.current(path))
end

--- The file `p` names (absolute, or relative to the cwd) is recorded, when it can be placed.
---@param key string
---@param p any
local function name_path(key, p)
  local session = M.sessions[key]
  if session and type(p) == "string" and p ~= "" then
    local cwd = session.cwd
    local real =
      require("minime.editor.paths").realpath(p:sub(1, 1) == "/" and p or cwd .. "/" .. p)
    if real then
      M.name(key, real)
    end
  end
end

--- The files that diffs name (a tool call's `diffs`, or a permission request's `content`:
--- items {type = "diff", path}) are recorded, before the tool that writes them runs.
---@param key string
---@param diffs any
function M.name_diffs(key, diffs)
  for _, d in ipairs(type(diffs) == "table" and diffs or {}) do
    name_path(key, type(d) == "table" and (d.type == nil or d.type == "diff") and d.path)
  end
end

--- The files a tool call's `locations` name ({path, line?}, or a permission request's list of
--- paths): recorded before the tool runs (outside git, the only record of a file an agent
--- edits on disk with its own tool).
---@param key string
---@param locations any
function M.name_locations(key, locations)
  for _, l in ipairs(type(locations) == "table" and locations or {}) do
    name_path(key, type(l) == "table" and l.path or l)
  end
end

--- One batch of turn events, before the float draws it (minime.rpc.apply). A turn's baseline
--- is taken before its prompt (M.take), not here: a `begin` is drawn at the ask, which may be
--- long before.
---@param key string
---@param events table[]
function M.see(key, events)
  for _, ev in ipairs(events) do
    local kind = type(ev) == "table" and ev.kind
    if kind == "reset" or (kind == "begin" and ev.fresh) then
      M.reset(key)
    elseif kind == "begin" and type(ev.cwd) == "string" then
      git.prepare(ev.cwd) -- the first snapshot while the agent starts, not before the prompt
    elseif kind == "done" then
      checkpoints.ended(key)
    elseif kind == "tool_call" or kind == "tool_result" then
      M.name_diffs(key, ev.diffs)
      M.name_locations(key, ev.locations)
    end
  end
end

return M
