--- A buffer of the plugin's own (the log, a terminal's output, the threads) shown in a split
--- at the bottom of the tab page, with the turn floats that would cover it hidden.
local M = {}

local api = vim.api

--- Hide the turn floats of this tab page, which would cover a split (the log, a terminal's
--- output; their turns go on, :MiniMeShow brings them back), and leave the current window a
--- normal one.
function M.clear_the_view()
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    local buf = api.nvim_win_get_buf(win)
    if api.nvim_win_get_config(win).relative ~= "" and vim.b[buf].minime == "turn" then
      require("minime.ui.turn").close(vim.b[buf].minime_key)
    end
  end
  if api.nvim_win_get_config(0).relative ~= "" then
    for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
      if api.nvim_win_get_config(win).relative == "" then
        api.nvim_set_current_win(win)
        break
      end
    end
  end
end

--- Go to `buf`'s window, else show it in a split at the bottom, with the turn floats hidden
--- (clear_the_view); no room for a split (E36) is said plainly, naming `what` and `again`.
---@param buf integer
---@param what string
---@param again string the command that tries again
function M.show_at_bottom(buf, what, again)
  M.clear_the_view()
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    api.nvim_set_current_win(win)
  elseif pcall(vim.cmd, "botright split") then
    api.nvim_win_set_buf(0, buf)
  else
    local say = require("minime.ui.say").say
    say(("minime: no room for %s — make room (:only) and %s again"):format(what, again))
  end
end

return M
