--- client_open_buffers {}: the files open in the editor.
--- -> { cwd, buffers = [{ path, filetype, lines, modified, current, visible }] }
--- `current`: the file the user works in (see scope.user_buffer); `visible`: shown in a window
--- of the current tab page; `lines` of a listed buffer that is not loaded: its file's lines.
local scope_mod = require("minime.tools.scope")
local text = require("minime.tools.text")

local getbufvar = vim.fn.getbufvar -- ~6 times cheaper than vim.bo[buf] per buffer

return function(_, ctx)
  local scope = scope_mod.new(ctx)
  local user_buf = scope_mod.user_buffer()
  local shown = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    shown[vim.api.nvim_win_get_buf(win)] = true
  end
  local buffers = {}
  for _, entry in ipairs(scope:buffers()) do
    local buf = entry.buf
    buffers[#buffers + 1] = {
      path = entry.path,
      filetype = text.sanitize(getbufvar(buf, "&filetype")),
      lines = text.line_count(entry),
      modified = getbufvar(buf, "&modified") == 1,
      current = buf == user_buf,
      visible = shown[buf] == true,
    }
  end
  return { cwd = text.sanitize(scope.cwd), buffers = buffers }
end
