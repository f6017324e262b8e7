--- client_quickfix {}: the quickfix list (compiler errors, grep hits, test failures...).
--- -> { title, items = [{ path, line, col, type, text }] }
---
--- Only items whose file is in scope are kept; items without a file (the raw lines a tool
--- printed that did not parse) are dropped too, since they can name anything. In the title (the
--- command that made the list, e.g. ":grep foo ../other") every word that names a path out of
--- scope or denied becomes "[outside]". line and col are null when the item has none (0); type
--- is "error", "warn", "info", "note", "hint" or null. Each text is cut to ctx.max_line_bytes;
--- the list is bounded like diagnostics', and a cut says so at the end of the title.
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local TYPES = { E = "error", W = "warn", I = "info", N = "note", H = "hint" }

-- A word of the title that is no path resolves under the cwd and stays; a path out of scope
-- (absolute, `~/...`, `../...`) or a denied file name turns the whole word into "[outside]".
local function redact(title, scope)
  return (
    title:gsub("%S+", function(word)
      -- "--exclude-dir=/x" or "file:/x" hide a path after a separator: check every piece.
      for piece in word:gmatch("[^=:,;\"'`()]+") do
        if not scope:names_inside(piece) then
          return "[outside]"
        end
      end
      return nil
    end)
  )
end

local function positive(v)
  return (type(v) == "number" and v > 0) and v or vim.NIL
end

local function handler(_, ctx)
  local scope = scope_mod.new(ctx)
  local limits = text.limits(ctx)
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  local items, bytes, in_scope = {}, 0, 0
  for _, item in ipairs(qf.items or {}) do
    local entry = item.bufnr > 0 and scope:buffer(item.bufnr, false)
    if entry then
      in_scope = in_scope + 1
      local out = {
        path = entry.path,
        line = positive(item.lnum),
        col = positive(item.col),
        type = TYPES[(item.type or ""):upper()] or vim.NIL,
        text = text.line(item.text or "", limits.max_line_bytes),
      }
      local size = 80 + #out.path + #out.text
      if #items < limits.max_lines and (#items == 0 or bytes + size <= limits.max_bytes) then
        bytes = bytes + size
        items[#items + 1] = out
      end
    end
  end
  local title = text.line(redact(qf.title or "", scope), limits.max_line_bytes)
  if #items < in_scope then
    title = string.format("%s [cut: first %d of %d items shown]", title, #items, in_scope)
  end
  return { title = title, items = items }
end

return {
  description = "Get the editor's quickfix list: compiler errors, search hits or test failures "
    .. "the user collected. Returns JSON {title, items: [{path, line, col, type, "
    .. "text}]}.",
  input_schema = {
    type = "object",
    properties = vim.empty_dict(),
    additionalProperties = false,
  },
  -- The order the model reads the parameters and the answer's fields in (others: by name).
  fields = { "title", "path", "line", "col", "type", "text", "items" },
  handler = handler,
}
