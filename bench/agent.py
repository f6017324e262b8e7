#!/usr/bin/env python3
"""A tiny ACP agent for the benchmarks (the SDK's agent side), timing on its own clock.

    python bench/agent.py

It speaks mm's client-tool dialect just enough: the tool list comes from ``initialize``'s
``_meta["org.mini-me/tools"]`` (discovery ``meta``) or, when that is ``true``, from a
``_org.mini-me/tools/list`` request before ``session/new`` is answered (discovery
``request``); each call carries ``_meta: {"org.mini-me/sessionId": <sid>}``. It never asks a
permission. The prompt's text is one command:

``rt METHOD N WARMUP OUT [JSON]``    WARMUP then N requests to METHOD (one after another), each
                                     timed with ``time.perf_counter_ns`` around the request.
``tool NAME N WARMUP OUT [JSON]``    the same for the client tool NAME (its method from the
                                     discovered list).
``mcp NAME N WARMUP OUT [JSON]``     the same for tool NAME of the session's first stdio MCP
                                     server (``mcpServers``: spawned, ``initialize``d and
                                     ``tools/list``ed before ``session/new`` is answered, the
                                     time that took kept as ``start_ns``), each a ``tools/call``.
``mmtool NAME N WARMUP OUT [JSON]``  the same, each call made as mm makes it inside a turn: the
                                     ``tool_call`` update (pending), a ``tool_call_update``
                                     (in_progress), the timed request, then the completed
                                     ``tool_call_update`` carrying the answer's text
                                     (``rawOutput.output`` and ``content``), before the next.
``chunks N SIZE OUT``                N ``agent_message_chunk`` updates (the fake mm's
                                     ``/chunks``), then ``time.monotonic_ns()`` (CLOCK_MONOTONIC,
                                     the clock of Neovim's ``vim.uv.hrtime()``) taken right after
                                     the last one was written.
``mcppipe NAME N OUT [JSON]``        N ``tools/call`` of NAME on that MCP server (as ``mcp``)
                                     written at once, then their answers read: OUT has the time
                                     until the last answer, how many were answered, and failed.
``say TEXT``                         one text chunk.

Timings go to the file OUT as JSON ``{"ns": [...], "starts": [...], "last": <last answer>}``
(rt/tool/mmtool: each call's time and when its request went out, ``time.perf_counter_ns()``,
CLOCK_MONOTONIC as ``vim.uv.hrtime()``) or
``{"last_sent_ns": ..., "first_sent_ns": ...}`` (chunks); the answer text is ``done``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any

SESSION_META = "org.mini-me/sessionId"
META_TOOLS = "org.mini-me/tools"
LIST_METHOD = "_org.mini-me/tools/list"


def write_json(path: str, value: Any) -> None:
    """Whole or not at all: a reader polling for the file never sees half of it."""
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(value, f)
    os.replace(path + ".tmp", path)


def chunks_text(count: int, size: int = 16) -> list[str]:
    """Chunk i is ``i`` padded with dots to SIZE (as tests/fake_mm.py's ``/chunks``)."""
    return [str(i).ljust(size, ".")[: max(size, 1)] for i in range(count)]


class BenchAgent:
    def __init__(self) -> None:
        self.meta_tools: dict[str, str] = {}
        self.request_mode = False
        self.session_tools: dict[str, dict[str, str]] = {}
        self.mcp: dict[str, McpServer] = {}
        self.counter = 0
        self.call_counter = 0

    def on_connect(self, conn: Any) -> None:
        self.rpc = conn._conn  # the SDK's Connection: plain-dict requests, as mm's wire shows

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **_: Any
    ) -> dict[str, Any]:
        meta = getattr(client_capabilities, "field_meta", None) or {}
        tools = meta.get(META_TOOLS)
        if tools is True:
            self.request_mode = True
        elif isinstance(tools, list):
            self.meta_tools = {t["name"]: t["method"] for t in tools if isinstance(t, dict)}
        return {
            "protocolVersion": min(int(protocol_version), 1),
            "agentCapabilities": {"loadSession": False},
            "agentInfo": {"name": "bench-agent", "version": "0"},
            "authMethods": [],
        }

    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> dict[str, Any]:
        self.counter += 1
        sid = f"bench-{self.counter}"
        stdio = [s for s in mcp_servers or [] if getattr(s, "command", None)]
        if stdio:
            self.mcp[sid] = await McpServer.start(stdio[0])
        tools = dict(self.meta_tools)
        if self.request_mode:
            answer = await self.rpc.send_request(LIST_METHOD, {"sessionId": sid, "cwd": cwd})
            tools = {t["name"]: t["method"] for t in (answer or {}).get("tools", [])}
        self.session_tools[sid] = tools
        return {"sessionId": sid}

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None

    async def say(self, sid: str, text: str) -> None:
        await self.rpc.send_notification(
            "session/update",
            {
                "sessionId": sid,
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text},
                },
            },
        )

    async def update(self, sid: str, update: dict[str, Any]) -> None:
        await self.rpc.send_notification("session/update", {"sessionId": sid, "update": update})

    async def mm_call(self, sid: str, name: str, method: str, params: dict[str, Any]) -> Any:
        """One client-tool call as mm reports it around the request (scripted_mm/calls.py);
        returns the answer, when the request went out and its time (ns): out -> answer in."""
        self.call_counter += 1
        call_id = f"call_{self.call_counter}"
        args = {k: v for k, v in params.items() if k != "_meta"}
        await self.update(
            sid,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": f"client: {name}",
                "kind": "other",
                "status": "pending",
                "rawInput": args,
            },
        )
        running = {"toolCallId": call_id, "status": "in_progress"}
        await self.update(sid, {"sessionUpdate": "tool_call_update", **running})
        start = time.perf_counter_ns()
        answer = await self.rpc.send_request(method, params)
        took = time.perf_counter_ns() - start
        content = (answer or {}).get("content") or [{}]
        read = str(content[0].get("text", ""))[:50000]  # mm's maxOutput default
        await self.update(
            sid,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "completed",
                "rawOutput": {"output": read},
                "content": [{"type": "content", "content": {"type": "text", "text": read}}],
            },
        )
        return answer, start, took

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> dict[str, Any]:
        text = "".join(getattr(block, "text", "") or "" for block in prompt).strip()
        command, _, rest = text.partition(" ")
        if command == "mcp":
            name, n, warmup, out, *more = rest.split(" ", 4)
            server = self.mcp[session_id]
            params = {"name": name, "arguments": json.loads(more[0]) if more else {}}
            last = None
            for _i in range(int(warmup)):
                last = await server.ask("tools/call", params)
            times = []
            for _i in range(int(n)):
                start = time.perf_counter_ns()
                last = await server.ask("tools/call", params)
                times.append(time.perf_counter_ns() - start)
            write_json(out, {"ns": times, "last": last, "start_ns": server.start_ns})
        elif command == "mcppipe":
            name, n, out, *more = rest.split(" ", 3)
            server = self.mcp[session_id]
            params = {"name": name, "arguments": json.loads(more[0]) if more else {}}
            began = time.perf_counter_ns()
            answers = await server.pipeline("tools/call", params, int(n))
            took = time.perf_counter_ns() - began
            failed = sum(1 for a in answers if "error" in a or a["result"].get("isError"))
            write_json(out, {"ns": took, "answered": len(answers), "failed": failed})
        elif command == "mmtool":
            parts = rest.split(" ", 4)
            name, n, warmup, out = parts[0], int(parts[1]), int(parts[2]), parts[3]
            args = json.loads(parts[4]) if len(parts) > 4 and parts[4].strip() else {}
            method = self.session_tools.get(session_id, {}).get(name, "")
            if not method:
                raise RuntimeError(f"no tool {name!r} in this session")
            params = {**args, "_meta": {SESSION_META: session_id}}
            last, times, starts = None, [], []
            for i in range(warmup + n):
                last, start, took = await self.mm_call(session_id, name, method, params)
                if i >= warmup:
                    times.append(took)
                    starts.append(start)
            write_json(out, {"ns": times, "starts": starts, "last": last})
        elif command in ("rt", "tool"):
            parts = rest.split(" ", 4)
            target, n, warmup, out = parts[0], int(parts[1]), int(parts[2]), parts[3]
            args = json.loads(parts[4]) if len(parts) > 4 and parts[4].strip() else {}
            method = target
            if command == "tool":
                method = self.session_tools.get(session_id, {}).get(target, "")
                if not method:
                    raise RuntimeError(f"no tool {target!r} in this session")
            params = {**args, "_meta": {SESSION_META: session_id}}
            send = self.rpc.send_request
            clock = time.perf_counter_ns
            last = None
            for _i in range(warmup):
                last = await send(method, params)
            times, starts = [], []
            for _i in range(n):
                start = clock()
                last = await send(method, params)
                times.append(clock() - start)
                starts.append(start)
            write_json(out, {"ns": times, "starts": starts, "last": last})
        elif command == "chunks":
            n, size, out = rest.split(" ", 2)
            chunks = chunks_text(int(n), int(size))
            first = time.monotonic_ns()
            for chunk in chunks:
                await self.say(session_id, chunk)
            last_sent = time.monotonic_ns()
            write_json(out, {"first_sent_ns": first, "last_sent_ns": last_sent})
            return {"stopReason": "end_turn"}
        elif command == "say":
            await self.say(session_id, rest)
            return {"stopReason": "end_turn"}
        else:
            await self.say(session_id, f"unknown command {command!r}")
            return {"stopReason": "end_turn"}
        await self.say(session_id, "done")
        return {"stopReason": "end_turn"}


