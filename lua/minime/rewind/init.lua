--- :MiniMeRewind[!] [N|undo]: every file changed since the start of ask N of the current
--- thread (no N: the last ask) put back as it was then (rewind/plan.lua finds them, off the
--- main loop; rewind/restore.lua writes them, each checked at its moment). Files created since
--- are removed after one confirmation listing them; deleted ones are written back. A file the
--- user edited after that ask is listed and kept, unless `!`. `undo` puts back what the last
--- rewind replaced (a file edited since that rewind: kept, unless `!`). One line says what was
--- done. Refused while the thread runs a turn or starts its agent (:MiniMeCancel first): the
--- agent would be writing the very files.
local async = require("minime.editor.async")
local baseline = require("minime.review.baseline")
local plan_mod = require("minime.rewind.plan")
local restore = require("minime.rewind.restore")

local M = {}

--- The last rewind of each thread: what it replaced, for `undo`.
---@type table<string, {n: integer, done: minime.rewind.Done[]}>
M.last = {}

---@class minime.rewind.Opts
---@field bang? boolean restore the files the user edited too
---@field ask_first? boolean confirm before going back more than the last ask (the `r` key)
---@field on_done? fun(summary: string) after the files went back (not when cancelled)

local function say(text, level)
  require("minime.ui.say").say("minime: " .. text, level or vim.log.levels.INFO)
end

local function count(n, one, many)
  return ("%d %s"):format(n, n == 1 and one or many)
end

