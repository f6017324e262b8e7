--- The ACP file system the agent may use (`fs/read_text_file`, `fs/write_text_file`, see
--- :h minime-config-fs), answered through the buffers: a loaded file is read with its unsaved
--- edits and written as one undo step (buffer_writer.lua); any other file goes to disk off the
--- main loop (file_writer.lua). A write answers what it changed, which the host shows in the
--- conversation. Same scope as the
--- tools: the real path (symlinks and `..` resolved) must lie under the session's cwd and match
--- no deny pattern, else the request is refused without naming anything.
---
---   require("minime.editor.fs").call(method, params, cwd, reply) -- like minime.tools.call
local async = require("minime.editor.async")
local buffer_writer = require("minime.editor.buffer_writer")
local diff = require("minime.ui.diff")
local file_reader = require("minime.editor.file_reader")
local file_writer = require("minime.editor.file_writer")
local paths = require("minime.editor.paths")
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local api = vim.api

local M = {}

local REFUSED = "refused: the path is not a file under the session's working directory,"
  .. " or it is on the deny list (minime deny option)"

local function fail(message, missing)
  error({ message = message, missing = missing }, 0)
end

-- The real path of `path` when the agent may touch it.
local function target(params, ctx)
  local path = type(params) == "table" and params.path or nil
  if type(path) ~= "string" or path:sub(1, 1) ~= "/" then
    fail("path must be an absolute path")
  end
  local real, rel = scope_mod.new(ctx):file(path)
  if not real then
    fail(REFUSED)
  end
  return real, rel
end

local loaded_buffer = paths.loaded_buffer

-- Loaded buffers of the file not written through (a special 'buftype') see the new text.
local function checktime(real)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_is_loaded(buf) and api.nvim_buf_get_name(buf) or ""
    if name ~= "" and paths.realpath(name) == real then
      pcall(vim.cmd, "checktime " .. buf)
    end
  end
end

local buffer_text = paths.buffer_text

local function disk_text(real, limits)
  local body, problem = file_reader.read_all(real, limits)
  if not body then
    fail(problem and ("cannot read it: " .. problem) or "no such file", not problem)
  end
  return body
end

-- `limit` lines of `body` from line `line` (1-based), each with its newline.
local function slice(body, line, limit)
  if line == nil and limit == nil then
    return body
  end
  local first = (type(line) == "number" and line >= 1) and math.floor(line) or 1
  local count = type(limit) == "number" and math.floor(limit) or math.huge
  local out, n, pos = {}, 0, 1
  while pos <= #body and #out < count do
    local nl = body:find("\n", pos, true)
    local stop = nl or #body
    n = n + 1
    if n >= first then
      out[#out + 1] = body:sub(pos, stop)
    end
    pos = stop + 1
  end
  return table.concat(out)
end

local function read(params, ctx)
  local real = target(params, ctx)
  local buf = loaded_buffer(real)
  local body = buf and buffer_text(buf) or disk_text(real, text.limits(ctx))
  local line = params.line ~= vim.NIL and params.line or nil
  local limit = params.limit ~= vim.NIL and params.limit or nil
  return slice(body, line, limit)
end

--- What a write changed, for the host to show in the conversation, in the stream's order (it
--- is the one writer of the conversation: rplugin/python3/minime/nvim/fs_shown.py):
--- { path (relative), real, new, old (absent for a new file), unread (when the text before
--- was not read: the diff's header and why, in place of the hunks), unsaved (the buffer had
--- edits not saved, now replaced: one undo brings them back) }.
local function wrote(rel, real, old, new, note, unsaved)
  local change = { path = rel, real = real, new = new, unsaved = unsaved == true }
  if old == false then
    change.unread = table.concat(diff.header({ path = rel, oldText = "" }), "\n") .. "\n" .. note
  else
    change.old = old -- nil: a new file
  end
  return change
end

-- The text of a file not loaded, before the write, for the diff: nil for a new file; false and
-- a note when it is larger than a diff is computed for (minime.ui.diff) or cannot be read.
local function old_disk_text(real, stat, new, ctx)
  if not stat then
    return nil
  end
  if stat.size + #new > diff.MAX_BYTES then
    return false, diff.too_large(stat.size, #new)
  end
  local ok, body = pcall(disk_text, real, text.limits(ctx))
  if not ok then
    return false, "(the text before could not be read: " .. tostring(body.message or body) .. ")"
  end
  return body
end

local function write(params, ctx)
  local real, rel = target(params, ctx)
  local content = params.content
  if type(content) ~= "string" then
    fail("content must be a string")
  end
  -- Before the write: the text it replaces is the review's baseline.
  pcall(require("minime.review.baseline").name, ctx.thread or ctx.cwd, real)
  local buf = loaded_buffer(real)
  local old, note, unsaved
  if buf then
    old = buffer_text(buf)
    unsaved = vim.bo[buf].modified
    buffer_writer.write(buf, content)
  else
    local stat, problem = file_writer.stat(real)
    if problem then
      fail("cannot write it: " .. problem)
    end
    old, note = old_disk_text(real, stat, content, ctx)
    problem = file_writer.write(real, content)
    if problem then
      fail("cannot write it: " .. problem)
    end
    checktime(real)
  end
  return wrote(rel, real, old, content, note, unsaved)
end

local methods = { ["fs/read_text_file"] = read, ["fs/write_text_file"] = write }

--- Answer `method` for the session in `cwd`; never throws. `{ ok, value | error }` at once, or
--- `{ ok = true, pending = true }` and the answer later through the host's "tool_result" `reply`.
function M.call(method, params, cwd, reply, thread)
  local fn = methods[method]
  if not fn then
    return { ok = false, error = "unknown method " .. tostring(method) }
  end
  local ctx = require("minime.config").tool_ctx(cwd)
  ctx.cwd = cwd
  ctx.thread = type(thread) == "string" and thread or nil
  return async.answer(function()
    return fn(type(params) == "table" and params or {}, ctx)
  end, function(ok, result)
    if ok then
      return { ok = true, value = result }
    elseif type(result) == "table" and type(result.message) == "string" then
      return { ok = false, error = result.message, missing = result.missing } -- missing: -32002
    end
    return { ok = false, error = "internal error in the editor: " .. tostring(result) }
  end, reply)
end

return M
