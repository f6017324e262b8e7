--- OpenAI Codex through Zed's ACP adapter (npm @zed-industries/codex-acp).
--- It reads OPENAI_API_KEY (or Codex's login) from the environment.
return {
  label = "Codex (codex-acp)",
  install = "npm install -g @zed-industries/codex-acp",
  cmd = { "codex-acp" },
  -- codex-acp starts in a mode that edits the workspace without asking ("auto" in
  -- @zed-industries/codex-acp, "agent" in @agentclientprotocol/codex-acp); both offer
  -- "read-only", which asks before editing files or running commands.
  mode = "read-only",
}
