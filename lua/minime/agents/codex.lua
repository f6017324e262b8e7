--- OpenAI Codex through Zed's ACP adapter (npm @zed-industries/codex-acp).
--- It reads OPENAI_API_KEY (or Codex's login) from the environment.
return {
  label = "Codex (codex-acp)",
  install = "npm install -g @zed-industries/codex-acp",
  cmd = { "codex-acp" },
  -- codex-acp starts in "auto" (edits the workspace without asking); "read-only" asks
  -- before editing or using the network (codex's approval presets: read-only, auto,
  -- full-access).
  mode = "read-only",
}
