--- client_implementation { symbol?, path?, line?, col? }: where an interface or abstract
--- method is implemented, asked of the language servers attached in the editor
--- (textDocument/implementation), where the server offers it.
--- -> { locations = [{ path, line, col, end_line, end_col, text }], outside = n, cut? }
local symbols = require("minime.editor.lsp_symbols")

return {
  description = "Find the implementations of an interface, abstract class or method, from "
    .. "the editor's language servers (where offered). Prefer naming the symbol: {symbol} "
    .. "with a name or name path such as "
    .. "\"Greeter/greet\" (optionally path); or {path, line, col} (1-based). Returns JSON "
    .. "{locations: [{path, line, col, end_line, end_col, text}], outside}: outside counts "
    .. "places outside the working directory, which are not named.",
  input_schema = symbols.target_schema(
    "File relative to the working directory: where symbol is defined, or "
      .. "the file of line/col."
  ),
  handler = symbols.locations_handler("textDocument/implementation"),
}
