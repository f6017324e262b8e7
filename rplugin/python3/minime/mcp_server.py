"""MCP's tool methods answered for one session: ``initialize``, ``ping``, ``tools/list``,
``tools/call`` (and ``notifications/cancelled``), over JSON lines the bridge (minime/mcp.py)
relays from the agent; mcp_jsonrpc.py frames them.

A lean server on msgspec rather than the official SDK's: the SDK costs 1.0-1.3 s to import
and some twenty packages (a web server among them) for four methods. Its conformance is
checked by driving this server with the SDK's own client (tests/test_mcp_conformance.py).
The tools are the library's :class:`minime.Tool` (the same ones the client-tools path
serves), their answers the same ``{content, isError}`` results.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import msgspec

from . import mcp_jsonrpc as rpc
from . import tools as tools_mod
from .model import ToolRequest
from .tools import Tool

log = logging.getLogger("minime")

SERVER_INFO = {"name": "minime", "version": "0.1.0"}
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
MAX_NAME = 128  # MCP 2025-11-25: a tool's name is 1 to 128 characters

# Tool calls of one connection that run at once: each holds Neovim's main loop for a moment
# (2,000 pipelined read_buffer calls, all run at once, stalled the editor for 4 s); the others
# wait their turn. A call's slot is held until its answer has left (the agent reads it).
IN_FLIGHT = 4
# Requests read from one connection and not yet answered; past this the host reads no further
# line of it until one is answered (the agent's writes then wait: its own flood, its own wait).
OPEN_REQUESTS = 64
# Messages in one batch (2025-03-26 only): a longer batch is refused whole.
MAX_BATCH = OPEN_REQUESTS


def mcp_name(name: str) -> str:
    """A tool's name as MCP allows it (letters, digits, ``_ - .``; at most 128 characters).
    A longer one keeps its first 119 characters and ends with ``_`` and 8 hex digits of its
    hash: two names that differ only past the cut stay two names, the same each time."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "tool"
    if len(name) <= MAX_NAME:
        return name
    return f"{name[: MAX_NAME - 9]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"


class Scope(msgspec.Struct):
    """Whom a connection serves: the session (its id, once the agent has answered) and the
    cwd its tools run in, which the client chose, never the agent."""

    cwd: str
    session_id: str | None = None


ToolsFor = Callable[[Scope], Awaitable[list[Tool]]]
Send = Callable[[bytes], Awaitable[None]]


