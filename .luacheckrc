-- luacheck (Debian's lua-check, installed by scripts/setup), run by scripts/test:
--   luacheck lua plugin demo tests
-- Neovim's Lua is LuaJIT with the `vim` global. Line width is stylua's (.stylua.toml).
std = "luajit"
globals = { "vim" } -- vim.g, vim.bo[buf], vim.o… are written
max_line_length = false
exclude_files = { "tests/interop/node_modules/**", ".venv/**" }
