--- The ACP file system the agent may use (`fs/read_text_file`, `fs/write_text_file`, see
--- :h minime-config-fs), answered through the buffers: a loaded file is read with its unsaved
--- edits and written as one undo step; any other file goes to disk. Same scope as the tools: the
--- real path (symlinks and `..` resolved) must lie under the session's cwd and match no deny
--- pattern, else the request is refused without naming anything.
---
---   require("minime.editor.fs").call(method, params, cwd, reply) -- like minime.tools.call
local async = require("minime.editor.async")
local file_reader = require("minime.editor.file_reader")
local paths = require("minime.editor.paths")
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local api = vim.api
local uv = vim.uv or vim.loop

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

-- The loaded normal buffer whose file is `real`, if any.
local function loaded_buffer(real)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = api.nvim_buf_get_name(buf)
      if name ~= "" and paths.realpath(name) == real then
        return buf
      end
    end
  end
  return nil
end

local function buffer_text(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local eol = vim.bo[buf].eol or vim.bo[buf].fixeol
  return table.concat(lines, "\n") .. (eol and "\n" or "")
end

local function disk_text(real, limits)
  local reader, problem = file_reader.open(real, limits)
  if not reader then
    fail(problem and ("cannot read it: " .. problem) or "no such file", not problem)
  end
  local parts = {}
  while true do
    local data, err = reader:read(256 * 1024)
    if err then
      reader:close()
      fail("cannot read it: " .. err)
    end
    if not data then
      break
    end
    parts[#parts + 1] = data
  end
  reader:close()
  return table.concat(parts)
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

local function write_buffer(buf, content)
  local lines = vim.split(content, "\n", { plain = true })
  local eol = #lines > 1 and lines[#lines] == ""
  if eol then
    lines[#lines] = nil
  end
  local cursors = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    cursors[win] = api.nvim_win_get_cursor(win)
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines) -- one change: one undo step
  vim.bo[buf].eol = eol
  local count = api.nvim_buf_line_count(buf)
  for win, cursor in pairs(cursors) do
    local row = math.min(cursor[1], count)
    local width = #(api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or "")
    pcall(api.nvim_win_set_cursor, win, { row, math.min(cursor[2], width) })
  end
  local ok, err = pcall(api.nvim_buf_call, buf, function()
    vim.cmd("silent keepalt lockmarks write!")
  end)
  if not ok then
    fail("the buffer was changed but could not be written: " .. tostring(err))
  end
end

local function write_disk(real, content)
  local stat = uv.fs_stat(real)
  if stat and stat.type ~= "file" then
    -- Opening a FIFO for writing would wait for a reader, holding the editor.
    fail(string.format("cannot write it: not a regular file (a %s)", stat.type))
  end
  local fd, err = uv.fs_open(real, "w", 420)
  if not fd then
    fail("cannot write it: " .. tostring(err))
  end
  local _, werr = uv.fs_write(fd, content, 0)
  uv.fs_close(fd)
  if werr then
    fail("cannot write it: " .. tostring(werr))
  end
end

local function write(params, ctx)
  local real, rel = target(params, ctx)
  local content = params.content
  if type(content) ~= "string" then
    fail("content must be a string")
  end
  local buf = loaded_buffer(real)
  if buf then
    write_buffer(buf, content)
  else
    write_disk(real, content)
    local other = vim.fn.bufnr(real)
    if other > 0 and api.nvim_buf_is_loaded(other) then
      pcall(vim.cmd, "checktime " .. other)
    end
  end
  pcall(require("minime.ui.turn").apply, ctx.cwd, { { kind = "notice", text = "the agent wrote " .. rel } })
  return vim.NIL
end

local methods = { ["fs/read_text_file"] = read, ["fs/write_text_file"] = write }

--- Answer `method` for the session in `cwd`; never throws. `{ ok, value | error }` at once, or
--- `{ ok = true, pending = true }` and the answer later through the host's "tool_result" `reply`.
function M.call(method, params, cwd, reply)
  local fn = methods[method]
  if not fn then
    return { ok = false, error = "unknown method " .. tostring(method) }
  end
  local ctx = require("minime.config").tool_ctx(cwd)
  ctx.cwd = cwd
  local answer, waiting = nil, false
  async.run(function()
    return fn(type(params) == "table" and params or {}, ctx)
  end, function(ok, result)
    if ok then
      answer = { ok = true, value = result }
    elseif type(result) == "table" and type(result.message) == "string" then
      answer = { ok = false, error = result.message, missing = result.missing } -- missing: -32002
    else
      answer = { ok = false, error = "internal error in the editor: " .. tostring(result) }
    end
    if waiting then
      require("minime.host").notify("tool_result", { id = reply, answer = answer })
    end
  end)
  if answer then
    return answer
  end
  waiting = true
  return { ok = true, pending = true }
end

return M
