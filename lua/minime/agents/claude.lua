--- Claude Code through Zed's ACP adapter (npm @agentclientprotocol/claude-agent-acp).
--- It reads ANTHROPIC_API_KEY (or Claude Code's login) from the environment.
return {
  label = "Claude Code (claude-agent-acp)",
  install = "npm install -g @agentclientprotocol/claude-agent-acp",
  cmd = { "claude-agent-acp" },
  -- claude-agent-acp starts in "auto" (never asks); "default" asks before editing.
  mode = "default",
}
