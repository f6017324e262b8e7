-- `scripts/demo`: Neovim with minime.nvim and nothing else.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
vim.opt.runtimepath:prepend(root)
vim.cmd("runtime plugin/minime.lua")
require("minime").setup({})
vim.o.statusline = "%f %m%=%{%v:lua.require'minime'.statusline()%} "
vim.keymap.set({ "n", "x" }, "<leader>a", ":MiniMeAsk<CR>", { desc = "Ask minime" })
-- A permission prompt never takes the focus from your code: this key goes to it (from insert
-- mode too, and back), then 1..9 answer it.
vim.keymap.set(
  { "n", "i", "x" },
  "<M-p>",
  "<Plug>(minime-permission)",
  { desc = "minime: the permission prompt" }
)
vim.keymap.set(
  "n",
  "<leader>p",
  "<Plug>(minime-permission)",
  { desc = "minime: the permission prompt" }
)
-- One short line (ui/say fits it to the command line): at 80x24 a longer one was a hit-enter
-- prompt before the newcomer typed anything.
vim.schedule(function()
  require("minime.ui.say").say("minime demo: :MiniMeAsk /tour (Alt-p: a prompt, 1: allow)")
end)
