--- Gemini CLI in its ACP mode (npm @google/gemini-cli: `gemini --acp`). It reads its login
--- from ~/.gemini (or GEMINI_API_KEY, with security.auth.selectedType = "gemini-api-key" in
--- ~/.gemini/settings.json).
return {
  label = "Gemini CLI (gemini --acp)",
  install = "npm install -g @google/gemini-cli",
  cmd = { "gemini", "--acp" },
  -- The editor tools as an MCP server of each session; Gemini CLI shows them to its model as
  -- mcp_minime_<tool>, the name the tools' texts use for each other.
  editor_tools = "mcp",
  tool_names = "mcp_minime_%s",
  -- Said when a session's first turn ends and Gemini CLI never started the editor's server.
  mcp_hint = "Gemini CLI starts no MCP server in a folder it does not trust: trust this one"
    .. " (gemini's /permissions, or ~/.gemini/trustedFolders.json), or turn folder trust off"
    .. " (security.folderTrust.enabled = false in ~/.gemini/settings.json)",
}
