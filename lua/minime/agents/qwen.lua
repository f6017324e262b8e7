--- Qwen Code in its ACP mode (npm @qwen-code/qwen-code: `qwen --acp`).
--- It reads its credentials (e.g. OPENAI_API_KEY / Qwen OAuth) from the environment.
return {
  label = "Qwen Code (qwen --acp)",
  install = "npm install -g @qwen-code/qwen-code",
  cmd = { "qwen", "--acp" },
  -- The editor tools as an MCP server of each session (it ignores mm's client tools); Qwen
  -- Code shows them to its model as mcp__minime__<tool>.
  editor_tools = "mcp",
  tool_names = "mcp__minime__%s",
}
