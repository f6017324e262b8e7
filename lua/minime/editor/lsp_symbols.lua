--- Finding symbols by name for the language-server tools: a file's document symbols (name
--- paths `Class/method`), the workspace's symbols matching a query (workspace/symbol, or, when
--- no server offers it — pylsp does not — the document symbols of the open files), and the
--- position `{symbol, path?}` designates, for the tools' name-based forms.
local args_mod = require("minime.editor.args")
local lsp = require("minime.editor.lsp")

local fail = args_mod.fail

local M = {}

local DOC = "textDocument/documentSymbol"
local WS = "workspace/symbol"

--- The last name of a name path (`greet` of `Greeter/greet`).
function M.short_name(name)
  return name:match("([^/]+)$") or name
end

--- The symbols of `entry`'s file: { { name, kind, uri, range, encoding } }.
function M.document(entry, timeout_ms)
  local params = function()
    return { textDocument = { uri = vim.uri_from_bufnr(entry.buf) } }
  end
  local found = {}
  local uri = vim.uri_from_bufnr(entry.buf)
  local clients = lsp.clients(entry, DOC)
  for _, answer in ipairs(lsp.request(clients, DOC, params, entry.buf, timeout_ms)) do
    for _, sym in ipairs(lsp.flatten_symbols(answer.result, uri)) do
      sym.encoding = answer.client.offset_encoding
      found[#found + 1] = sym
    end
  end
  return found
end

-- The open in-scope files with a client attached that offers document symbols.
local function served_buffers(scope)
  local list = {}
  for _, entry in ipairs(scope:buffers()) do
    if vim.api.nvim_buf_is_loaded(entry.buf) then
      for _, client in ipairs(vim.lsp.get_clients({ bufnr = entry.buf })) do
        if client:supports_method(DOC, entry.buf) then
          list[#list + 1] = entry
          break
        end
      end
    end
  end
  return list
end

--- The workspace's symbols whose name path `keep(name)` accepts, sent `query` as the server's
--- filter: { { name, kind, uri, range, encoding } }.
function M.workspace(scope, query, keep, timeout_ms)
  local clients = {}
  for _, client in ipairs(vim.lsp.get_clients()) do
    if client:supports_method(WS) then
      clients[#clients + 1] = client
    end
  end
  local found = {}
  if #clients > 0 then
    local params = function()
      return { query = query }
    end
    local kinds = vim.lsp.protocol.SymbolKind
    for _, answer in ipairs(lsp.request(clients, WS, params, nil, timeout_ms)) do
      for _, sym in ipairs(type(answer.result) == "table" and answer.result or {}) do
        local loc = type(sym) == "table" and sym.location
        if type(loc) == "table" and loc.range and type(sym.name) == "string" then
          local name = sym.name
          if type(sym.containerName) == "string" and sym.containerName ~= "" then
            name = sym.containerName .. "/" .. name
          end
          if keep(name) then
            local kind = kinds[sym.kind]
            found[#found + 1] = {
              name = name,
              kind = type(kind) == "string" and kind:lower() or "unknown",
              uri = loc.uri,
              range = loc.range,
              encoding = answer.client.offset_encoding,
            }
          end
        end
      end
    end
    return found
  end
  local entries = served_buffers(scope)
  if #entries == 0 then
    fail(
      "no language server offers workspace symbols and none is attached to an open file;"
        .. " pass path to search one file's symbols"
    )
  end
  for _, entry in ipairs(entries) do
    for _, sym in ipairs(M.document(entry, timeout_ms)) do
      if keep(sym.name) then
        found[#found + 1] = sym
      end
    end
  end
  return found
end

--- The definitions of the symbol named `wanted` (a name or name path), in file `path` when
--- given, else in the workspace.
function M.find(scope, wanted, path, timeout_ms)
  local keep = function(name)
    return lsp.name_matches(name, wanted)
  end
  if path then
    local entry = lsp.buffer(scope, path)
    local found = {}
    for _, sym in ipairs(M.document(entry, timeout_ms)) do
      if keep(sym.name) then
        found[#found + 1] = sym
      end
    end
    return found
  end
  local last = wanted:match("([^/]+)$") or wanted
  return M.workspace(scope, last, keep, timeout_ms)
end

--- Where symbol `sym` (of M.find) is named, when in scope: its entry (the file loaded for the
--- server) and the 1-based line and byte column of its name; nil when outside the scope.
function M.place(scope, sym)
  local real, rel = scope:file(vim.uri_to_fname(sym.uri))
  if not real then
    return nil
  end
  local entry = lsp.buffer(scope, rel)
  local row = sym.range.start.line
  local str = vim.api.nvim_buf_get_lines(entry.buf, row, row + 1, false)[1] or ""
  local character = sym.range.start.character
  local ok, b = pcall(vim.str_byteindex, str, sym.encoding or "utf-16", character, false)
  local col = (ok and b or 0) + 1
  col = str:find(M.short_name(sym.name), col, true) or col
  return entry, row + 1, col
end

--- The position `{symbol, path?}` designates: the in-scope entry and the 1-based line and byte
--- column of the first matching symbol's name. Fails (model-facing) when none matches.
function M.position(scope, wanted, path, timeout_ms)
  for _, sym in ipairs(M.find(scope, wanted, path, timeout_ms)) do
    local entry, line, col = M.place(scope, sym)
    if entry then
      return entry, line, col
    end
  end
  fail(M.not_found(wanted, path))
end

--- The error for a symbol name that matches nothing.
function M.not_found(wanted, path)
  return string.format(
    "no symbol %q found%s; call client_symbols to list the names",
    wanted,
    path and " in " .. path or ""
  )
end

--- The position a positional tool's arguments designate: `{path, line, col}`, or
--- `{symbol, path?}` (a name path, found through the symbols). Returns entry, line, col.
function M.target(scope, args, timeout_ms)
  local symbol = args_mod.string(args, "symbol")
  local path = args_mod.string(args, "path")
  local line = args_mod.line(args, "line")
  local col = args_mod.line(args, "col")
  if symbol then
    if line or col then
      fail("pass either symbol (and optionally path) or path, line and col, not both")
    end
    return M.position(scope, symbol, path, timeout_ms)
  end
  if not (path and line and col) then
    fail("pass symbol (a name such as Class/method), or path, line and col (1-based)")
  end
  return lsp.buffer(scope, path), line, col
end

--- The input schema of a tool that takes a symbol by name or by position: {symbol} (preferred)
--- or {path, line, col}; `path_says` describes `path`, `extra` adds properties.
---@param path_says string
---@param extra? table<string, table>
function M.target_schema(path_says, extra)
  local properties = {
    symbol = {
      type = "string",
      description = "Name or name path (Class/method) of the symbol. Preferred form.",
    },
    path = { type = "string", description = path_says },
    line = { type = "integer", minimum = 1, description = "Line (1-based), with path and col." },
    col = { type = "integer", minimum = 1, description = "Column (1-based), with path and line." },
  }
  for name, prop in pairs(extra or {}) do
    properties[name] = prop
  end
  return { type = "object", properties = properties, additionalProperties = false }
end

--- A whole tool (description, schema, handler) answering the locations an LSP `method` gives
--- for a symbol, named or at a position (implementation, type_definition). `what` is the
--- description's first sentence; the rest (the forms, the answer) is the same for each.
---@param method string
---@param what string
function M.locations_tool(method, what)
  return {
    description = what
      .. " Prefer naming the symbol: {symbol} with a name or name path such as "
      .. '"Greeter/greet" (optionally path); or {path, line, col} (1-based). Returns JSON '
      .. "{locations: [{path, line, col, end_line, end_col, text}], outside}: outside counts "
      .. "places outside the working directory, which are not named.",
    input_schema = M.target_schema(
      "File relative to the working directory: where symbol is defined, or the file of line/col."
    ),
    -- The order the model reads the parameters and the answer's fields in (others: by name).
    fields = { "path", "line", "col", "end_line", "end_col", "text" },
    handler = function(args, ctx)
      local scope = require("minime.editor.scope").new(ctx)
      local out = lsp.collector(scope, require("minime.editor.text").limits(ctx))
      local entry, line, col = M.target(scope, args_mod.table(args))
      lsp.locations_at(out, entry, line, col, method)
      return out:result("locations")
    end,
  }
end

return M
