"""The Neovim adapter: the host behind the Lua layer. Never imported by the core."""
