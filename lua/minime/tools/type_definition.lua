--- client_type_definition { symbol?, path?, line?, col? }: where the type of a symbol is
--- defined, asked of the language servers attached in the editor (textDocument/typeDefinition).
--- -> { locations = [{ path, line, col, end_line, end_col, text }], outside = n, cut? }
local args_mod = require("minime.editor.args")
local lsp = require("minime.editor.lsp")
local symbols = require("minime.editor.lsp_symbols")
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local function handler(args, ctx)
  args = args_mod.table(args)
  local scope = scope_mod.new(ctx)
  local out = lsp.collector(scope, text.limits(ctx))
  local entry, line, col = symbols.target(scope, args, ctx.lsp_timeout_ms)
  lsp.locations_at(out, entry, line, col, "textDocument/typeDefinition", ctx.lsp_timeout_ms)
  return out:result("locations")
end

return {
  description = "Find where the type of a variable or expression is defined (its class), "
    .. "asking the editor's language servers. Prefer naming the symbol: {symbol} with a name "
    .. "or name path such as "
    .. "\"Greeter/greet\" (optionally path); or {path, line, col} (1-based). Returns JSON "
    .. "{locations: [{path, line, col, end_line, end_col, text}], outside}: outside counts "
    .. "places outside the working directory, which are not named.",
  input_schema = {
    type = "object",
    properties = {
      symbol = {
        type = "string",
        description = "Name or name path (Class/method) of the symbol. Preferred form.",
      },
      path = {
        type = "string",
        description = "File relative to the working directory: where symbol is defined, or "
          .. "the file of line/col.",
      },
      line = { type = "integer", minimum = 1, description = "Line (1-based), with path and col." },
      col = {
        type = "integer",
        minimum = 1,
        description = "Column (1-based), with path and line.",
      },
    },
    additionalProperties = false,
  },
  handler = handler,
}
