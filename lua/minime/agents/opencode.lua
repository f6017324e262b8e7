--- OpenCode in its ACP mode (npm opencode-ai, which brings its binary: `opencode acp`). It reads
--- its providers, models and credentials from its own config (opencode.json,
--- ~/.config/opencode/, `opencode auth login`), as in its terminal UI.
return {
  label = "OpenCode (opencode acp)",
  install = "npm install -g opencode-ai",
  cmd = { "opencode", "acp" },
  -- The editor tools as an MCP server of each session; opencode shows them to its model as
  -- minime_<tool>, the name the tools' texts use for each other.
  editor_tools = "mcp",
  tool_names = "minime_%s",
  -- OpenCode edits and runs commands without asking unless its config says "ask": asked
  -- here, as with the other agents, unless you set OPENCODE_PERMISSION yourself.
  env = function()
    if vim.env.OPENCODE_PERMISSION and vim.env.OPENCODE_PERMISSION ~= "" then
      return nil
    end
    return { OPENCODE_PERMISSION = vim.json.encode({ edit = "ask", bash = "ask" }) }
  end,
}