class McpServer:
    """A stdio MCP server this agent spawned (as claude, codex and qwen do): JSON lines."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.ids = iter(range(1, 1 << 62))
        self.start_ns = 0

    @classmethod
    async def start(cls, entry: Any) -> McpServer:
        began = time.perf_counter_ns()
        env = dict(os.environ, **{pair.name: pair.value for pair in entry.env or []})
        process = await asyncio.create_subprocess_exec(
            entry.command,
            *(entry.args or []),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
            limit=256 * 1024 * 1024,
        )
        server = cls(process)
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b"}}
        await server.ask("initialize", hello)
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await server.ask("tools/list", {})
        server.start_ns = time.perf_counter_ns() - began
        return server

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")

    async def pipeline(self, method: str, params: dict[str, Any], n: int) -> list[Any]:
        """``n`` requests written at once, then their ``n`` answers read (a client that
        pipelines: the server decides how many run at once)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        ids = [next(self.ids) for _ in range(n)]
        for request_id in ids:
            self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        await self.process.stdin.drain()
        answers: dict[Any, Any] = {}
        wanted = set(ids)
        while wanted:
            line = await self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the MCP server ended with {len(wanted)} {method} unanswered")
            message = json.loads(line)
            if message.get("id") in wanted:
                wanted.discard(message["id"])
                answers[message["id"]] = message
        return [answers[i] for i in ids]

    async def ask(self, method: str, params: dict[str, Any]) -> Any:
        assert self.process.stdout is not None
        request_id = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            line = await self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the MCP server ended before it answered {method}")
            message = json.loads(line)
            if message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]


async def serve() -> None:
    from acp import run_agent
    from acp.stdio import stdio_streams

    reader, writer = await stdio_streams(limit=256 * 1024 * 1024)
    await run_agent(BenchAgent(), writer, reader, use_unstable_protocol=True)


if __name__ == "__main__":
    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        sys.exit(130)
