--- Buffers whose files the agent changed on disk with its own tools (mm's edits, a shell
--- command; not through fs/write_text_file, which writes through the buffer) are refreshed
--- after each tool call ends and when the turn ends, the way `:checktime` does on focus — but
--- only files under the session's cwd, and never over the user's text: a buffer with unsaved
--- edits (or with 'noautoread') is left as it is, and the conversation says the file changed
--- under it (the host is told, op "disk_kept", and draws it). Nothing ever prompts (no W11/W12
--- "file changed" question mid-typing), and nothing that is not a regular file is read.
---
---   require("minime.editor.disk_refresh").soon(cwd)   -- after a batch of turn events
local paths = require("minime.editor.paths")

local api = vim.api
local getbufvar = vim.fn.getbufvar

local M = {}

M.DELAY_MS = 100 -- a burst of tool results (and the turn's end) is one refresh
-- A refresh stats every buffer under the cwd on the main loop (~6 ms at 1,000 buffers), where
-- the editor tools run too: while the agent calls them (one within QUIET_MS), it waits for a
-- pause, at most MAX_QUIET_WAIT_MS, so that it does not sit in front of their answers; and it
-- checks SLICE buffers per turn of the main loop, so that a call coming while it runs waits
-- for one slice (well under a millisecond), not for all of them.
M.QUIET_MS = 50
M.MAX_QUIET_WAIT_MS = 1000
M.SLICE = 64

local scheduled = {} ---@type table<string, boolean>

--- Per cwd: how many times the pending refresh waited for the user (command line, prompt).
---@type table<string, integer>
M.waited = {}

-- The loaded file buffers whose names lie under `cwd` or its real path `root`: { buf =
-- relative name }. Names only, no I/O per buffer: this runs after every tool call, and it
-- reloads what the user sees (it exposes nothing to the agent).
local function buffers_under(cwd, root)
  local found = {}
  local prefixes = {}
  for _, dir in ipairs({ cwd, root }) do
    prefixes[#prefixes + 1] = dir == "/" and "/" or dir:gsub("/+$", "") .. "/"
  end
  for _, buf in ipairs(api.nvim_list_bufs()) do
    -- getbufvar: vim.bo[buf] costs ~7 us a buffer at 1,000 buffers, getbufvar ~0.6 us.
    if api.nvim_buf_is_loaded(buf) and getbufvar(buf, "&buftype") == "" then
      local name = api.nvim_buf_get_name(buf)
      for _, prefix in ipairs(prefixes) do
        if #name > #prefix and name:sub(1, #prefix) == prefix then
          found[buf] = name:sub(#prefix + 1)
          break
        end
      end
    end
  end
  return found
end

-- A moment when `:checktime` may run: not while a prompt, the command line or a
-- hit-enter message waits for the user.
local function can_check()
  local mode = api.nvim_get_mode()
  return not mode.blocking and not mode.mode:match("^[cr]")
end

-- `:checktime` the buffers `bufs[first..last]` of `mine`, the names of those left as they
-- were although their files changed added to `kept`. Our FileChangedShell autocmd exists only
-- while these run: a check of other buffers (the user's focus) is Vim's as always.
local function check(mine, bufs, first, last, kept)
  local group = api.nvim_create_augroup("minime_disk_refresh", { clear = true })
  api.nvim_create_autocmd("FileChangedShell", {
    group = group,
    callback = function(ev)
      local rel = mine[ev.buf]
      if not rel then
        return -- not ours: with our autocmd defined Vim asks nothing; leave it as it was
      end
      local reload = vim.v.fcs_reason ~= "deleted"
        and not vim.bo[ev.buf].modified
        and vim.o.autoread
      vim.v.fcs_choice = reload and "reload" or ""
      if not reload then
        kept[#kept + 1] = rel
      end
    end,
  })
  for i = first, math.min(last, #bufs) do
    -- A file that is no regular file now (a FIFO the agent put there) is left alone: a reload
    -- would block the editor in open() until something writes to it.
    local st = vim.uv.fs_stat(api.nvim_buf_get_name(bufs[i]))
    if not st or st.type == "file" then
      pcall(vim.cmd, "checktime " .. bufs[i])
    end
  end
  api.nvim_del_augroup_by_id(group)
end

-- The buffers under `cwd` to check, in buffer number order, and their names; nil when the
-- cwd cannot be resolved.
local function targets(cwd)
  local root = paths.realpath(cwd)
  if not root then
    return nil
  end
  local mine = buffers_under(cwd, root)
  local bufs = vim.tbl_keys(mine)
  table.sort(bufs)
  return mine, bufs
end

--- Check the buffers under `cwd` now; returns the relative names left as they were although
--- their files changed (unsaved edits, 'noautoread', or the file deleted).
---@param cwd string
---@return string[]
function M.refresh(cwd)
  local mine, bufs = targets(cwd)
  if not mine then
    return {}
  end
  local kept = {}
  check(mine, bufs, 1, #bufs, kept)
  table.sort(kept)
  return kept
end

-- The same, M.SLICE buffers per turn of the main loop; `done(kept)` at the end.
local function refresh_sliced(cwd, done)
  local mine, bufs = targets(cwd)
  if not mine then
    return done({})
  end
  local kept = {}
  local function from(first)
    if not can_check() then
      return vim.defer_fn(function()
        from(first)
      end, M.DELAY_MS)
    end
    local last = first + math.max(M.SLICE, 1) - 1
    check(mine, bufs, first, last, kept)
    if last < #bufs then
      return vim.schedule(function()
        from(last + 1)
      end)
    end
    table.sort(kept)
    done(kept)
  end
  from(1)
end

--- Whether a refresh of `cwd` waits to run (or runs).
---@param cwd string
---@return boolean
function M.pending(cwd)
  return scheduled[cwd] == true or (M.slicing[cwd] or 0) > 0
end

--- Refreshes still checking buffers, per cwd.
---@type table<string, integer>
M.slicing = {}

-- cwd -> the thread whose turn asked for its refresh last: who is told of the files kept.
local asked_by = {}

--- Refresh the buffers under `cwd` in a moment (once for a burst of calls); `thread`: whose
--- turn changed them (its conversation says which were kept as the user had them).
---@param cwd string
---@param thread? string
function M.soon(cwd, thread)
  asked_by[cwd] = thread or asked_by[cwd]
  if scheduled[cwd] then
    return
  end
  scheduled[cwd] = true
  local since = vim.uv.now()
  local function run()
    local tools = package.loaded["minime.tools"]
    local quiet_for = vim.uv.now() - (tools and tools.last_call or -math.huge)
    if quiet_for < M.QUIET_MS and vim.uv.now() - since < M.MAX_QUIET_WAIT_MS then
      vim.defer_fn(run, M.QUIET_MS - quiet_for)
      return
    end
    if not can_check() then
      M.waited[cwd] = (M.waited[cwd] or 0) + 1
      vim.defer_fn(run, M.DELAY_MS)
      return
    end
    scheduled[cwd], M.waited[cwd] = nil, nil
    local owner = asked_by[cwd]
    M.slicing[cwd] = (M.slicing[cwd] or 0) + 1
    refresh_sliced(cwd, function(kept)
      M.slicing[cwd] = M.slicing[cwd] - 1
      if #kept > 0 and owner then
        -- The host says it in the conversation (its one writer), after what it has sent.
        local said = { cwd = cwd, thread = owner, files = kept }
        pcall(require("minime.host").notify, "disk_kept", said)
      end
    end)
  end
  vim.defer_fn(run, M.DELAY_MS)
end

return M
