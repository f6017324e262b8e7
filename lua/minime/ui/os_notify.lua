--- `notify = { os = true }` (:h minime-notify-os): a thread that is not on screen and ends its
--- turn or starts waiting for the user also raises a desktop notification, through the
--- terminal, while Neovim does not have the focus (FocusLost, until FocusGained): OSC 777
--- (`ESC ] 777 ; notify ; minime ; <text> ESC \`: foot, Ghostty, WezTerm, rxvt, Konsole…) or
--- OSC 9 (`ESC ] 9 ; <text> ESC \`: iTerm2, ConEmu, Windows Terminal…), inside tmux wrapped in
--- its DCS passthrough (tmux 3.3+ needs `set -g allow-passthrough on`). The text quotes the
--- agent (its name, the thread's title): it is made one printable line first, so no control
--- character of the agent's reaches the terminal. Written to Neovim's stderr (channel 2), the
--- terminal the TUI draws on, as Neovim's own OSC 52 clipboard does.
local M = {}

--- Whether Neovim has the focus (the terminal says so when it gains or loses it). Watched from
--- the host's first start (M.watch), not from Neovim's: no turn can end before it, and the
--- user had the focus to start it.
M.focused = true

--- FocusGained / FocusLost.
---@param focused boolean
function M.focus(focused)
  M.focused = focused
end

--- Follow FocusGained / FocusLost from now on (minime.host, once).
function M.watch()
  local group = vim.api.nvim_create_augroup("minime.os_notify", { clear = true })
  vim.api.nvim_create_autocmd({ "FocusGained", "FocusLost" }, {
    group = group,
    callback = function(ev)
      M.focus(ev.event == "FocusGained")
    end,
  })
end

--- The kind of sequence setting `os` asks for: "osc777", "osc9", or nil (off). `true` picks
--- OSC 9 for the terminals known to want it, else OSC 777.
---@param setting any
---@return string?
function M.kind(setting)
  if setting == "osc777" or setting == "osc9" then
    return setting
  end
  if setting ~= true then
    return nil
  end
  local env = vim.env
  if env.TERM_PROGRAM == "iTerm.app" or env.ConEmuPID or env.WT_SESSION then
    return "osc9"
  end
  return "osc777"
end

--- The bytes for `text` (made printable here): the OSC sequence, in tmux's passthrough when
--- `tmux`.
---@param text string
---@param kind "osc777"|"osc9"
---@param tmux boolean
---@return string
function M.sequence(text, kind, tmux)
  local body = require("minime.ui.printable").line(text, 200)
  local seq = kind == "osc9" and ("\27]9;%s\27\\"):format(body)
    or ("\27]777;notify;minime;%s\27\\"):format(body)
  if tmux then
    seq = "\27Ptmux;" .. seq:gsub("\27", "\27\27") .. "\27\\"
  end
  return seq
end

--- Raise `text` as a desktop notification, if `notify.os` is on, a UI is attached and Neovim
--- does not have the focus.
---@param text string
function M.send(text)
  local notify = require("minime.config").options.notify
  local kind = M.kind(type(notify) == "table" and notify.os or nil)
  if not kind or M.focused or #vim.api.nvim_list_uis() == 0 then
    return
  end
  pcall(vim.api.nvim_chan_send, 2, M.sequence(text, kind, (vim.env.TMUX or "") ~= ""))
end

return M
