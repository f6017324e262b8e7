--- OpenAI Codex through Zed's ACP adapter (npm @zed-industries/codex-acp).
--- It reads OPENAI_API_KEY (or Codex's login) from the environment.
return {
  label = "Codex (codex-acp)",
  install = "npm install -g @zed-industries/codex-acp",
  cmd = { "codex-acp" },
  -- No session mode named yet: codex-acp's mode that asks before editing is unverified.
  mode = nil,
}
