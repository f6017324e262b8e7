"""MCP's tool methods answered for one session: ``initialize``, ``ping``, ``tools/list``,
``tools/call`` (and ``notifications/cancelled``), over JSON lines the bridge (minime/mcp.py)
relays from the agent.

A lean server on msgspec rather than the official SDK's: the SDK costs 1.0-1.3 s to import
and some twenty packages (a web server among them) for four methods. Its conformance is
checked by driving this server with the SDK's own client (tests/test_mcp_conformance.py).
The tools are the library's :class:`minime.Tool` (the same ones the client-tools path
serves), their answers the same ``{content, isError}`` results.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from . import tools as tools_mod
from .model import ToolRequest
from .tools import Tool

log = logging.getLogger("minime")

# The revisions reached through the ``initialize`` handshake, oldest first.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
SERVER_INFO = {"name": "minime", "version": "0.1.0"}
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


def mcp_name(name: str) -> str:
    """A tool's name as MCP allows it (letters, digits, ``_ - .``; at most 128)."""
    return (re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "tool")[:128]


class Scope(msgspec.Struct):
    """Whom a connection serves: the session (its id, once the agent has answered) and the
    cwd its tools run in, which the client chose, never the agent."""

    cwd: str
    session_id: str | None = None


ToolsFor = Callable[[Scope], Awaitable[list[Tool]]]


class McpSession:
    """One agent's MCP connection: ``handle(line)`` gives the line to answer, or None."""

    def __init__(self, scope: Scope, tools_for: ToolsFor, send: Callable[[bytes], None]) -> None:
        self.scope = scope
        self._tools_for = tools_for
        self._send = send
        self._tools: dict[str, Tool] | None = None
        self._running: dict[Any, asyncio.Task[None]] = {}

    def receive(self, line: bytes) -> None:
        """One line from the agent; a request runs in its own task (a slow tool does not hold
        up a ping or another call), its answer is sent when done."""
        try:
            message = msgspec.json.decode(line)
        except msgspec.DecodeError as exc:
            self._send(_error(None, PARSE_ERROR, f"not JSON: {exc}"))
            return
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            params = message.get("params")
            task = self._running.get(params.get("requestId") if isinstance(params, dict) else None)
            if task is not None:
                task.cancel()  # MCP: a cancelled request gets no answer
            return
        if not isinstance(message, dict) or "id" not in message:
            known = isinstance(message, dict) and (
                isinstance(message.get("method"), str) or "result" in message or "error" in message
            )
            if not known:  # a notification (or an answer to us) is ignored; this is neither
                self._send(_error(None, INVALID_REQUEST, "not a JSON-RPC request"))
            return
        request_id = message["id"]
        task = asyncio.get_running_loop().create_task(self._answer_in_task(message))
        self._running[request_id] = task
        task.add_done_callback(lambda _: self._running.pop(request_id, None))

    def cancel_all(self) -> None:
        for task in list(self._running.values()):
            task.cancel()

    async def _answer_in_task(self, message: dict[str, Any]) -> None:
        line = await self.answer(message)
        if line is not None:
            self._send(line)

    async def answer(self, message: Any) -> bytes | None:
        """The answer line to one decoded message (None for a notification or an answer)."""
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            if isinstance(message, dict) and ("result" in message or "error" in message):
                return None  # an answer to a request of ours: we send none
            return _error(None, INVALID_REQUEST, "not a JSON-RPC request")
        if "id" not in message:
            return None  # notifications/initialized and the like
        request_id, method, params = message["id"], message["method"], message.get("params")
        try:
            result = await self._dispatch(method, params if isinstance(params, dict) else {})
        except McpError as exc:
            return _error(request_id, exc.code, str(exc))
        except Exception as exc:  # a bug here is the agent's failed request, not the host's end
            log.exception("MCP %s failed", method)
            return _error(request_id, INTERNAL_ERROR, f"{method} failed: {exc}")
        return msgspec.json.encode({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def _dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
            return {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": SERVER_INFO,
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": [_describe(name, t) for name, t in (await self._list()).items()]}
        if method == "tools/call":
            return await self._call(params)
        raise McpError(METHOD_NOT_FOUND, f"method not found: {method}")

    async def _list(self) -> dict[str, Tool]:
        tools = await self._tools_for(self.scope)
        self._tools = {mcp_name(tool.name): tool for tool in tools}
        return self._tools

    async def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise McpError(INVALID_PARAMS, "tools/call needs a name and an arguments object")
        tools = self._tools if self._tools is not None else await self._list()
        tool = tools.get(name)
        if tool is None:
            raise McpError(INVALID_PARAMS, f"unknown tool: {name}")
        request = ToolRequest(
            session_id=self.scope.session_id or "", arguments=arguments, cwd=self.scope.cwd
        )
        return await tools_mod.run(tool, request)


class McpError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _describe(name: str, tool: Tool) -> dict[str, Any]:
    described: dict[str, Any] = {"name": name, "inputSchema": tool.input_schema or EMPTY_SCHEMA}
    if tool.description:
        described["description"] = tool.description
    return described


def _error(request_id: Any, code: int, message: str) -> bytes:
    error = {"code": code, "message": message}
    return msgspec.json.encode({"jsonrpc": "2.0", "id": request_id, "error": error})
