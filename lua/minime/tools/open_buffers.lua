--- client_open_buffers {}: the files open in the editor.
--- -> { cwd, buffers = [{ path, filetype, lines, modified, current, visible }] }
--- `current`: the file the user works in (see scope.user_buffer); `visible`: shown in a window
--- of the current tab page; `lines` of a listed buffer that is not loaded: its file's lines.
local scope_mod = require("minime.tools.scope")
local text = require("minime.tools.text")

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
      filetype = text.sanitize(vim.bo[buf].filetype),
      lines = text.line_count(entry),
      modified = vim.bo[buf].modified,
      current = buf == user_buf,
      visible = shown[buf] == true,
    }
  end
  return { cwd = text.sanitize(scope.cwd), buffers = buffers }
end
