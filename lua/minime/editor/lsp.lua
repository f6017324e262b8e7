--- What the language-server tools (definition, references, symbols, hover) share: the buffer a
--- path names (loaded without side effects when it is not open, a running client attached),
--- LSP requests that wait without holding the editor (editor/async.lua, with a timeout), and
--- 1-based byte positions turned into the server's. Answers become locations in
--- lsp_locations.lua (re-exported here), names become positions in lsp_symbols.lua.
local args_mod = require("minime.editor.args")
local async = require("minime.editor.async")
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local fail = args_mod.fail
local uv = vim.uv or vim.loop

local M = {}

--- How long one LSP request may take before the tool answers that the server did not answer.
M.TIMEOUT_MS = 5000

local locations = require("minime.editor.lsp_locations")

--- Files larger than this are not loaded for a server (nor read for a location's line).
local MAX_FILE_BYTES = locations.MAX_FILE_BYTES

M.collector = locations.collector
M.add_locations = locations.add_locations

-- The error for a file no language server serves, naming its filetype.
local function no_server(path, buf)
  local ft = vim.bo[buf].filetype
  return string.format(
    "no language server is attached to %s (%s); the user has to start one for it",
    path,
    ft ~= "" and "filetype " .. ft or "no filetype detected"
  )
end

-- Whether `real` lies under a client's root or one of its workspace folders.
local function covers(client, real)
  local roots = {}
  if type(client.root_dir) == "string" then
    roots[#roots + 1] = client.root_dir
  end
  for _, folder in ipairs(client.workspace_folders or {}) do
    roots[#roots + 1] = folder.name or vim.uri_to_fname(folder.uri)
  end
  for _, root in ipairs(roots) do
    local r = uv.fs_realpath(root) or root
    if real:sub(1, #r + 1) == r .. "/" then
      return true
    end
  end
  return false
end

-- The running clients that would serve a file of filetype `ft` at `real`: those whose config
-- names the filetype (or, naming none, already serve a buffer of it) and whose root covers it.
local function clients_for(ft, real)
  local found = {}
  for _, client in ipairs(vim.lsp.get_clients()) do
    local fts = client.config and client.config.filetypes
    local serves = false
    if type(fts) == "table" then
      serves = vim.tbl_contains(fts, ft)
    else
      for buf in pairs(client.attached_buffers or {}) do
        if vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].filetype == ft then
          serves = true
          break
        end
      end
    end
    if serves and covers(client, real) then
      found[#found + 1] = client
    end
  end
  return found
end

-- Load the file `real` into a new hidden, unlisted buffer without autocommands (no plugin
-- starts, no swap file), its filetype set silently, and attach the running clients that serve
-- it. Returns the buffer.
local function load_quietly(real, rel)
  local stat = uv.fs_stat(real)
  if not stat or stat.type ~= "file" then
    fail(rel .. " is not a file")
  end
  if stat.size > MAX_FILE_BYTES then
    fail(string.format("%s is too large for the language-server tools (%d bytes)", rel, stat.size))
  end
  -- No autocommand at all (BufNew, BufRead, FileType): other plugins must not start on it.
  local saved = vim.o.eventignore
  vim.o.eventignore = "all"
  local created = vim.fn.bufexists(real) == 0
  local ok, buf = pcall(function()
    local b = vim.fn.bufadd(real)
    if created then
      vim.bo[b].buflisted = false
    end
    if not vim.api.nvim_buf_is_loaded(b) then
      vim.bo[b].swapfile = false
      vim.fn.bufload(b)
    end
    if vim.bo[b].filetype == "" then
      local ft = vim.filetype.match({ buf = b, filename = real })
      if ft then
        vim.bo[b].filetype = ft
      end
    end
    return b
  end)
  vim.o.eventignore = saved
  if not ok then
    fail(string.format("%s could not be loaded for the language server", rel))
  end
  if #vim.lsp.get_clients({ bufnr = buf }) == 0 and vim.bo[buf].filetype ~= "" then
    for _, client in ipairs(clients_for(vim.bo[buf].filetype, real)) do
      vim.lsp.buf_attach_client(buf, client.id)
    end
  end
  if created and #vim.lsp.get_clients({ bufnr = buf }) == 0 then
    -- No server for it: the buffer we made would only linger, hidden.
    local message = no_server(rel, buf)
    vim.o.eventignore = "all"
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
    vim.o.eventignore = saved
    fail(message)
  end
  return buf
end

--- The buffer `path` names, for a language server: an open in-scope buffer, or an in-scope
--- file loaded quietly. Returns { buf, path (relative), real }. Fails (model-facing) when the
--- path is outside the scope, denied or no file: one message for all, naming nothing.
function M.buffer(scope, path)
  local entry = scope:find(path)
  if entry and vim.api.nvim_buf_is_loaded(entry.buf) then
    return entry
  end
  if type(path) ~= "string" or path:find("%z") then
    fail(scope_mod.NOT_OPEN)
  end
  local abs = path:sub(1, 1) == "/" and path or (scope.root .. "/" .. path)
  local real, rel = scope:file(abs)
  if not real then
    fail("path is not a file under the working directory; pass a path relative to it")
  end
  local buf = load_quietly(real, rel)
  return { buf = buf, path = text.sanitize(rel), real = real }
end

--- The clients attached to `entry.buf` that offer `method`; fails naming the filetype when
--- none is attached, and the servers and `what` (default: the method) when none offers it.
---@param what? string what the model asked for, in words ("call hierarchy")
function M.clients(entry, method, what)
  local attached = vim.lsp.get_clients({ bufnr = entry.buf })
  if #attached == 0 then
    fail(no_server(entry.path, entry.buf))
  end
  local offering = {}
  for _, client in ipairs(attached) do
    if client:supports_method(method, entry.buf) then
      offering[#offering + 1] = client
    end
  end
  if #offering == 0 then
    local names = {}
    for _, client in ipairs(attached) do
      names[#names + 1] = client.name
    end
    local several = #names > 1
    fail(
      string.format(
        "the language server%s attached to %s (%s) %s not offer %s",
        several and "s" or "",
        entry.path,
        table.concat(names, ", "),
        several and "do" or "does",
        what or method
      )
    )
  end
  return offering
end

--- Ask each of `clients` for `method` at once and wait (without holding the editor) for all
--- answers or the timeout. `params(client)` builds each client's params (encodings differ).
--- Returns { { client, result } } of the clients that answered; fails when none did.
function M.request(clients, method, params, buf, timeout_ms)
  timeout_ms = timeout_ms or M.TIMEOUT_MS
  local answers, errors = async.wait(function(done)
    local got, errs, left = {}, {}, #clients
    local ids = {}
    local timer = uv.new_timer()
    local function finish()
      if timer and not timer:is_closing() then
        timer:stop()
        timer:close()
      end
      done(got, errs)
    end
    for _, client in ipairs(clients) do
      local ok, id = client:request(method, params(client), function(err, result)
        ids[client.id] = nil
        if err then
          errs[#errs + 1] = client.name .. ": " .. tostring(err.message or err)
        else
          got[#got + 1] = { client = client, result = result }
        end
        left = left - 1
        if left == 0 then
          finish()
        end
      end, buf)
      if ok then
        ids[client.id] = id
      else
        errs[#errs + 1] = client.name .. ": the server is not running"
        left = left - 1
      end
    end
    if left == 0 then
      return finish()
    end
    timer:start(timeout_ms, 0, function()
      vim.schedule(function()
        for _, client in ipairs(clients) do
          if ids[client.id] then
            pcall(client.cancel_request, client, ids[client.id])
            errs[#errs + 1] = client.name .. string.format(": no answer within %d ms", timeout_ms)
          end
        end
        finish()
      end)
    end)
  end)
  if #answers == 0 then
    fail(method .. " failed: " .. (#errors > 0 and table.concat(errors, "; ") or "no answer"))
  end
  return answers
end

--- The 0-based LSP position of 1-based `line`, byte column `col` in `buf` for `client`'s
--- encoding. Fails (model-facing) when the position is not in the buffer.
function M.position(buf, line, col, client)
  local count = vim.api.nvim_buf_line_count(buf)
  if line > count then
    fail(string.format("line %d is past the end: the file has %d lines", line, count))
  end
  local str = vim.api.nvim_buf_get_lines(buf, line - 1, line, false)[1] or ""
  if col > #str + 1 then
    fail(string.format("col %d is past the end of line %d (%d bytes long)", col, line, #str))
  end
  local character = vim.str_utfindex(str, client.offset_encoding or "utf-16", col - 1, false)
  return { line = line - 1, character = character }
end

--- Params for a request at a position in `entry.buf`.
function M.position_params(entry, line, col)
  return function(client)
    return {
      textDocument = { uri = vim.uri_from_bufnr(entry.buf) },
      position = M.position(entry.buf, line, col, client),
    }
  end
end

--- Ask `method` (definition, typeDefinition, implementation, references: answers that are
--- locations) at a position of `entry` and add the locations to `out`. `extra` goes into the
--- params (references' context).
function M.locations_at(out, entry, line, col, method, timeout_ms, extra)
  local at = M.position_params(entry, line, col)
  local params = function(client)
    return vim.tbl_extend("force", at(client), extra or {})
  end
  local clients = M.clients(entry, method)
  for _, answer in ipairs(M.request(clients, method, params, entry.buf, timeout_ms)) do
    M.add_locations(out, answer.result, answer.client.offset_encoding)
  end
end

--- The symbols of one documentSymbol answer, flattened with name paths (`Class/method`):
--- { { name, kind, uri, range } } (DocumentSymbol: its selectionRange; SymbolInformation: its
--- location, the name path built from containerName).
function M.flatten_symbols(result, uri)
  local flat = {}
  local kinds = vim.lsp.protocol.SymbolKind
  local function walk(list, prefix)
    for _, sym in ipairs(list or {}) do
      if type(sym) == "table" and type(sym.name) == "string" then
        local name = prefix and (prefix .. "/" .. sym.name) or sym.name
        if sym.location then
          local container = sym.containerName
          if type(container) == "string" and container ~= "" and not prefix then
            name = container .. "/" .. sym.name
          end
          flat[#flat + 1] = {
            name = name,
            kind = kinds[sym.kind],
            uri = sym.location.uri,
            range = sym.location.range,
          }
        else
          flat[#flat + 1] = {
            name = name,
            kind = kinds[sym.kind],
            uri = uri,
            range = sym.selectionRange or sym.range,
          }
          walk(sym.children, name)
        end
      end
    end
  end
  walk(type(result) == "table" and result or {}, nil)
  for _, sym in ipairs(flat) do
    sym.kind = type(sym.kind) == "string" and sym.kind:lower() or "unknown"
  end
  return flat
end

--- Whether name path `name` matches what the model asked for, `wanted`: the same path, or one
--- ending with it at a `/` (`greet` and `Greeter/greet` both match `Greeter/greet`).
function M.name_matches(name, wanted)
  return name == wanted or (#name > #wanted and name:sub(-#wanted - 1) == "/" .. wanted)
end

return M
