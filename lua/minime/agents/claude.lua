--- Claude Code through Zed's ACP adapter (npm @agentclientprotocol/claude-agent-acp).
--- It reads ANTHROPIC_API_KEY (or Claude Code's login) from the environment.

-- The values of IS_SANDBOX that Claude Code's CLI reads as "yes" (its own check is looser
-- than its root check below; both agree on these).
local TRUTHY = { ["1"] = true, ["true"] = true, yes = true, on = true }

return {
  label = "Claude Code (claude-agent-acp)",
  install = "npm install -g @agentclientprotocol/claude-agent-acp",
  cmd = { "claude-agent-acp" },
  -- claude-agent-acp starts in "auto" (never asks); "default" asks before editing.
  mode = "default",
  -- The editor tools as an MCP server of each session (it ignores mm's client tools); Claude
  -- Code shows them to its model as mcp__minime__<tool>.
  editor_tools = "mcp",
  tool_names = "mcp__minime__%s",
  -- Run as root, claude-agent-acp takes any non-empty IS_SANDBOX for a sandbox and starts its
  -- CLI with --dangerously-skip-permissions, which the CLI accepts as root only with
  -- IS_SANDBOX=1: with IS_SANDBOX=yes every session/new failed ("cannot be used with
  -- root/sudo privileges"). Said the way both read it: "1", or empty for a "no".
  env = function()
    local value = vim.env.IS_SANDBOX
    if value == nil or value == "" or value == "1" then
      return nil
    end
    return { IS_SANDBOX = TRUTHY[value:lower()] and "1" or "" }
  end,
}
