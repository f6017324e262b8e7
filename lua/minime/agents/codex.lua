--- OpenAI Codex through its ACP adapter (npm @agentclientprotocol/codex-acp, which brings the
--- codex binary; formerly @zed-industries/codex-acp). It reads CODEX_API_KEY or OPENAI_API_KEY
--- (or Codex's login), and CODEX_HOME/config.toml (~/.codex) for its model provider.
return {
  label = "Codex (codex-acp)",
  install = "npm install -g @agentclientprotocol/codex-acp",
  cmd = { "codex-acp" },
  -- codex-acp 2.6 offers read-only, workspace-write, agent ("Auto review") and
  -- agent-full-access, and starts in "agent", where no permission request ever comes: a
  -- reviewer model decides (tests/test_interop_codex.py). "read-only" runs commands in a
  -- read-only sandbox and asks before one runs outside it; the older
  -- @zed-industries/codex-acp ("auto" at start) offers it too.
  mode = "read-only",
  -- The editor tools as an MCP server of each session (it ignores mm's client tools); Codex
  -- offers them to its model as the namespace mcp__minime, each under its own name.
  editor_tools = "mcp",
  tool_names = "%s",
}
