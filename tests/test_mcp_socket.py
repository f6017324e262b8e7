"""The MCP host's Unix socket (minime/mcp_host.py) against peers that are not well-behaved
bridges: junk or silence instead of a token, a crowd of connections, a session's token used
many times, a flood of pipelined calls. Each is bounded, and a real bridge still gets in."""

from __future__ import annotations

import asyncio
import gc
import json
import weakref
from pathlib import Path
from typing import Any

import minime
import pytest
from minime import mcp_host, mcp_server
from minime.mcp_host import McpHost
from minime.mcp_server import Scope
from minime.threads import DaemonPool
from nvim_harness import wait_for

Peer = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def hosted(tools: list[minime.Tool], cwd: Path, go: Any) -> Any:
    async def tools_for(_scope: Scope) -> list[minime.Tool]:
        return tools

    host = McpHost(tools_for)
    await host.start()
    try:
        return await go(host, host.grant(str(cwd)).token)
    finally:
        await host.close()


def run(tools: list[minime.Tool], cwd: Path, go: Any) -> Any:
    return asyncio.run(asyncio.wait_for(hosted(tools, cwd, go), 90))


async def connect(host: McpHost, token: str | None = None) -> Peer:
    reader, writer = await asyncio.open_unix_connection(host.path)
    if token is not None:
        writer.write(token.encode() + b"\n")
        await writer.drain()
    return reader, writer


async def said(peer: Peer) -> bytes:
    """Everything the host writes until it closes the connection."""
    return await asyncio.wait_for(peer[0].read(), 20)


async def answer(peer: Peer) -> bytes:
    return await asyncio.wait_for(peer[0].readline(), 20)


async def pipelined(host: McpHost, token: str, count: int) -> Peer:
    """A bridge's connection that has written ``count`` calls of ``work`` (ids 0..count-1)
    at once, then a ping (id "p")."""
    _reader, writer = peer = await connect(host, token)
    assert await answer(peer) == b"ok\n"
    for n in range(count):
        params = {"name": "work", "arguments": {"n": n}}
        line = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
        writer.write(json.dumps(line).encode() + b"\n")
    writer.write(b'{"jsonrpc": "2.0", "id": "p", "method": "ping"}\n')
    await writer.drain()
    return peer


def test_junk_instead_of_a_token_is_cut_off_before_it_costs_the_host_memory(tmp_path: Path) -> None:
    async def go(host: McpHost, _token: str) -> int:
        _reader, writer = await connect(host)
        sent, chunk = 0, b"x" * (64 * 1024)  # and no newline: no token is that long
        try:
            while sent < 32 << 20:
                writer.write(chunk)
                await asyncio.wait_for(writer.drain(), 20)
                sent += len(chunk)
        except ConnectionError:
            pass  # the host closed it (a reset: it did not read what was left)
        return sent

    # Before the fix the host read up to 16 MiB of it, for each such peer at once.
    assert run([], tmp_path, go) < 4 << 20


def test_a_peer_that_sends_no_token_is_refused_after_the_token_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_host, "TOKEN_TIMEOUT", 0.2)

    async def go(host: McpHost, _token: str) -> bytes:
        return await said(await connect(host))

    assert run([], tmp_path, go).startswith(b"refused")


def test_silent_peers_past_the_cap_close_the_oldest_and_a_bridge_still_gets_in(
    tmp_path: Path,
) -> None:
    cap = mcp_host.MAX_UNAUTHENTICATED

    async def go(host: McpHost, token: str) -> dict[str, Any]:
        silent = [await connect(host) for _ in range(cap + 5)]
        seen = {"oldest": [await said(peer) for peer in silent[:5]]}
        bridge = await connect(host, token)
        seen["bridge"] = await answer(bridge)
        seen["then oldest"] = await said(silent[5])  # the bridge took the longest waiting's place
        return seen

    seen = run([], tmp_path, go)
    assert all(s.startswith(b"refused: too many connections waiting") for s in seen["oldest"])
    assert seen["bridge"] == b"ok\n"
    assert seen["then oldest"].startswith(b"refused")


