-- `scripts/demo`: Neovim with minime.nvim and nothing else.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
vim.opt.runtimepath:prepend(root)
vim.cmd("runtime plugin/minime.lua")
require("minime").setup({})
vim.o.statusline = "%f %m%=%{%v:lua.require'minime'.statusline()%} "
vim.keymap.set({ "n", "x" }, "<leader>a", ":MiniMeAsk<CR>", { desc = "Ask minime" })
vim.schedule(function()
  vim.notify(
    "minime demo: :MiniMeAsk hello — or select lines and :'<,'>MiniMeAsk explain."
      .. " Try :MiniMeAsk /tool open_buffers and :MiniMeAsk /bash ls.",
    vim.log.levels.INFO
  )
end)
