--- The errors and warnings a turn caused (:h minime-feedback): the pass after each turn. At
--- its `begin`, what the files under its cwd show (minime.feedback.diagnostics_diff). At its
--- `done`: the files it changed (those whose text the review's baseline holds and that differ
--- now, and in git those that differ from the turn's snapshot) that a language server serves —
--- loaded, or loaded quietly for this — once each server has published for their last change
--- and gone quiet (SETTLE_MS), at most WAIT_MS after the end in all (a server that never
--- answers leaves its files out, silently). What is new there goes to the host, which shows it
--- under the turn and sends it with :MiniMeFix, or by itself with `feedback.diagnostics =
--- "auto"` (rplugin/python3/minime/nvim/feedback.py).
---
--- Never on the main loop's hot path: the snapshot is one vim.diagnostic.get; the wait is a
--- timer that looks every POLL_MS (a few table reads), never a vim.wait.
local config = require("minime.config")
local diff = require("minime.feedback.diagnostics_diff")

local api, uv = vim.api, vim.uv

local M = {}

--- How long after a turn's end the servers have to publish for the files it changed.
M.WAIT_MS = 3000
M.POLL_MS = 25
--- A server's diagnostics count once it published after the file's last change and then said
--- nothing more for this long: pyrefly publishes twice per change, 0-15 ms apart (nothing,
--- then the errors).
M.SETTLE_MS = 150
-- Bounds of what one turn reports.
M.MAX_FILES = 20
M.MAX_ITEMS = 20

--- Turn ends whose pass runs now (tests and the bench wait on it): thread -> count.
---@type table<string, integer>
M.running = {}
--- Passes done, per thread (tests and the bench).
---@type table<string, integer>
M.passes = {}
--- The last pass of each thread: how long it took (ms), the files it looked at (a server
--- serves them), those whose server answered in time, and the longest it held the main loop
--- in one go (hold_ms) (tests and the bench).
---@type table<string, {ms: integer, looked: string[], answered: string[], hold_ms: number}>
M.last = {}

---@type table<string, minime.feedback.Before> thread -> what its running turn began with
local before = {}
---@type table<integer, {tick: integer, at: integer}> buf -> when its diagnostics were last set
local published = {}
local group

--- "show", "auto", or nil (off).
local function mode()
  local feedback = config.options.feedback
  local value = type(feedback) == "table" and feedback.diagnostics
  if value == false then
    return nil
  end
  return value == "auto" and "auto" or "show"
end

local function watch()
  if group then
    return
  end
  group = api.nvim_create_augroup("minime.feedback.diagnostics", { clear = true })
  api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    callback = function(ev)
      if api.nvim_buf_is_valid(ev.buf) then
        published[ev.buf] = { tick = api.nvim_buf_get_changedtick(ev.buf), at = uv.now() }
      end
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    group = group,
    callback = function(ev)
      published[ev.buf] = nil
    end,
  })
end

--- A turn of `key` begins in `cwd`: what its files show now (minime.feedback.diagnostics_diff).
---@param key string
---@param cwd string
function M.begin(key, cwd)
  watch()
  before[key] = diff.snapshot(cwd)
end

--- The files the last turn of `key` changed (real paths): from the review's baseline, then git.
local function changed_files(key, cwd, done)
  local baseline = require("minime.review.baseline")
  local turn = baseline.last(key)
  if not turn then
    return done({}, nil)
  end
  local found = {}
  for path, text in pairs(turn.texts) do
    local now = baseline.current(path)
    if now and (text == false or (text and not vim.deep_equal(now, text))) then
      found[path] = true
    end
  end
  if not turn.tree then
    return done(found, turn)
  end
  local git = require("minime.review.git")
  git.snapshot(cwd, function(tree)
    if not tree then
      return done(found, turn)
    end
    git.changed(cwd, turn.tree, tree, function(rels)
      for _, rel in ipairs(rels or {}) do
        found[vim.fs.joinpath(cwd, rel)] = true
      end
      done(found, turn)
    end)
  end)
end

