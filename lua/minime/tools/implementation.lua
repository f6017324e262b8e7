--- client_implementation { symbol?, path?, line?, col? }: where an interface or abstract
--- method is implemented, asked of the language servers attached in the editor
--- (textDocument/implementation), where the server offers it.
--- -> { locations = [{ path, line, col, end_line, end_col, text }], outside = n, cut? }
return require("minime.editor.lsp_symbols").locations_tool(
  "textDocument/implementation",
  "Find the implementations of an interface, abstract class or method, from "
    .. "the editor's language servers (where offered)."
)
