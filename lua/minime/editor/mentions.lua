--- `@path` mentions in a prompt: what each names, read for the ask (the host turns them into
--- ACP content blocks, rplugin/python3/minime/nvim/mentions.py).
---
---   mentions.parse(text)                     -- { { token = "@a.txt", path = "a.txt" }, ... }
---   mentions.collect(text, cwd, ctx, done)   -- done(list): what `ask` carries (ops.Mention)
---
--- A mention is `@` at the start of the prompt or after a space, then a path (relative to the
--- cwd, absolute, `~/…`), `@%` (the current buffer) or `@#` (the alternate one). Only a file or
--- directory whose real path (symlinks and `..` resolved) lies under the cwd and that no deny
--- pattern matches is read; any other is `{ mention, refused = why }` and nothing of it (not
--- even its resolved path) leaves this module. A file's text is its buffer's where it is loaded
--- (unsaved edits included), else the disk's, read off the main loop (file_reader.lua). An
--- image pasted into the input (`@clipboard-1.png`: editor/pasted_image.lua) is attached too.
local async = require("minime.editor.async")
local deny = require("minime.editor.deny")
local file_reader = require("minime.editor.file_reader")
local paths = require("minime.editor.paths")
local scope_mod = require("minime.editor.scope")

local uv = vim.uv or vim.loop

local M = {}

--- The image types an `image` block may carry, by file extension.
M.IMAGE_TYPES = {
  png = "image/png",
  jpg = "image/jpeg",
  jpeg = "image/jpeg",
  gif = "image/gif",
  webp = "image/webp",
}

local TEXT_TYPES =
  { md = "text/markdown", json = "application/json", html = "text/html", css = "text/css" }

M.OUTSIDE = "outside the working directory"
M.DENIED = "on the deny list"
M.NOT_FOUND = "no such file or directory"

-- Punctuation that may follow a mention in a sentence ("see @a.txt, then …").
local TRAILING = "[%.,;:!?%)%]\"']+$"