class McpError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class McpSession:
    """One agent's MCP connection. ``receive(line)`` takes each line; a request runs in its
    own task (a slow tool holds up no ping, no cancel, no other call) and ``send`` writes its
    answer, waiting while the agent does not read."""

    def __init__(self, scope: Scope, tools_for: ToolsFor, send: Send) -> None:
        self.scope = scope
        self.version: str | None = None  # as agreed by initialize
        self._tools_for = tools_for
        self._send = send
        self._tools: dict[str, Tool] | None = None
        self._running: dict[rpc.RequestId, asyncio.Task[Any]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._slots = asyncio.Semaphore(IN_FLIGHT)
        self._open = 0
        self._room = asyncio.Event()
        self._room.set()

    async def room(self) -> None:
        """Wait until fewer than OPEN_REQUESTS requests of this connection are unanswered."""
        await self._room.wait()

    async def receive(self, line: bytes) -> None:
        """One line from the agent: answered, or its request started."""
        try:
            message = msgspec.json.decode(line)
        except (msgspec.DecodeError, RecursionError, ValueError) as exc:
            await self._send(self._error(None, rpc.PARSE_ERROR, f"not JSON: {_why(exc)}"))
            return
        if isinstance(message, list):
            await self._batch(message)
            return
        incoming = rpc.sort(message)
        if incoming.kind == "request":
            self._start(incoming, self._answer_one(incoming), 1)
        elif incoming.kind == "notification":
            self._notified(incoming)
        elif incoming.kind == "invalid":
            await self._send(self._error(incoming.id, incoming.code, incoming.problem))

    def too_long(self, limit: int) -> bytes:
        """The answer to a line longer than ``limit`` bytes (its id was never read)."""
        mib = limit // (1024 * 1024)
        words = f"a message longer than {mib} MiB is not read; the connection closes"
        return self._error(None, rpc.INVALID_REQUEST, words)

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def _body(self, request_id: rpc.RequestId | None, code: int, words: str) -> dict[str, Any]:
        return rpc.error(request_id, code, words, self.version)

    def _error(self, request_id: rpc.RequestId | None, code: int, words: str) -> bytes:
        return rpc.encode(self._body(request_id, code, words))

    def _notified(self, incoming: rpc.Message) -> None:
        if incoming.method == "notifications/cancelled":
            wanted = incoming.params.get("requestId")
            task = self._running.get(wanted) if rpc.readable_id(wanted) else None
            if task is not None:
                task.cancel()  # MCP: a cancelled request gets no answer
        # notifications/initialized and any other: nothing to do

    def _start(
        self, incoming: rpc.Message | None, work: Coroutine[Any, Any, None], count: int
    ) -> None:
        """Run ``work`` (the answer to ``count`` requests) in a task of its own."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        self._open += count
        if self._open >= OPEN_REQUESTS:
            self._room.clear()
        request_id = incoming.id if incoming is not None else None
        if request_id is not None:
            self._running[request_id] = task

        def done(_: Any) -> None:
            self._tasks.discard(task)
            self._open -= count
            if self._open < OPEN_REQUESTS:
                self._room.set()
            if request_id is not None and self._running.get(request_id) is task:
                del self._running[request_id]

        task.add_done_callback(done)

    async def _answer_one(self, incoming: rpc.Message) -> None:
        if incoming.method == "tools/call":
            async with self._slots:  # held until the answer has left
                await self._send(rpc.encode(await self.answer(incoming)))
        else:
            await self._send(rpc.encode(await self.answer(incoming)))

    async def _batch(self, messages: list[Any]) -> None:
        """A JSON-RPC batch: its answers in one array (none if it held only notifications).
        Accepted in 2025-03-26 alone, the revision that requires them."""
        if self.version != rpc.BATCH_VERSION:
            said = f"in protocol version {self.version}" if self.version else "before initialize"
            await self._send(self._error(None, rpc.INVALID_REQUEST, f"no batches {said}"))
            return
        if not messages or len(messages) > MAX_BATCH:
            words = f"a batch holds 1 to {MAX_BATCH} messages, got {len(messages)}"
            await self._send(self._error(None, rpc.INVALID_REQUEST, words))
            return
        answers: list[Any] = []
        requests: list[rpc.Message] = []
        for incoming in map(rpc.sort, messages):
            if incoming.kind == "notification":
                self._notified(incoming)
            elif incoming.kind == "invalid":
                answers.append(self._body(incoming.id, incoming.code, incoming.problem))
            elif incoming.kind == "request" and incoming.method == "initialize":
                words = "initialize may not be part of a batch"
                answers.append(self._body(incoming.id, rpc.INVALID_REQUEST, words))
            elif incoming.kind == "request":
                requests.append(incoming)
        if requests:
            self._start(None, self._answer_batch(requests, answers), len(requests))
        elif answers:
            await self._send(rpc.encode(answers))

    async def _answer_batch(self, requests: list[rpc.Message], answers: list[Any]) -> None:
        async def one(incoming: rpc.Message) -> dict[str, Any]:
            if incoming.method != "tools/call":
                return await self.answer(incoming)
            async with self._slots:
                return await self.answer(incoming)

        tasks = {}
        for incoming in requests:
            task = asyncio.ensure_future(one(incoming))
            tasks[task] = incoming.id
            if incoming.id is not None:
                self._running.setdefault(incoming.id, task)
        try:
            await asyncio.wait(tasks)
        finally:
            for task, request_id in tasks.items():
                task.cancel()  # the batch itself was cancelled: the connection ends
                if request_id is not None and self._running.get(request_id) is task:
                    del self._running[request_id]
        # A request cancelled by notifications/cancelled gets no answer (MCP).
        answers += [task.result() for task in tasks if not task.cancelled()]
        if answers:
            await self._send(rpc.encode(answers))

    async def answer(self, incoming: rpc.Message) -> dict[str, Any]:
        """The response to one request."""
        request_id = incoming.id
        assert request_id is not None
        try:
            value = await self._dispatch(incoming.method, incoming.params)
        except McpError as exc:
            return self._body(request_id, exc.code, str(exc))
        except Exception as exc:  # a bug here is the agent's failed request, not the host's end
            log.exception("MCP %s failed", incoming.method)
            words = f"{incoming.method} failed: {exc}"
            return self._body(request_id, rpc.INTERNAL_ERROR, words)
        return rpc.result(request_id, value)

    async def _dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            asked = params.get("protocolVersion")
            known = rpc.PROTOCOL_VERSIONS
            self.version = asked if asked in known else known[-1]
            return {
                "protocolVersion": self.version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": SERVER_INFO,
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            cursor = params.get("cursor")
            if cursor is not None:  # every tool is in the first page: no cursor was given out
                raise McpError(rpc.INVALID_PARAMS, f"invalid cursor {cursor!r}: no such page")
            return {"tools": [_describe(name, t) for name, t in (await self._list()).items()]}
        if method == "tools/call":
            return await self._call(params)
        raise McpError(rpc.METHOD_NOT_FOUND, f"method not found: {method}")

    async def _list(self) -> dict[str, Tool]:
        tools: dict[str, Tool] = {}
        for tool in await self._tools_for(self.scope):
            name = mcp_name(tool.name)
            if name in tools:  # only a hash collision of two long names could do it
                log.warning("MCP tool %r left out: its name %s is taken", tool.name, name)
                continue
            tools[name] = tool
        self._tools = tools
        return tools

    async def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise McpError(rpc.INVALID_PARAMS, "tools/call needs a name and an arguments object")
        tools = self._tools if self._tools is not None else await self._list()
        tool = tools.get(name)
        if tool is None:
            raise McpError(rpc.INVALID_PARAMS, f"unknown tool: {name}")
        request = ToolRequest(
            session_id=self.scope.session_id or "", arguments=arguments, cwd=self.scope.cwd
        )
        return await tools_mod.run(tool, request)


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc) or type(exc).__name__


def _describe(name: str, tool: Tool) -> dict[str, Any]:
    """A tool as tools/list gives it. Both MCP schemas require ``inputSchema.type`` to be
    "object" (the SDK's client refuses the whole list otherwise); mm's spec lets it be left
    out, so it is added here."""
    schema = tool.input_schema or EMPTY_SCHEMA
    if "type" not in schema:
        schema = {"type": "object", **schema}
    described: dict[str, Any] = {"name": name, "inputSchema": schema}
    if tool.description:
        described["description"] = tool.description
    return described
