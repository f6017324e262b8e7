--- client_type_definition { symbol?, path?, line?, col? }: where the type of a symbol is
--- defined, asked of the language servers attached in the editor (textDocument/typeDefinition).
--- -> { locations = [{ path, line, col, end_line, end_col, text }], outside = n, cut? }
return require("minime.editor.lsp_symbols").locations_tool(
  "textDocument/typeDefinition",
  "Find where the type of a variable or expression is defined (its class), "
    .. "asking the editor's language servers."
)