--- The mentions of `text`, each once, in order.
---@param text string
---@return {token: string, path: string}[]
function M.parse(text)
  local list, seen = {}, {}
  for pos, word in text:gmatch("()@(%S+)") do
    if pos == 1 or text:sub(pos - 1, pos - 1):match("%s") then
      if not seen[word] then
        seen[word] = true
        list[#list + 1] = { token = "@" .. word, path = word }
      end
    end
  end
  return list
end

--- The window the user works in: the current one unless it is a float (an input, the
--- conversation), else the previous one.
local function user_window()
  local win = vim.api.nvim_get_current_win()
  if vim.api.nvim_win_get_config(win).relative == "" then
    return win
  end
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  return prev ~= 0 and prev or win
end

--- The file name `@%` / `@#` stands for, or nil.
local function buffer_name(which)
  local win = user_window()
  local buf = vim.api.nvim_win_call(win, function()
    return vim.fn.bufnr(which)
  end)
  if buf <= 0 or vim.bo[buf].buftype ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(buf)
  return name ~= "" and name or nil
end

--- The absolute name `path` (as typed) means in `root`, or nil.
local function absolute(path, root)
  if path == "%" or path == "#" then
    return buffer_name(path)
  end
  local expanded = paths.expand(path)
  if not expanded or expanded:find("%z") then
    return nil
  end
  if expanded:sub(1, 1) ~= "/" then
    expanded = root .. "/" .. expanded
  end
  return expanded
end

--- The path typed, or it without trailing punctuation where only that names something.
local function existing(path, root)
  local abs = absolute(path, root)
  if abs and uv.fs_stat(abs) then
    return path, abs
  end
  local trimmed = path:gsub(TRAILING, "")
  if trimmed ~= path and trimmed ~= "" then
    local t_abs = absolute(trimmed, root)
    if t_abs and uv.fs_stat(t_abs) then
      return trimmed, t_abs
    end
  end
  return path, abs
end

-- The whole of a file not loaded, read off the main loop: text|nil, too_big, problem.
local function read_disk(real, max_bytes)
  local limits = { max_file_bytes = max_bytes, read_timeout_ms = 5000 }
  local text, problem = file_reader.read_all(real, limits)
  if problem == file_reader.too_large(limits) then
    return nil, true
  end
  return text, false, problem or (not text and "cannot read it" or nil)
end

--- An image pasted into the input (`@clipboard-1.png`, minime.editor.pasted_image), read like
--- an `@shot.png`; nil when the mention names none.
local function pasted_image(m, max_bytes)
  local images = package.loaded["minime.editor.pasted_image"] -- nothing pasted: not loaded
  local path = m.path:gsub(TRAILING, "")
  local image = images and images.file(path)
  if not image then
    return nil
  end
  local entry = { mention = "@" .. path, name = path, kind = "image" }
  entry.uri, entry.mime_type = vim.uri_from_fname(image.path), image.mime_type
  local data, too_big, problem = read_disk(image.path, max_bytes)
  if too_big then
    entry.too_big, entry.size = true, (uv.fs_stat(image.path) or {}).size
  elseif not data then
    return { mention = entry.mention, refused = problem or "cannot read it" }
  else
    entry.data = vim.base64.encode(data)
  end
  return entry
end

--- One mention resolved and read (runs in async.run). See the module's header.
local function resolve(m, scope, max_bytes)
  local refused = function(why)
    return { mention = m.token, refused = why }
  end
  local pasted = pasted_image(m, max_bytes)
  if pasted then
    return pasted
  end
  local root = scope.root
  local path, abs = existing(m.path, root)
  local token = "@" .. path
  if not abs then
    return refused(M.NOT_FOUND)
  end
  local real = paths.realpath(abs)
  local rel = real and (real == root and "." or scope:relative(real))
  if not rel then
    return refused(M.OUTSIDE)
  end
  local stat = uv.fs_stat(real)
  if not stat then
    return refused(M.NOT_FOUND)
  end
  if deny.file(scope.deny, abs, root) or (stat.type ~= "directory" and not scope:file(abs)) then
    return refused(M.DENIED)
  end
  local entry = { mention = token, name = rel, uri = vim.uri_from_fname(real) }
  if stat.type == "directory" then
    entry.kind = "directory"
    return entry
  end
  if stat.type ~= "file" then
    return refused("not a regular file")
  end
  local ext = (real:match("%.([%w]+)$") or ""):lower()
  local image = M.IMAGE_TYPES[ext]
  entry.kind = image and "image" or "file"
  entry.mime_type = image or TEXT_TYPES[ext] or "text/plain"
  local buf = not image and paths.loaded_buffer(real) or nil
  local text, too_big, problem
  if buf then
    text = paths.buffer_text(buf)
    too_big = #text > max_bytes
  else
    text, too_big, problem = read_disk(real, max_bytes)
  end
  if too_big then
    entry.too_big, entry.size = true, buf and #text or stat.size
    return entry
  elseif not text then
    return refused(problem or "cannot read it")
  end
  if image then
    entry.data = vim.base64.encode(text)
  elseif text:find("%z") then
    entry.binary = true -- not text: a link
  else
    entry.text = text
  end
  return entry
end

--- Resolve and read every mention of `text` in `cwd`; `done(list)` on the main loop
--- (at once when there is none). `ctx`: { deny = patterns|nil, max_bytes = integer }.
---@param text string
---@param cwd string
---@param ctx table
---@param done fun(list: table[])
function M.collect(text, cwd, ctx, done)
  local found = M.parse(text)
  if #found == 0 then
    return done({})
  end
  local ok, scope = pcall(scope_mod.new, { cwd = cwd, deny = ctx.deny })
  if not ok then
    local list = {}
    for i, m in ipairs(found) do
      list[i] = { mention = m.token, refused = "the working directory is not available" }
    end
    return done(list)
  end
  async.run(function()
    local list = {}
    for i, m in ipairs(found) do
      local fine, entry = pcall(resolve, m, scope, ctx.max_bytes)
      list[i] = fine and entry or { mention = m.token, refused = "cannot read it" }
    end
    return list
  end, function(fine, list)
    done(fine and list or {})
  end)
end

return M