local function names(list, field)
  local out = {}
  for i, item in ipairs(list) do
    if i > 5 then
      out[#out + 1] = ("and %d more"):format(#list - 5)
      break
    end
    out[#out + 1] = field and item[field] or item
  end
  return table.concat(out, ", ")
end

--- Why thread `key` cannot be rewound now (nil: it can).
---@param key string
function M.refusal(key)
  local session = baseline.sessions[key]
  local thread = require("minime.threads").get(key)
  local state = thread and thread.state
  local turn = package.loaded["minime.ui.turn"] and require("minime.ui.turn").get(key)
  if (turn and turn.running) or state == "running" or state == "waiting" then
    return "not rewound: a turn is running in this thread (or its agent starts):"
      .. " :MiniMeCancel it first"
  elseif not session or #session.turns == 0 then
    return "nothing to rewind: no ask in this thread has a checkpoint yet"
  elseif session.rewinding then
    return "not rewound: a rewind of this thread is still writing its files"
  elseif session.turns[#session.turns].pending then
    return "not rewound: the last ask's checkpoint is still being written: again in a moment"
  end
  return nil
end

--- The one line that says what a rewind did.
local function summary(n, done, kept, failed, unknown)
  local restored, removed = 0, 0
  for _, d in ipairs(done) do
    if d.after == false then
      removed = removed + 1
    else
      restored = restored + 1
    end
  end
  local parts = { count(restored, "file restored", "files restored") }
  if removed > 0 then
    parts[#parts + 1] = count(removed, "removed", "removed")
  end
  local line = table.concat(parts, ", ")
  if #kept > 0 then
    line = line
      .. ("; kept, you edited them since (:MiniMeRewind! %d restores them): %s"):format(
        n,
        names(kept, "rel")
      )
  end
  if #failed > 0 then
    local why = {}
    for _, f in ipairs(failed) do
      why[#why + 1] = ("%s (%s)"):format(f.rel, f.why)
    end
    line = line .. "; not restored: " .. names(why)
  end
  if #unknown > 0 then
    line = line .. "; no checkpoint of: " .. names(unknown)
  end
  return line
end

--- Ask the user once what the plan would do that cannot be seen in a buffer: the files it
--- removes (and, from the `r` key, going back more than one ask). go(remove) or nothing.
local function confirm(plan, list, opts, go)
  local removed = vim.tbl_filter(function(f)
    return f.kind == "remove"
  end, list)
  local last = #baseline.sessions[plan.key].turns
  local far = opts.ask_first and plan.n < last
  if #removed == 0 and not far then
    return go(true)
  end
  local prompt = ("Rewind the files to before ask %d"):format(plan.n)
  if far then
    prompt = prompt .. (" (%s back)"):format(count(last - plan.n + 1, "ask", "asks"))
  end
  local items = { "Rewind" }
  if #removed > 0 then
    prompt = prompt .. "; it removes files created since: " .. names(removed, "rel")
    items = { "Rewind, removing them", "Rewind, keeping them" }
  end
  items[#items + 1] = "Cancel"
  require("minime.ui.pick").select(
    items,
    { prompt = prompt, kind = "minime.confirm" },
    function(_, i)
      if i == nil or i == #items then
        return say("rewind cancelled")
      end
      go(i == 1)
    end
  )
end

--- Apply `list` of `plan` (after the confirmation), off the main loop; says what it did.
local function apply(plan, list, kept, opts, what)
  local key = plan.key
  baseline.rewinding(key, true)
  async.run(function()
    return { restore.all(list, plan.cwd) }
  end, function(ok, value)
    baseline.rewinding(key, false)
    if not ok then
      return say(
        "rewind failed: " .. tostring(type(value) == "table" and value.message or value),
        vim.log.levels.ERROR
      )
    end
    local done, failed = value[1], value[2]
    if what == "undo" then
      M.last[key] = nil
    elseif #done > 0 then
      M.last[key] = { n = plan.n, done = done }
    end
    local line = summary(plan.n, done, kept, failed, plan.unknown)
    local head = what == "undo" and "rewind undone" or ("rewound to before ask %d"):format(plan.n)
    say(("%s: %s"):format(head, line), #failed > 0 and vim.log.levels.WARN or nil)
    if opts.on_done then
      opts.on_done(line)
    end
  end)
end

--- Rewind thread `key` to before ask `n` (see the header).
---@param key string
---@param n integer
---@param opts? minime.rewind.Opts
function M.run(key, n, opts)
  opts = opts or {}
  local why = M.refusal(key)
  if why then
    return say(why, vim.log.levels.WARN)
  end
  local session = baseline.sessions[key]
  if n < 1 or n > #session.turns then
    return say(
      ("no ask %d in this thread: its asks with a checkpoint are 1-%d"):format(n, #session.turns),
      vim.log.levels.WARN
    )
  end
  async.run(function()
    return plan_mod.make(key, n)
  end, function(ok, plan)
    if not ok then
      return say(
        "cannot rewind: " .. tostring(type(plan) == "table" and plan.message or plan),
        vim.log.levels.ERROR
      )
    end
    ---@cast plan minime.rewind.Plan
    local list, kept = {}, {}
    for _, f in ipairs(plan.files) do
      table.insert((f.edited and not opts.bang) and kept or list, f)
    end
    confirm(plan, list, opts, function(remove)
      if M.refusal(key) then -- a turn began while the question waited
        return say(M.refusal(key), vim.log.levels.WARN)
      end
      if not remove then
        list = vim.tbl_filter(function(f)
          return f.kind ~= "remove"
        end, list)
      end
      apply(plan, list, kept, opts, "rewind")
    end)
  end)
end

--- :MiniMeRewind undo: what the last rewind of `key` replaced, put back.
---@param key string
---@param bang? boolean also where the user edited the file since that rewind
function M.undo(key, bang)
  local last = M.last[key]
  if not last then
    return say("no rewind of this thread to undo", vim.log.levels.WARN)
  end
  local why = M.refusal(key)
  if why then
    return say(why, vim.log.levels.WARN)
  end
  local cwd = baseline.sessions[key].cwd
  async.run(function()
    local buffers, list, kept = plan_mod.buffers(), {}, {}
    for _, d in ipairs(last.done) do
      local now = plan_mod.now(d.path, buffers)
      if now ~= nil and now ~= d.before then
        local rel = vim.fs.relpath(cwd, d.path) or d.path
        local file = { path = d.path, rel = rel, target = d.before, now = now } ---@type minime.rewind.File
        file.kind = d.before == false and "remove" or now == false and "create" or "restore"
        table.insert((now ~= d.after and not bang) and kept or list, file)
      end
    end
    return { list, kept }
  end, function(ok, value)
    if not ok then
      return say("cannot undo the rewind: " .. tostring(value), vim.log.levels.ERROR)
    end
    apply({ key = key, cwd = cwd, n = last.n, unknown = {} }, value[1], value[2], {}, "undo")
  end)
end

--- :MiniMeRewind[!] [N|undo] in the current thread (the current buffer's conversation, else
--- the window's cwd's current thread).
---@param arg string
---@param bang boolean
function M.command(arg, bang)
  local key = require("minime.threads").here()
  if not key then
    return say("nothing to rewind: no thread here", vim.log.levels.WARN)
  end
  arg = vim.trim(arg or "")
  if arg == "undo" then
    return M.undo(key, bang)
  end
  local session = baseline.sessions[key]
  local n = arg == "" and session and #session.turns or tonumber(arg)
  if arg ~= "" and (not n or n ~= math.floor(n)) then
    return say(
      ("not an ask's number: %s (:MiniMeRewind [N|undo])"):format(arg),
      vim.log.levels.WARN
    )
  end
  M.run(key, n or 0, { bang = bang })
end

return M
