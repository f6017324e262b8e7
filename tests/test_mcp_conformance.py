"""The lean MCP server (minime/mcp_server.py, behind the bridge minime/mcp.py) driven by the
official MCP SDK's own client over stdio: if the SDK cannot initialize, list, call, ping or
cancel against it, the agents' clients would not either."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
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
from mcp.types import PaginatedRequestParams  # noqa: E402

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


@contextlib.asynccontextmanager
async def sdk_session(cwd: str, tools: list[minime.Tool]) -> AsyncIterator[ClientSession]:
    """The SDK's client, initialized, on the bridge of a host serving ``tools`` in ``cwd``."""

    async def tools_for(_scope: Scope) -> list[minime.Tool]:
        return tools

    host = McpHost(tools_for)
    await host.start()
    entry = host.entry(host.grant(cwd))
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env={pair["name"]: pair["value"] for pair in entry["env"]},
    )
    try:
        async with stdio_client(params) as (reader, writer), ClientSession(reader, writer) as s:
            await s.initialize()
            yield s
    finally:
        await host.close()


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


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


def test_a_tool_whose_schema_has_no_type_is_listed_as_an_object_and_the_list_stands(
    tmp_path: Path,
) -> None:
    # mm's spec lets "type" be left out; both MCP schemas require "object", and the SDK's
    # client refuses the whole list over one such tool: every other tool would be lost.
    loose = {"properties": {"word": {"type": "string"}}}
    tools = [TOOLS[0], minime.Tool("loose", lambda r: r.arguments.get("word"), input_schema=loose)]

    async def go() -> tuple[Any, Any]:
        async with sdk_session(str(tmp_path), tools) as s:
            listed = (await s.list_tools()).tools
            return listed, await s.call_tool("loose", {"word": "hi"})

    listed, called = run(go())
    by_name = {tool.name: tool.input_schema for tool in listed}
    assert by_name == {"read_buffer": SCHEMA, "loose": {"type": "object", **loose}}
    assert called.content[0].text == "hi"


def test_arguments_are_checked_against_the_schema_and_the_model_reads_what_is_wrong(
    tmp_path: Path,
) -> None:
    ran: list[Any] = []

    def handle(request: Any) -> str:
        ran.append(request.arguments)
        return f"{request.arguments['path']}:{request.arguments.get('line', 1) + 1}"

    schema = {**SCHEMA, "properties": {**SCHEMA["properties"], "line": {"type": "integer"}}}
    tools = [minime.Tool("read_buffer", handle, input_schema=schema)]

    async def go() -> list[Any]:
        async with sdk_session(str(tmp_path), tools) as s:
            return [
                await s.call_tool("read_buffer", arguments)
                for arguments in ({}, {"path": 5, "line": "two"}, {"path": "a.py", "line": "2"})
            ]

    missing, wrong, read = run(go())
    assert missing.is_error and missing.content[0].text == "missing argument path (a string)"
    assert wrong.is_error and wrong.content[0].text == (
        'path must be a string, got 5; line must be a whole number, got "two"'
    )
    assert not read.is_error and read.content[0].text == "a.py:3"  # "2" is read as 2
    assert ran == [{"path": "a.py", "line": 2}]  # the handler ran for the good call only


def test_an_invalid_cursor_is_refused_with_invalid_params(tmp_path: Path) -> None:
    async def go() -> tuple[Any, Any]:
        async with sdk_session(str(tmp_path), TOOLS) as s:
            with pytest.raises(MCPError) as refused:
                await s.list_tools(params=PaginatedRequestParams(cursor="page-2"))
            return refused.value, (await s.list_tools()).tools

    refused, listed = run(go())
    assert refused.error.code == -32602 and "cursor" in refused.error.message
    assert len(listed) == len(TOOLS)  # and the connection serves on


def test_tool_names_past_128_characters_stay_apart(tmp_path: Path) -> None:
    stem = "x" * 130
    tools = [minime.Tool(stem + end, lambda r, end=end: end) for end in ("a", "b")]

    async def go() -> tuple[list[str], list[str]]:
        async with sdk_session(str(tmp_path), tools) as s:
            names = [tool.name for tool in (await s.list_tools()).tools]
            said = [(await s.call_tool(name, {})).content[0].text for name in names]
            return names, said

    names, said = run(go())
    assert len(set(names)) == 2 and all(len(name) <= 128 for name in names), names
    assert said == ["a", "b"]
