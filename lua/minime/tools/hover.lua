--- client_hover { symbol?, path?, line?, col? }: what the language server shows on hover
--- (signature, documentation), as markdown.
--- -> { path, line, col, text }   (text "" when the server has nothing to say there; "" and
---    outside = 1 when the symbol is defined only outside the cwd: a library's docstring is
---    its file's text). Paths out of scope in the text are "[outside]".
local args_mod = require("minime.editor.args")
local lsp = require("minime.editor.lsp")
local symbols = require("minime.editor.lsp_symbols")
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local METHOD = "textDocument/hover"

--- Whether the symbol at the position is defined only outside the scope (a library's file):
--- its docstring is that file's text, not shown. A server that cannot say keeps the hover.
local function defined_outside(scope, entry, line, col)
  local out = lsp.collector(scope, { max_lines = 50, max_bytes = 100000, max_line_bytes = 200 })
  local ok = pcall(lsp.locations_at, out, entry, line, col, "textDocument/definition")
  return ok and out.outside > 0 and #out.items == 0
end

local function handler(args, ctx)
  args = args_mod.table(args)
  local scope = scope_mod.new(ctx)
  local limits = text.limits(ctx)
  local entry, line, col = symbols.target(scope, args)
  local clients = lsp.clients(entry, METHOD)
  local params = lsp.position_params(entry, line, col)
  local answers = lsp.request(clients, METHOD, params, entry.buf)
  local parts = {}
  for _, answer in ipairs(answers) do
    local result = answer.result
    if type(result) == "table" and result.contents then
      local lines = vim.lsp.util.convert_input_to_markdown_lines(result.contents)
      local body = vim.trim(table.concat(lines, "\n"))
      if body ~= "" then
        parts[#parts + 1] = body
      end
    end
  end
  local body = text.sanitize(table.concat(parts, "\n\n---\n\n"))
  if body ~= "" and defined_outside(scope, entry, line, col) then
    return { path = entry.path, line = line, col = col, text = "", outside = 1 }
  end
  body = scope:scrub(body)
  if #body > limits.max_bytes then
    body = body:sub(1, limits.max_bytes) .. "\n[cut: hover text longer than the output limit]"
  end
  return { path = entry.path, line = line, col = col, text = body }
end

return {
  description = "Show what the editor's language server says about a symbol on hover: its "
    .. "signature and documentation, as markdown. Prefer naming it: {symbol} with a name or "
    .. 'name path such as "Greeter/greet" (optionally path); or {path, line, col} '
    .. "(1-based). Returns JSON {path, line, col, text}.",
  input_schema = symbols.target_schema(
    "File relative to the working directory: where symbol is defined, or "
      .. "the file of line/col."
  ),
  -- The order the model reads the parameters and the answer's fields in (others: by name).
  fields = { "path", "line", "col", "text" },
  handler = handler,
}