def test_a_sessions_token_opens_at_most_a_few_connections_at_once(tmp_path: Path) -> None:
    cap = mcp_host.MAX_PER_SESSION

    async def go(host: McpHost, token: str) -> dict[str, Any]:
        peers = [await connect(host, token) for _ in range(cap)]
        seen = {"first": [await answer(peer) for peer in peers]}
        seen["one more"] = await said(await connect(host, token))
        peers[0][1].close()
        for _ in range(200):  # the host sees the close; then a bridge may come back
            again = await connect(host, token)
            seen["again"] = await answer(again)
            if seen["again"] == b"ok\n":
                break
            await asyncio.sleep(0.05)
        return seen

    seen = run([], tmp_path, go)
    assert seen["first"] == [b"ok\n"] * cap
    assert seen["one more"].startswith(b"refused: this session has too many connections")
    assert seen["again"] == b"ok\n"


def test_pipelined_calls_run_a_few_at_a_time_and_all_are_answered(tmp_path: Path) -> None:
    started: list[int] = []
    running = [0, 0]  # now, most at once
    gate = asyncio.Event()

    async def work(request: Any) -> str:
        started.append(request.arguments["n"])
        running[0] += 1
        running[1] = max(running)
        await gate.wait()
        running[0] -= 1
        return str(request.arguments["n"])

    tools = [minime.Tool("work", work)]
    count = 40

    async def go(host: McpHost, token: str) -> dict[str, Any]:
        peer = await pipelined(host, token, count)
        # The ping's answer comes first: every call before it has been read and started
        # (or is waiting for its turn).
        seen: dict[str, Any] = {"first": json.loads(await answer(peer))}
        seen["started before release"] = len(started)
        gate.set()
        seen["answers"] = [json.loads(await answer(peer)) for _ in range(count)]
        return seen

    seen = run(tools, tmp_path, go)
    assert seen["first"] == {"jsonrpc": "2.0", "id": "p", "result": {}}
    assert seen["started before release"] == mcp_server.IN_FLIGHT
    assert running[1] == mcp_server.IN_FLIGHT
    assert sorted(a["id"] for a in seen["answers"]) == list(range(count))
    assert all(a["result"]["content"][0]["text"] == str(a["id"]) for a in seen["answers"])


def test_an_idle_handler_thread_keeps_nothing_of_its_last_call() -> None:
    # A 15 MiB tool argument stayed alive in each idle thread, until its next call.
    class Large:
        pass

    large = Large()
    kept = weakref.ref(large)
    pool = DaemonPool("test-pool", 1)
    assert asyncio.run(pool.run(lambda value: type(value).__name__, large)) == "Large"
    del large
    wait_for(lambda: gc.collect() is not None and kept() is None, 10, message="the call's value")


def test_past_the_open_requests_bound_the_host_reads_no_further_until_one_is_answered(
    tmp_path: Path,
) -> None:
    gate, full = asyncio.Event(), asyncio.Event()
    started: list[int] = []

    async def work(request: Any) -> str:
        started.append(request.arguments["n"])
        if len(started) >= mcp_server.IN_FLIGHT:
            full.set()
        await gate.wait()
        return "done"

    count, bound = 100, mcp_server.OPEN_REQUESTS

    async def go(host: McpHost, token: str) -> list[Any]:
        peer = await pipelined(host, token, count)
        await full.wait()
        gate.set()
        return [json.loads(await answer(peer))["id"] for _ in range(count + 1)]

    order = run([minime.Tool("work", work)], tmp_path, go)
    assert sorted(order, key=str) == sorted([*range(count), "p"], key=str)
    # The ping was read only once the unanswered requests fell under the bound: at least
    # count - bound + 1 calls were answered before it (unbounded, it would come first).
    assert order.index("p") >= count - bound + 1, order
