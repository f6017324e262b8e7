--- client_call_hierarchy { direction, symbol?, path?, line?, col? }: who calls a function
--- (incoming) or what it calls (outgoing), asked of the language servers attached in the editor
--- that offer call hierarchy (textDocument/prepareCallHierarchy, then
--- callHierarchy/incomingCalls or outgoingCalls).
--- -> { symbol = { name, kind, path, line, ... }, direction,
---      calls = [{ name, kind, path, line, col, end_line, end_col, text,
---                 sites = [{ line, col, end_line, end_col, text }], more_sites? }],
---      outside = n, cut? }
---
--- A call's position is its function's name; `sites` are where the call is made: in the
--- caller's file (incoming) or in the symbol's own file (outgoing), at most MAX_SITES of them
--- (`more_sites` counts the rest). A caller or callee outside the session's cwd (a library)
--- or denied is counted in `outside`, never named.
local args_mod = require("minime.editor.args")
local lsp = require("minime.editor.lsp")
local symbols = require("minime.editor.lsp_symbols")
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local PREPARE = "textDocument/prepareCallHierarchy"
local METHODS = {
  incoming = "callHierarchy/incomingCalls",
  outgoing = "callHierarchy/outgoingCalls",
}

-- At most this many items of one position are followed (servers give one, or a few for
-- overloads), and this many call sites are listed per call.
local MAX_ITEMS = 5
local MAX_SITES = 10

local function kind_of(item)
  local kind = vim.lsp.protocol.SymbolKind[item.kind]
  return type(kind) == "string" and kind:lower() or "unknown"
end

-- The call sites `ranges` in the file `uri`, placed for the model (in-scope ones only, at most
-- MAX_SITES), and how many more there are.
local function sites_of(out, uri, ranges, encoding)
  local sites = {}
  ranges = type(ranges) == "table" and ranges or {}
  for i, range in ipairs(ranges) do
    if i > MAX_SITES then
      break
    end
    local site = out:place(uri, range, encoding)
    if site then
      site.path = nil -- the caller's file (incoming) or the symbol's (outgoing): said above
      sites[#sites + 1] = site
    end
  end
  return sites, math.max(#ranges - MAX_SITES, 0)
end

-- Adds `sites` (and `more` not listed) to those of `item`, an entry already in the answer.
local function merge_sites(item, sites, more)
  local have = {}
  for _, site in ipairs(item.sites) do
    have[site.line .. ":" .. site.col] = true
  end
  for _, site in ipairs(sites) do
    if not have[site.line .. ":" .. site.col] then
      if #item.sites < MAX_SITES then
        item.sites[#item.sites + 1] = site
      else
        more = more + 1
      end
    end
  end
  local total = (item.more_sites or 0) + more
  item.more_sites = total > 0 and total or nil
end

local function handler(args, ctx)
  args = args_mod.table(args)
  local direction = args_mod.string(args, "direction", true)
  local method = METHODS[direction]
  if not method then
    args_mod.fail('direction must be "incoming" (who calls it) or "outgoing" (what it calls)')
  end
  local scope = scope_mod.new(ctx)
  local out = lsp.collector(scope, text.limits(ctx))
  local entry, line, col = symbols.target(scope, args)
  local clients = lsp.clients(entry, PREPARE, "call hierarchy")
  local params = lsp.position_params(entry, line, col)
  local symbol = nil
  local followed = 0
  for _, answer in ipairs(lsp.request(clients, PREPARE, params, entry.buf)) do
    local client, encoding = answer.client, answer.client.offset_encoding
    for _, item in ipairs(type(answer.result) == "table" and answer.result or {}) do
      if followed >= MAX_ITEMS or type(item) ~= "table" then
        break
      end
      followed = followed + 1
      if not symbol then
        local range = item.selectionRange or item.range
        symbol = out:place(item.uri, range, encoding, item.name)
        if symbol then
          symbol.name = text.line(tostring(item.name), 200)
          symbol.kind = kind_of(item)
        end
      end
      local ask = function()
        return { item = item }
      end
      for _, calls in ipairs(lsp.request({ client }, method, ask, entry.buf)) do
        for _, call in ipairs(type(calls.result) == "table" and calls.result or {}) do
          local other = type(call) == "table" and (call.from or call.to)
          if type(other) == "table" then
            -- Incoming: the sites are in the caller's file; outgoing: in the symbol's.
            local site_uri = call.from and other.uri or item.uri
            local sites, more = sites_of(out, site_uri, call.fromRanges, encoding)
            local extra = {
              name = text.line(tostring(other.name), 200),
              kind = kind_of(other),
              sites = sites,
              more_sites = more > 0 and more or nil,
            }
            local range = other.selectionRange or other.range
            local added, new = out:add(other.uri, range, encoding, extra, tostring(other.name))
            if added and not new then
              -- The same function again (a server may answer one call per site): one entry.
              merge_sites(added, sites, more)
            end
          end
        end
      end
    end
  end
  if not symbol and followed == 0 then
    args_mod.fail(
      string.format(
        "no function or method at %s:%d:%d for a call hierarchy; point at its name",
        entry.path,
        line,
        col
      )
    )
  end
  local result = out:result("calls")
  result.symbol = symbol
  result.direction = direction
  return result
end

return {
  description = 'Find who calls a function (direction "incoming") or what it calls '
    .. '("outgoing"), from the editor\'s language servers (where offered). Prefer {symbol}, '
    .. 'a name path such as "Greeter/greet" (optionally path), to {path, line, col}. '
    .. "Returns JSON {symbol, calls: [{name, kind, path, line, col, text, sites: [{line, col, "
    .. "text}]}], outside}: sites are where each call is made; outside counts the ones "
    .. "outside the cwd.",
  input_schema = (function()
    local schema = symbols.target_schema(
      "File relative to the working directory: where symbol is defined, or "
        .. "the file of line/col.",
      {
        direction = {
          type = "string",
          enum = { "incoming", "outgoing" },
          description = "incoming: the callers; outgoing: the functions it calls.",
        },
      }
    )
    schema.required = { "direction" }
    return schema
  end)(),
  -- The order the model reads the parameters and the answer's fields in (others: by name).
  fields = { "path", "line", "col", "end_line", "end_col", "text" },
  handler = handler,
}
