--- client_references { symbol?, path?, line?, col?, include_declaration? }: where a symbol is
--- used, asked of the language servers attached in the editor (textDocument/references).
--- -> { locations = [{ path, line, col, end_line, end_col, text }], outside = n, cut? }
---
--- The symbol is named (`{symbol, path?}`, a name path found through the symbols) or given by
--- position (`{path, line, col}`). Uses outside the session's cwd are counted, never named.
local args_mod = require("minime.editor.args")
local lsp = require("minime.editor.lsp")
local symbols = require("minime.editor.lsp_symbols")
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local METHOD = "textDocument/references"

local function handler(args, ctx)
  args = args_mod.table(args)
  local include = args.include_declaration
  if include == nil or include == vim.NIL then
    include = true
  elseif type(include) ~= "boolean" then
    args_mod.fail("include_declaration must be true or false")
  end
  local scope = scope_mod.new(ctx)
  local out = lsp.collector(scope, text.limits(ctx))
  local entry, line, col = symbols.target(scope, args)
  local context = { context = { includeDeclaration = include } }
  lsp.locations_at(out, entry, line, col, METHOD, nil, context)
  return out:result("locations")
end

return {
  description = "Find where a symbol is used, asking the editor's language servers. Prefer "
    .. 'naming it: {symbol} with a name or name path such as "Greeter/greet" (optionally '
    .. "path, the file that defines it); or {path, line, col} (1-based). Returns JSON "
    .. "{locations: [{path, line, col, end_line, end_col, text}], outside}: outside counts "
    .. "uses outside the working directory, which are not named.",
  input_schema = symbols.target_schema(
    "File relative to the working directory: where symbol is defined, or "
      .. "the file of line/col.",
    {
      include_declaration = {
        type = "boolean",
        description = "Also list the declaration itself. Default: true.",
      },
    }
  ),
  -- The order the model reads the parameters and the answer's fields in (others: by name).
  fields = { "path", "line", "col", "end_line", "end_col", "text" },
  handler = handler,
}
