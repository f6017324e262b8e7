--- Claude Code through Zed's ACP adapter (npm @agentclientprotocol/claude-agent-acp).
--- It reads ANTHROPIC_API_KEY (or Claude Code's login) from the environment.
return {
  label = "Claude Code (claude-agent-acp)",
  install = "npm install -g @agentclientprotocol/claude-agent-acp",
  cmd = { "claude-agent-acp" },
  -- The session mode that asks before editing; applied by a later issue, not yet sent.
  mode = "default",
}
