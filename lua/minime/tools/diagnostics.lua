--- client_diagnostics { path?, severity? }: what LSP servers and linters report (vim.diagnostic)
--- in the in-scope buffers, or in the one buffer `path` names.
--- -> { diagnostics = [{ path, line, col, end_line, end_col, severity, source, code, message }] }
---
--- Positions are 1-based (lines, byte columns); end_col is exclusive, as in LSP. severity is one
--- of "error", "warn", "info", "hint"; a severity argument keeps that level only. source and code
--- are null when the producer gives none. Each message is cut to ctx.max_line_bytes; the list is
--- bounded by ctx.max_lines entries and about ctx.max_bytes bytes, keeping the most severe first
--- (the answer is then ordered by path and position). The list is silent about a cut: the fields
--- are fixed, and the tool description tells the model to narrow with path or severity.
local args_mod = require("minime.editor.args")
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local NAMES = { "error", "warn", "info", "hint" } -- index = vim.diagnostic.severity value
local LEVEL = { error = 1, warn = 2, info = 3, hint = 4 }

local function str_or_null(v, cap)
  if v == nil or v == vim.NIL then
    return vim.NIL
  end
  return text.line(tostring(v), cap)
end

local function one_based(v, fallback)
  return (type(v) == "number" and v + 1) or fallback
end

local function handler(args, ctx)
  args = args_mod.table(args)
  local path = args_mod.string(args, "path")
  local severity = args_mod.enum(args, "severity", NAMES)
  local scope = scope_mod.new(ctx)
  local entries
  if path then
    local entry = scope:find(path)
    if not entry then
      args_mod.fail(scope_mod.NOT_OPEN)
    end
    entries = { entry }
  else
    entries = scope:buffers()
  end
  local limits = text.limits(ctx)
  local opts = severity and { severity = LEVEL[severity] } or nil
  local order = {}
  for i, entry in ipairs(entries) do
    order[entry.buf] = i
  end
  local all = {}
  -- One get() for all buffers, filtered: cheaper than one per buffer with many buffers open.
  local source = path and vim.diagnostic.get(entries[1].buf, opts) or vim.diagnostic.get(nil, opts)
  for _, d in ipairs(source) do
    local i = order[d.bufnr]
    if i then
      all[#all + 1] = { d = d, entry = entries[i], order = i }
    end
  end
  local function by_place(a, b)
    if a.order ~= b.order then
      return a.order < b.order
    end
    if a.d.lnum ~= b.d.lnum then
      return a.d.lnum < b.d.lnum
    end
    return (a.d.col or 0) < (b.d.col or 0)
  end
  table.sort(all, function(a, b)
    local sa, sb = a.d.severity or 4, b.d.severity or 4
    if sa ~= sb then
      return sa < sb
    end
    return by_place(a, b)
  end)
  local kept, bytes = {}, 0
  for _, item in ipairs(all) do
    if #kept >= limits.max_lines then
      break
    end
    local d = item.d
    local line = one_based(d.lnum, 1)
    local col = one_based(d.col, 1)
    local out = {
      path = item.entry.path,
      line = line,
      col = col,
      end_line = one_based(d.end_lnum, line),
      end_col = one_based(d.end_col, col),
      severity = NAMES[d.severity] or "hint",
      source = str_or_null(d.source, limits.max_line_bytes),
      code = str_or_null(d.code, limits.max_line_bytes),
      message = text.line(tostring(d.message or ""), limits.max_line_bytes),
    }
    local size = 120 + #out.path + #out.message
    if #kept > 0 and bytes + size > limits.max_bytes then
      break
    end
    bytes = bytes + size
    item.out = out
    kept[#kept + 1] = item
  end
  table.sort(kept, by_place)
  local diagnostics = {}
  for i, item in ipairs(kept) do
    diagnostics[i] = item.out
  end
  return { diagnostics = diagnostics }
end

return {
  description = "Get the errors and warnings that language servers and linters report in the open "
    .. "files. Returns JSON {diagnostics: [{path, line, col, end_line, end_col, "
    .. "severity, source, code, message}]}, positions 1-based. Long lists are cut, most "
    .. "severe kept; narrow with path or severity.",
  input_schema = {
    type = "object",
    properties = {
      path = {
        type = "string",
        description = "Only this open file (a path from client_open_buffers).",
      },
      severity = {
        type = "string",
        enum = { "error", "warn", "info", "hint" },
        description = "Only this level.",
      },
    },
    additionalProperties = false,
  },
  -- The order the model reads the parameters and the answer's fields in (others: by name).
  fields = { "path", "line", "col", "end_line", "end_col", "severity", "source", "code", "message" },
  handler = handler,
}
