--- client_symbols { path?, query? }: the symbols of a file (with path; nested ones as name
--- paths `Class/method`), or the workspace's symbols whose name contains query.
--- -> { symbols = [{ name, kind, path, line, col, end_line, end_col, text }], outside = n, cut? }
---
--- The workspace form asks workspace/symbol; when no attached server offers it (pylsp does
--- not), it searches the document symbols of the open files. Positions are the symbol's name.
local args_mod = require("minime.editor.args")
local lsp = require("minime.editor.lsp")
local lsp_symbols = require("minime.editor.lsp_symbols")
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local function handler(args, ctx)
  args = args_mod.table(args)
  local path = args_mod.string(args, "path")
  local query = args_mod.string(args, "query")
  if not path and not query then
    args_mod.fail("pass path (a file's symbols) or query (the workspace's symbols matching it)")
  end
  local scope = scope_mod.new(ctx)
  local out = lsp.collector(scope, text.limits(ctx))
  local needle = query and query:lower()
  local keep = function(name)
    return needle == nil or name:lower():find(needle, 1, true) ~= nil
  end
  local found
  if path then
    found = {}
    for _, sym in ipairs(lsp_symbols.document(lsp.buffer(scope, path))) do
      if keep(sym.name) then
        found[#found + 1] = sym
      end
    end
  else
    found = lsp_symbols.workspace(scope, query, keep)
  end
  for _, sym in ipairs(found) do
    local extra = { name = text.line(sym.name, 200), kind = sym.kind }
    out:add(sym.uri, sym.range, sym.encoding, extra, lsp_symbols.short_name(sym.name))
  end
  return out:result("symbols")
end

return {
  description = "List symbols (classes, functions, methods, variables) from the editor's "
    .. "language servers: with path, that file's symbols, nested ones as name paths such as "
    .. '"Greeter/greet" (pass these to client_definition\'s symbol); with query only, the '
    .. "workspace's symbols whose name contains it. Returns JSON {symbols: [{name, kind, path, "
    .. "line, col, end_line, end_col, text}], outside}.",
  input_schema = {
    type = "object",
    properties = {
      path = {
        type = "string",
        description = "File relative to the working directory whose symbols to list.",
      },
      query = {
        type = "string",
        description = "Only symbols whose name path contains this (case-insensitive); alone, "
          .. "searches the workspace.",
      },
    },
    additionalProperties = false,
  },
  -- The order the model reads the parameters and the answer's fields in (others: by name).
  fields = { "path", "line", "col", "end_line", "end_col", "text" },
  handler = handler,
}
