--- client_open_buffers {}: the files open in the editor.
--- -> { cwd, buffers = [{ path, filetype, lines, modified, current, visible }] }
--- `current`: the file the user works in (see scope.user_buffer); `visible`: shown in a window
--- of the current tab page; `lines` of a listed buffer that is not loaded: its file's lines
--- (counted off the main loop), null when that file must not be read (see text.lua).
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")
local json = require("minime.editor.json")

local getbufvar = vim.fn.getbufvar -- ~6 times cheaper than vim.bo[buf] per buffer
local format, concat = string.format, table.concat

-- With ctx.json the answer is written here as text, one string.format per buffer: at 1000
-- buffers this costs less than building 1000 tables for json.encode to walk. The same bytes:
-- json.lua's field order and strings (test_json_text_written_in_lua_is_the_text_the_host_...).
local FIELDS = { "path", "filetype", "lines", "modified", "current", "visible" }
assert(
  json.in_order(FIELDS) and json.in_order({ "cwd", "buffers" }),
  "open_buffers: fields out of json.lua's order"
)
local RECORD = "{"
  .. concat(
    vim.tbl_map(function(name)
      return json.string(name) .. ":%s"
    end, FIELDS),
    ","
  )
  .. "}"
local BOOL = { [true] = "true", [false] = "false" }

-- JSON strings of the paths and filetypes seen (the same buffers are listed call after call).
local quoted, quoted_n = {}, 0
local function quote(s)
  local q = quoted[s]
  if not q then
    if quoted_n >= 20000 then
      quoted, quoted_n = {}, 0
    end
    q = json.string(s)
    quoted[s], quoted_n = q, quoted_n + 1
  end
  return q
end

local function handler(_, ctx)
  local scope = scope_mod.new(ctx)
  local limits = text.limits(ctx)
  -- Line counts first: counting a file not loaded may wait, and the rest must be read after.
  local entries = scope:buffers()
  local lines = {}
  for i, entry in ipairs(entries) do
    lines[i] = text.line_count(entry, limits) or vim.NIL
  end
  local user_buf = scope_mod.user_buffer()
  local shown = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    shown[vim.api.nvim_win_get_buf(win)] = true
  end
  local as_text = type(ctx) == "table" and ctx.json == true
  local buffers = {}
  for i, entry in ipairs(entries) do
    local buf = entry.buf
    if vim.api.nvim_buf_is_valid(buf) then
      local filetype = text.sanitize(getbufvar(buf, "&filetype"))
      local modified = getbufvar(buf, "&modified") == 1
      if as_text then
        local n = lines[i]
        buffers[#buffers + 1] = format(
          RECORD,
          quote(entry.path),
          quote(filetype),
          n == vim.NIL and "null" or format("%d", n),
          BOOL[modified],
          BOOL[buf == user_buf],
          BOOL[shown[buf] == true]
        )
      else
        buffers[#buffers + 1] = {
          path = entry.path,
          filetype = filetype,
          lines = lines[i],
          modified = modified,
          current = buf == user_buf,
          visible = shown[buf] == true,
        }
      end
    end
  end
  if as_text then
    local cwd = json.string(text.sanitize(scope.cwd))
    return format('{"cwd":%s,"buffers":[%s]}', cwd, concat(buffers, ","))
  end
  return { cwd = text.sanitize(scope.cwd), buffers = buffers }
end

return {
  description = "List the files open in the user's editor. Call it first to see what the user is "
    .. "working on. Returns JSON {cwd, buffers: [{path, filetype, lines, modified, "
    .. "current, visible}]}: path is relative to the working directory, modified means "
    .. "unsaved edits, current is the file the user is in.",
  input_schema = {
    type = "object",
    properties = vim.empty_dict(),
    additionalProperties = false,
  },
  handler = handler,
}
