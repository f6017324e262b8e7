--- client_definition { symbol?, path?, line?, col? }: where a symbol is defined, asked of the
--- language servers attached in the editor.
--- -> { locations = [{ path, line, col, end_line, end_col, text }], outside = n, cut? }
---
--- Two forms: `{symbol, path?}` names the symbol (a name or a name path `Class/method`, found
--- through the document symbols of `path` or the workspace's symbols; the answer is where those
--- symbols are); `{path, line, col}` asks textDocument/definition at that position. Locations
--- outside the session's cwd (a library's file) are counted in `outside`, never named.
local args_mod = require("minime.editor.args")
local lsp = require("minime.editor.lsp")
local symbols = require("minime.editor.lsp_symbols")
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local METHOD = "textDocument/definition"

-- At most this many symbols of a name are followed to their definitions.
local MAX_FOLLOWED = 20

-- The definitions at one position, added to `out`.
local function define_at(out, entry, line, col, timeout_ms)
  lsp.locations_at(out, entry, line, col, METHOD, timeout_ms)
end

local function handler(args, ctx)
  args = args_mod.table(args)
  local scope = scope_mod.new(ctx)
  local out = lsp.collector(scope, text.limits(ctx))
  local symbol = args_mod.string(args, "symbol")
  if symbol and args.line == nil and args.col == nil then
    -- Each symbol of that name is followed to its definition: a file's symbols include the
    -- names it imports, whose definition is elsewhere.
    local path = args_mod.string(args, "path")
    local found = symbols.find(scope, symbol, path)
    if #found == 0 then
      args_mod.fail(symbols.not_found(symbol, path))
    end
    for i, sym in ipairs(found) do
      if i > MAX_FOLLOWED then
        break
      end
      local entry, line, col = symbols.place(scope, sym)
      if entry then
        define_at(out, entry, line, col)
      else
        out.outside = out.outside + 1
      end
    end
    return out:result("locations")
  end
  local entry, line, col = symbols.target(scope, args)
  define_at(out, entry, line, col)
  return out:result("locations")
end

return {
  description = "Find where a symbol is defined, asking the editor's language servers. Prefer "
    .. 'naming it: {symbol} with a name or name path such as "Greeter/greet" (optionally '
    .. "path, the file to look in); use {path, line, col} (1-based) for a use site. Returns "
    .. "JSON {locations: [{path, line, col, end_line, end_col, text}], outside}: outside "
    .. "counts definitions outside the working directory (libraries), which are not named.",
  input_schema = symbols.target_schema(
    "File relative to the working directory: where to look up symbol, or "
      .. "the file of line/col."
  ),
  -- The order the model reads the parameters and the answer's fields in (others: by name).
  fields = { "path", "line", "col", "end_line", "end_col", "text" },
  handler = handler,
}
