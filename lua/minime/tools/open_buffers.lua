--- client_open_buffers {}: the files open in the editor.
--- -> { cwd, buffers = [{ path, filetype, lines, modified, current, visible }] }
--- `current`: the file the user works in (see scope.user_buffer); `visible`: shown in a window
--- of the current tab page; `lines` of a listed buffer that is not loaded: its file's lines
--- (counted off the main loop), null when that file must not be read (see text.lua).
local scope_mod = require("minime.editor.scope")
local text = require("minime.editor.text")

local getbufvar = vim.fn.getbufvar -- ~6 times cheaper than vim.bo[buf] per buffer

local function handler(_, ctx)
  local scope = scope_mod.new(ctx)
  local limits = text.limits(ctx)
  local buffers = {}
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
  for i, entry in ipairs(entries) do
    local buf = entry.buf
    if vim.api.nvim_buf_is_valid(buf) then
      buffers[#buffers + 1] = {
        path = entry.path,
        filetype = text.sanitize(getbufvar(buf, "&filetype")),
        lines = lines[i],
        modified = getbufvar(buf, "&modified") == 1,
        current = buf == user_buf,
        visible = shown[buf] == true,
      }
    end
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
