--- The example agent of the npm package @agentclientprotocol/sdk, run with node: a real
--- third-party ACP agent with scripted answers (streams text, a read tool call, a permission).
--- Only the 1.x line ships it: 2.x leaves `dist/examples` out of the package. ./scripts/setup
--- installs the pinned 1.9.0 into the plugin's tests/interop (npm install from the lock).
local function script()
  return require("minime.config").root()
    .. "/tests/interop/node_modules/@agentclientprotocol/sdk/dist/examples/agent.js"
end

return {
  label = "the ACP SDK's example agent",
  -- The editor tools as an MCP server of each session (it ignores mm's client tools).
  editor_tools = "mcp",
  install = "Node.js (`node` on PATH), then ./scripts/setup in the plugin's directory",
  cmd = function()
    local path = script()
    if not vim.uv.fs_stat(path) then
      error({
        message = "the ACP SDK's example agent is not installed: " .. path,
        fix = {
          "Run ./scripts/setup in the plugin's directory (it installs @agentclientprotocol/sdk"
            .. " 1.9.0 into tests/interop).",
          "Only the SDK's 1.x line ships the example agent: 2.x leaves dist/examples out.",
        },
      }, 0)
    end
    return { "node", path }
  end,
}
