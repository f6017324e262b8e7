--- The review's baseline: what every file a turn may change looked like when the turn began.
---
--- At a turn's `begin` (seen by minime.rpc before the turn float draws it):
---   * the text of each loaded buffer under the cwd, unsaved edits included: the review never
---     shows the user's own edits as the agent's;
---   * in a git work tree, a snapshot of the whole tree (minime.review.git), off the main loop:
---     the ask never waits for it; `pending` until it is written.
--- Then, for a file the turn names (a tool call's diff path or locations, a permission
--- request's, an fs write; see M.name) and not
--- yet recorded, its text at that moment, before the write that names it is applied.
local git = require("minime.review.git")

local api, uv = vim.api, vim.uv

local M = {}

---@class minime.review.Turn
---@field n integer the turn's number in this cwd's session, from 1
---@field agent string
---@field tree? string the git snapshot at the start (nil: outside git, or not written yet)
---@field root? string the git work tree's top directory
---@field pending boolean the snapshot still runs
---@field texts table<string, string[]|false> a file's lines when first seen (false: absent)

---@class minime.review.Session
---@field turns minime.review.Turn[]
---@field recorded table<string, true> paths a turn before the last holds a text of
---@field count integer the turns begun (a turn left with no text is not kept: see forget_unread)

---@type table<string, minime.review.Session>
M.sessions = {}

--- Turns whose snapshot ran, for tests and the bench: cwd -> count.
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

--- Files larger than this are not recorded (a review of them is not worth the read).
M.MAX_BYTES = 4 * 1024 * 1024

--- The lines of a regular file on disk; false when absent; nil when it is no regular file
--- (a fifo would block the open), too big, or unreadable. Checked before it is opened.
---@param path string
---@return string[]|false|nil
function M.disk(path)
  local stat = uv.fs_stat(path)
  if not stat then
    return false
  elseif stat.type ~= "file" or stat.size > M.MAX_BYTES then
    return nil
  end
  local fd = uv.fs_open(path, "r", 0)
  if not fd then
    return nil
  end
  local data = uv.fs_read(fd, stat.size, 0)
  uv.fs_close(fd)
  return data and vim.split(data:gsub("\n$", ""), "\n", { plain = true }) or nil
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

--- A review reads a file's text from the last turn (:MiniMeReview) or from the first turn that
--- holds one (:MiniMeReview all): once a turn is no longer the last, its copies of files an
--- earlier turn holds are never read again, and are dropped. Without this every turn kept a
--- copy of every loaded buffer: 20 buffers of 1,000 lines grew Neovim by ~160 KiB a turn.
--- A turn between the first and the last left with no text is read by no review: it goes.
---@param session minime.review.Session
local function forget_unread(session)
  local turns = session.turns
  local previous = turns[#turns]
  if not previous then
    return
  end
  for path in pairs(previous.texts) do
    if session.recorded[path] then
      previous.texts[path] = nil
    else
      session.recorded[path] = true
    end
  end
  if #turns > 1 and next(previous.texts) == nil then
    turns[#turns] = nil
  end
end

---@param key string the conversation (its thread)
---@param cwd string where its files live
---@param ev table the begin event
function M.begin(key, cwd, ev)
  if ev.fresh or not M.sessions[key] then
    M.sessions[key] = { turns = {}, recorded = {}, count = 0 }
  end
  local session = M.sessions[key]
  forget_unread(session)
  session.count = session.count + 1
  local turns = session.turns
  local turn = { n = session.count, agent = tostring(ev.agent or ""), pending = true, texts = {} }
  turns[#turns + 1] = turn
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local real = require("minime.editor.paths").realpath(api.nvim_buf_get_name(buf))
      local size = api.nvim_buf_get_offset(buf, api.nvim_buf_line_count(buf))
      if real and under(cwd, real) and size <= M.MAX_BYTES then -- a huge log: not copied
        turn.texts[real] = api.nvim_buf_get_lines(buf, 0, -1, false)
      end
    end
  end
  git.snapshot(cwd, function(tree, root)
    turn.tree, turn.root, turn.pending = tree, root, false
    M.snapshots[key] = (M.snapshots[key] or 0) + 1
  end)
end

--- :MiniMeReset: the next turn starts a new session.
---@param key string
function M.reset(key)
  M.sessions[key] = nil
end

--- The turn names `path` (absolute, resolved): its text now is its baseline, unless known.
---@param key string
---@param cwd string
---@param path string
function M.name(key, cwd, path)
  local turn = M.last(key)
  if not turn or turn.texts[path] ~= nil or not under(cwd, path) then
    return
  end
  turn.texts[path] = M.current(path)
end

--- The file `p` names (absolute, or relative to the cwd) is recorded, when it can be placed.
---@param key string
---@param cwd string
---@param p any
local function name_path(key, cwd, p)
  if type(p) == "string" and p ~= "" then
    local real =
      require("minime.editor.paths").realpath(p:sub(1, 1) == "/" and p or cwd .. "/" .. p)
    if real then
      M.name(key, cwd, real)
    end
  end
end

--- The files that diffs name (a tool call's `diffs`, or a permission request's `content`:
--- items {type = "diff", path}) are recorded, before the tool that writes them runs.
---@param key string
---@param cwd string
---@param diffs any
function M.name_diffs(key, cwd, diffs)
  for _, d in ipairs(type(diffs) == "table" and diffs or {}) do
    name_path(key, cwd, type(d) == "table" and (d.type == nil or d.type == "diff") and d.path)
  end
end

--- The files a tool call's `locations` name ({path, line?}, or a permission request's list of
--- paths): recorded before the tool runs (outside git, the only record of a file an agent
--- edits on disk with its own tool).
---@param key string
---@param cwd string
---@param locations any
function M.name_locations(key, cwd, locations)
  for _, l in ipairs(type(locations) == "table" and locations or {}) do
    name_path(key, cwd, type(l) == "table" and l.path or l)
  end
end

--- One batch of turn events of conversation `key` (its files under `cwd`), before the float
--- draws it (minime.rpc.apply).
---@param key string
---@param cwd string
---@param events table[]
function M.see(key, cwd, events)
  for _, ev in ipairs(events) do
    local kind = type(ev) == "table" and ev.kind
    if kind == "begin" then
      M.begin(key, type(ev.cwd) == "string" and ev.cwd or cwd, ev)
    elseif kind == "reset" then
      M.reset(key)
    elseif kind == "tool_call" or kind == "tool_result" then
      M.name_diffs(key, cwd, ev.diffs)
      M.name_locations(key, cwd, ev.locations)
    end
  end
end

return M
