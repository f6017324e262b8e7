--- client_selection {}: the text the user selected.
--- -> { path, start = { line, col }, end = { line, col }, mode, text }
---
--- Which selection: ctx.selection when the host captured one at ask time (`:'<,'>MiniMeAsk`):
--- { bufnr, start_line, end_line, start_col?, end_col?, mode? } with 1-based lines and byte
--- columns, mode "v" / "V" / "\22" (or "char" / "line" / "block"; default "line" when no
--- columns). Else the visual selection in force if the user is in visual mode now, else the last
--- one of the file the user works in (marks '< '>, vim.fn.visualmode()).
---
--- No selection (none made, or in a buffer out of scope) is a plain answer, not an error, so the
--- model can go on: { path = null, start = null, end = null, mode = "none", text = "" }.
---
--- Columns are 1-based byte columns, end inclusive; a linewise selection spans col 1 to the last
--- byte of its end line. Text beyond the limits is cut like read_buffer's, with a final
--- "[cut: ...]" line; start/end still give the whole selection.
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local MODES = {
  v = "char",
  V = "line",
  ["\22"] = "block",
  char = "char",
  line = "line",
  block = "block",
}
local REGION_TYPE = { char = "v", line = "V", block = "\22" }

local function none()
  return { path = vim.NIL, start = vim.NIL, ["end"] = vim.NIL, mode = "none", text = "" }
end

local function int(v)
  return type(v) == "number" and v == math.floor(v) and v or nil
end

-- { buf, sl, sc, el, ec, mode } from what the host captured at ask time.
local function from_ctx(sel)
  if type(sel) ~= "table" then
    return nil
  end
  local buf, sl, el = int(sel.bufnr), int(sel.start_line), int(sel.end_line)
  if not (buf and sl and el) then
    return nil
  end
  local sc, ec = int(sel.start_col), int(sel.end_col)
  local mode = MODES[sel.mode]
  if not mode or not (sc and ec) then
    mode, sc, ec = "line", 1, 1
  end
  return { buf = buf, sl = sl, sc = sc, el = el, ec = ec, mode = mode }
end

-- The visual selection in force now (cursor in visual mode) or the last one of the user's file.
local function from_editor()
  local buf = scope_mod.user_buffer()
  if not buf then
    return nil
  end
  local now = vim.api.nvim_get_mode().mode
  if MODES[now] and buf == vim.api.nvim_get_current_buf() then
    local v, cur = vim.fn.getpos("v"), vim.fn.getpos(".")
    return { buf = buf, sl = v[2], sc = v[3], el = cur[2], ec = cur[3], mode = MODES[now] }
  end
  local s = vim.api.nvim_buf_get_mark(buf, "<")
  local e = vim.api.nvim_buf_get_mark(buf, ">")
  if s[1] == 0 or e[1] == 0 then
    return nil
  end
  return {
    buf = buf,
    sl = s[1],
    sc = s[2] + 1,
    el = e[1],
    ec = e[2] + 1,
    mode = MODES[vim.fn.visualmode()] or "char",
  }
end

local function handler(_, ctx)
  local scope = scope_mod.new(ctx)
  local sel
  if type(ctx.selection) == "table" then
    sel = from_ctx(ctx.selection)
  else
    sel = from_editor()
  end
  local entry = sel and scope:buffer(sel.buf)
  if not entry or not vim.api.nvim_buf_is_loaded(sel.buf) then
    return none()
  end
  local buf = sel.buf
  -- Order the ends, then keep them inside the buffer as it is now (it may have changed since).
  if sel.el < sel.sl or (sel.el == sel.sl and sel.ec < sel.sc) then
    sel.sl, sel.sc, sel.el, sel.ec = sel.el, sel.ec, sel.sl, sel.sc
  end
  local count = vim.api.nvim_buf_line_count(buf)
  if sel.sl < 1 or sel.sl > count then
    return none()
  end
  sel.el = math.min(math.max(sel.el, sel.sl), count)
  local function line_len(l)
    return #vim.api.nvim_buf_get_lines(buf, l - 1, l, false)[1]
  end
  local function clamp(col, l)
    return math.min(math.max(col, 1), math.max(line_len(l), 1))
  end
  if sel.mode == "line" then
    sel.sc, sel.ec = 1, math.max(line_len(sel.el), 1)
  else
    sel.sc, sel.ec = clamp(sel.sc, sel.sl), clamp(sel.ec, sel.el)
  end
  if sel.mode == "block" and sel.ec < sel.sc then
    sel.sc, sel.ec = sel.ec, sel.sc
  end

  -- Ask Neovim for no more lines than one answer can hold; a cut char selection then ends at
  -- the end of its last shown line. Not for a block: its columns are screen columns of its
  -- corners, which a corner moved to another line would change (a block's rows are short).
  local limits = text.limits(ctx)
  local el, ec = sel.el, sel.ec
  if el - sel.sl + 1 > limits.max_lines and sel.mode ~= "block" then
    el = sel.sl + limits.max_lines - 1
    ec = math.max(line_len(el), 1)
  end
  local ok, region = pcall(
    vim.fn.getregion,
    { buf, sel.sl, sel.sc, 0 },
    { buf, el, ec, 0 },
    { type = REGION_TYPE[sel.mode] }
  )
  if not ok then
    return none()
  end
  local c = text.collector(limits)
  for _, raw in ipairs(region) do
    -- getregion() gives a NUL byte as "\n" (Neovim's in-memory form).
    if not c.add((raw:gsub("\n", "\0"))) then
      break
    end
  end
  local body = table.concat(c.lines, "\n")
  local shown_last = sel.sl + #c.lines - 1
  if shown_last < sel.el then
    body = body
      .. string.format(
        "\n[cut: selected lines %d-%d not shown (output limit); call %s with"
          .. " path=%s, start_line=%d, end_line=%d for them]",
        shown_last + 1,
        sel.el,
        require("minime.tools").name("read_buffer", ctx),
        vim.json.encode(entry.path),
        shown_last + 1,
        sel.el
      )
  end
  return {
    path = entry.path,
    start = { line = sel.sl, col = sel.sc },
    ["end"] = { line = sel.el, col = sel.ec },
    mode = sel.mode,
    text = body,
  }
end

return {
  description = "Get the text the user selected in the editor: call it when the user says 'this', "
    .. "'the selection' or 'the selected code'. Returns JSON {path, start: {line, col}, "
    .. 'end: {line, col}, mode, text}; mode is "char", "line" or "block", or "none" '
    .. "(path null) when nothing is selected.",
  input_schema = {
    type = "object",
    properties = vim.empty_dict(),
    additionalProperties = false,
  },
  -- The order the model reads the parameters and the answer's fields in (others: by name).
  fields = { "path", "start", "line", "col", "end", "mode", "text" },
  handler = handler,
}
