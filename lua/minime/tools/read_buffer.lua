--- client_read_buffer { path, start_line?, end_line? }: the live text of an open file, unsaved
--- edits included.
--- -> { path, start_line, end_line, total_lines, modified, text }
---
--- Bounds: at most ctx.max_lines lines and ctx.max_bytes bytes, each line cut to
--- ctx.max_line_bytes (the cut line ends with "[line cut: N bytes long]"). When the answer stops
--- before the requested end, `end_line` is the last line actually returned and the text ends
--- with one extra line, "[cut: ...]", saying which start_line to ask for next. The fields stay
--- exactly the six above; the note sits in the text because that is what a small model reads.
---
--- A buffer not loaded is read from its file off the main loop; a file that is no regular file,
--- too large or too slow to read is an error naming the reason (see file_reader.lua).
---
--- Range: start_line defaults to 1 and must be within the buffer; end_line defaults to the end,
--- may not be before start_line, and is clamped to the last line when it is past it.
local args_mod = require("minime.editor.args")
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local fail = args_mod.fail

local function handler(args, ctx)
  args = args_mod.table(args)
  local path = args_mod.string(args, "path", true)
  local first = args_mod.line(args, "start_line") or 1
  local last = args_mod.line(args, "end_line")
  if last and last < first then
    fail(string.format("end_line (%d) is before start_line (%d)", last, first))
  end
  local scope = scope_mod.new(ctx)
  local entry = scope:find(path)
  if not entry then
    fail(scope_mod.NOT_OPEN)
  end
  local limits = text.limits(ctx)
  local got, problem = text.read(entry, first, last or math.huge, limits)
  if not got then
    fail(string.format("%s cannot be read: %s", entry.path, problem))
  end
  -- The read may have waited on the disk: the buffer may be gone since.
  if not vim.api.nvim_buf_is_valid(entry.buf) then
    fail(scope_mod.NOT_OPEN)
  end
  local total = got.total
  if first > total then
    fail(string.format("start_line %d is past the end: %s has %d lines", first, entry.path, total))
  end
  local wanted_last = math.min(last or total, total)
  local shown_last = first + #got.lines - 1
  local body = table.concat(got.lines, "\n")
  if shown_last < wanted_last then
    body = body
      .. string.format(
        "\n[cut: lines %d-%d not shown (output limit);" .. " call %s with start_line=%d for more]",
        shown_last + 1,
        wanted_last,
        require("minime.tools").name("read_buffer", ctx),
        shown_last + 1
      )
  end
  return {
    path = entry.path,
    start_line = first,
    end_line = shown_last,
    total_lines = total,
    modified = vim.bo[entry.buf].modified,
    text = body,
  }
end

return {
  description = "Read a file open in the editor, with the user's unsaved edits (read open files "
    .. "with this, not from disk). Pass a path from client_open_buffers, and optionally "
    .. "start_line/end_line (1-based, inclusive). Returns JSON {path, start_line, "
    .. "end_line, total_lines, modified, text}. Long files come in parts: when the text "
    .. "ends with a [cut: ...] line, call again with the start_line it gives.",
  input_schema = {
    type = "object",
    properties = {
      path = {
        type = "string",
        description = "Path of an open file, as client_open_buffers lists it.",
      },
      start_line = {
        type = "integer",
        minimum = 1,
        description = "First line to read (1-based). Default: 1.",
      },
      end_line = {
        type = "integer",
        minimum = 1,
        description = "Last line to read (inclusive). Default: the last line.",
      },
    },
    required = { "path" },
    additionalProperties = false,
  },
  -- The order the model reads the parameters and the answer's fields in (others: by name).
  fields = { "path", "start_line", "end_line", "total_lines", "modified", "text" },
  handler = handler,
}
