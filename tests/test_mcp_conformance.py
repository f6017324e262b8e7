"""The lean MCP server (minime/mcp_server.py, behind the bridge minime/mcp.py) driven by the
official MCP SDK's own client over stdio: if the SDK cannot initialize, list, call, ping or
cancel against it, the agents' clients would not either."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import minime
import pytest
from minime.mcp_host import McpHost
from minime.mcp_server import Scope

mcp = pytest.importorskip("mcp")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def read(request: Any) -> str:
    return f"{request.cwd}:{request.arguments['path']}"


def broken(_request: Any) -> str:
    raise RuntimeError("outside the working directory")


async def slow(request: Any) -> str:
    await asyncio.sleep(30)
    return "late"


TOOLS = [
    minime.Tool("read_buffer", read, description="a buffer's text", input_schema=SCHEMA),
    minime.Tool("broken", broken),
    minime.Tool("slow", slow),
]


async def drive(cwd: str) -> dict[str, Any]:
    async def tools_for(_scope: Scope) -> list[minime.Tool]:
        return TOOLS

    host = McpHost(tools_for)
    await host.start()
    grant = host.grant(cwd)
    entry = host.entry(grant)
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env={pair["name"]: pair["value"] for pair in entry["env"]},
    )
    seen: dict[str, Any] = {}
    try:
        async with stdio_client(params) as (reader, writer), ClientSession(reader, writer) as s:
            init = await s.initialize()
            seen["version"] = init.protocol_version
            seen["server"] = init.server_info.name
            seen["tools"] = (await s.list_tools()).tools
            seen["ok"] = await s.call_tool("read_buffer", {"path": "a.py"})
            seen["failed"] = await s.call_tool("broken", {})
            await s.send_ping()
            with pytest.raises(Exception) as unknown:
                await s.call_tool("nope", {})
            seen["unknown"] = str(unknown.value)
            with pytest.raises(MCPError, match="timed out"):  # cancelled: the server goes on
                await s.call_tool("slow", {}, read_timeout_seconds=0.2)
            seen["after"] = await s.call_tool("read_buffer", {"path": "b.py"})
    finally:
        await host.close()
    return seen


def test_the_sdk_client_lists_and_calls_the_tools(tmp_path: Path) -> None:
    seen = asyncio.run(asyncio.wait_for(drive(str(tmp_path)), 60))
    assert seen["version"] == "2025-11-25" and seen["server"] == "minime"
    by_name = {tool.name: tool for tool in seen["tools"]}
    assert list(by_name) == ["read_buffer", "broken", "slow"]
    assert by_name["read_buffer"].description == "a buffer's text"
    assert by_name["read_buffer"].input_schema == SCHEMA
    assert by_name["broken"].input_schema == {"type": "object", "properties": {}}
    assert seen["ok"].is_error is False
    assert seen["ok"].content[0].text == f"{tmp_path}:a.py"
    assert seen["failed"].is_error is True
    assert seen["failed"].content[0].text == "outside the working directory"
    assert "unknown tool: nope" in seen["unknown"]
    assert seen["after"].content[0].text == f"{tmp_path}:b.py"