--- The buffers a server serves among `files` (under the cwd, allowed by the deny list): {buf,
--- real, rel}, those not loaded loaded quietly with the running servers attached.
local function targets(cwd, files)
  local scope = require("minime.editor.scope").new({ cwd = cwd, deny = config.options.deny })
  local lsp = require("minime.editor.lsp")
  local list = vim.tbl_keys(files)
  table.sort(list)
  local out = {}
  for _, path in ipairs(list) do
    local real, rel = scope:file(path)
    if real and rel and #out < M.MAX_FILES then
      local ok, entry = pcall(lsp.buffer, scope, rel)
      if ok and #vim.lsp.get_clients({ bufnr = entry.buf }) > 0 then
        out[#out + 1] = { buf = entry.buf, real = real, rel = rel }
      end
    end
  end
  return out
end

local function fresh(target)
  local buf, last = target.buf, published[target.buf]
  return last ~= nil
    and api.nvim_buf_is_loaded(buf)
    and last.tick == api.nvim_buf_get_changedtick(buf)
    and uv.now() - last.at >= M.SETTLE_MS
end

--- Call `fn` every POLL_MS until it returns true or `deadline` (uv.now()) passes; then `done`.
--- `timed` wraps each look (and what follows the last) as the main loop runs it.
local function poll(deadline, fn, done, timed)
  local step
  step = timed(function()
    if fn() or uv.now() >= deadline then
      return done()
    end
    vim.defer_fn(step, M.POLL_MS)
  end)
  step()
end

local function send(key, cwd, files)
  local payload = { thread = key, cwd = cwd }
  local auto = mode() == "auto" and #files > 0
  if auto then -- the host makes the fix ask itself: it needs the agent, as an ask names it
    local ok, resolved = pcall(require("minime.actions").host_payload, key)
    if not ok then
      return
    end
    payload = resolved
  end
  local feedback = config.options.feedback
  payload.files = files
  payload.auto = auto
  payload.rounds = type(feedback) == "table" and tonumber(feedback.rounds) or 2
  payload.cwd = cwd
  pcall(require("minime.host").notify, "diagnostics", payload)
end

--- What the files in `list` ({buf, real, rel}) show now that is new, for those whose server
--- answered; and the names looked at and answered (M.last).
local function collect(list, snap, turn)
  local files, looked, answered = {}, {}, {}
  for _, target in ipairs(list) do
    looked[#looked + 1] = target.rel
    if fresh(target) then
      answered[#answered + 1] = target.rel
      local base = turn and turn.texts[target.real]
      local items = diff.new_items(target.buf, target.real, snap, base, M.MAX_ITEMS)
      if #items > 0 then
        files[#files + 1] = { path = target.rel, items = items }
      end
    end
  end
  return files, looked, answered
end

--- A turn of `key` ended: what it caused, once the servers have said (see the module's
--- docstring), goes to the host (nothing new too: it replaces what the turn before left).
---@param key string
---@param cwd string
function M.done(key, cwd)
  local snap = before[key]
  before[key] = nil
  if not snap or #vim.lsp.get_clients() == 0 then
    return
  end
  M.running[key] = (M.running[key] or 0) + 1
  local started = uv.now()
  local deadline = started + M.WAIT_MS
  local pass = { ms = 0, looked = {}, answered = {}, hold_ms = 0 }
  M.last[key] = pass
  --- `fn` as the main loop runs it, timed: the pass's longest hold of it (the bench reads it).
  local function timed(fn)
    return function(...)
      local t0 = uv.hrtime()
      local result = fn(...)
      pass.hold_ms = math.max(pass.hold_ms, (uv.hrtime() - t0) / 1e6)
      return result
    end
  end
  local function finish(files, looked, answered)
    pass.ms, pass.looked, pass.answered = uv.now() - started, looked or {}, answered or {}
    send(key, cwd, files)
    M.running[key] = M.running[key] - 1
    M.passes[key] = (M.passes[key] or 0) + 1
  end
  local refresh = require("minime.editor.disk_refresh")
  local wait_for_servers = timed(function(changed, turn)
    local list = targets(cwd, changed)
    if #list == 0 then
      return finish({})
    end
    poll(deadline, function()
      for _, target in ipairs(list) do -- (not vim.iter: loading it held the first pass ~10 ms)
        if not fresh(target) then
          return false
        end
      end
      return true
    end, function()
      finish(collect(list, snap, turn))
    end, timed)
  end)
  -- Scheduled: the refresh minime.rpc.apply asks for after this batch is pending by then, and
  -- the files the agent wrote on disk are read again before anything is compared.
  vim.schedule(timed(function()
    poll(deadline, function()
      return not refresh.pending(cwd)
    end, function()
      changed_files(key, cwd, wait_for_servers)
    end, timed)
  end))
end

--- One batch of events of thread `key` (minime.rpc.apply, before the float draws it).
---@param key string
---@param cwd string
---@param events table[]
function M.see(key, cwd, events)
  if not mode() then
    return
  end
  for _, ev in ipairs(events) do
    local kind = type(ev) == "table" and ev.kind
    if kind == "begin" then
      M.begin(key, type(ev.cwd) == "string" and ev.cwd or cwd)
    elseif kind == "done" then
      M.done(key, cwd)
    end
  end
end

--- :MiniMeFix (and `f` on them): the errors and warnings the last turn of `key` (default:
--- the thread commands act on) caused go to its agent as the next ask.
---@param key? string
function M.fix(key)
  local threads = require("minime.threads")
  local id = key and threads.key(key) or threads.here()
  if not id then
    require("minime.ui.say").say("minime: no new errors or warnings to send", vim.log.levels.INFO)
    return
  end
  local ok, err = pcall(function()
    local payload = require("minime.actions").host_payload(id)
    payload.prompt, payload.fix = "", true
    payload.queue = config.options.queue ~= false
    require("minime.host").notify("ask", payload)
  end)
  if not ok then
    require("minime.ui.say").say("minime: " .. tostring(err), vim.log.levels.ERROR)
  end
end

return M
