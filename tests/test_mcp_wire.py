"""The editor's MCP server (minime/mcp_server.py behind the bridge minime/mcp.py) sent the raw
bytes no SDK client sends: malformed ids, a bad cancel, JSON nested too deep, batches, a line
over the limit. Each is answered as JSON-RPC and the MCP revision agreed say, and the
connection serves on (but after a line over the limit: answered, then closed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import minime
import pytest
from minime import mcp_host
from minime.mcp_host import McpHost
from minime.mcp_server import Scope

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


class Wire:
    """The bridge an agent spawns, spoken to in raw lines."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def send(self, message: Any) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        await self.proc.stdin.drain()

    async def read(self) -> Any:
        """The next line the server writes, decoded (None: it closed the connection)."""
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), 20)
        return json.loads(line) if line else None

    async def ask(self, message: Any) -> Any:
        await self.send(message)
        return await self.read()

    async def ping(self, request_id: int = 999) -> bool:
        """The connection still serves: a ping is answered."""
        answer = await self.ask({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        return answer == {"jsonrpc": "2.0", "id": request_id, "result": {}}

    async def initialize(self, version: str) -> str:
        hello = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw"}}
        answer = await self.ask(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
        )
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer["result"]["protocolVersion"]


def call(request_id: Any, name: str, arguments: Any = None) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def wired(cwd: str, tools: list[minime.Tool], go: Any) -> Any:
    async def tools_for(_scope: Scope) -> list[minime.Tool]:
        return tools

    host = McpHost(tools_for)
    await host.start()
    entry = host.entry(host.grant(cwd))
    env = {pair["name"]: pair["value"] for pair in entry["env"]}
    proc = await asyncio.create_subprocess_exec(
        entry["command"],
        *entry["args"],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
        limit=1 << 20,
    )
    try:
        return await go(Wire(proc))
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
        await host.close()


def run(cwd: Path, go: Any, tools: list[minime.Tool] | None = None) -> Any:
    ran: list[Any] = []

    def read(request: Any) -> str:
        ran.append(request.arguments)
        return "text of " + request.arguments["path"]

    tools = tools or [minime.Tool("read_buffer", read, input_schema=SCHEMA)]
    return asyncio.run(asyncio.wait_for(wired(str(cwd), tools, go), 90)), ran


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_a_bad_id_is_refused_with_its_error_framed_as_the_version_says_and_serving_goes_on(
    tmp_path: Path, version: str
) -> None:
    async def go(wire: Wire) -> dict[str, Any]:
        assert await wire.initialize(version) == version
        seen = {}
        for label, bad in [("object", {"a": 1}), ("list", [1]), ("null", None), ("float", 1.5)]:
            seen[label] = await wire.ask(call(bad, "read_buffer", {"path": "a.py"}))
            seen[label + " then"] = await wire.ping()
        seen["no method"] = await wire.ask({"jsonrpc": "2.0", "id": 7})
        seen["no jsonrpc"] = await wire.ask({"id": 8, "method": "ping"})
        seen["served"] = await wire.ask(call(9, "read_buffer", {"path": "a.py"}))
        return seen

    seen, ran = run(tmp_path, go)
    for label in ("object", "list", "null", "float"):
        answer = seen[label]
        assert answer["error"]["code"] == -32600, (label, answer)
        assert "id must be a string or an integer" in answer["error"]["message"]
        # No readable id: null up to 2025-06-18 (JSON-RPC's rule), left out from 2025-11-25.
        if version == "2025-11-25":
            assert "id" not in answer, answer
        else:
            assert answer["id"] is None, answer
        assert seen[label + " then"], label
    assert seen["no method"]["id"] == 7 and seen["no method"]["error"]["code"] == -32600
    assert seen["no jsonrpc"]["id"] == 8 and seen["no jsonrpc"]["error"]["code"] == -32600
    assert seen["served"]["result"]["content"][0]["text"] == "text of a.py"
    assert ran == [{"path": "a.py"}]  # none of the refused requests reached the tool


def test_a_cancel_naming_a_list_is_ignored_and_json_nested_too_deep_is_a_parse_error(
    tmp_path: Path,
) -> None:
    async def go(wire: Wire) -> dict[str, Any]:
        await wire.initialize("2025-11-25")
        cancel = {"requestId": [1, 2], "reason": "x"}
        await wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        seen = {"after cancel": await wire.ping(1)}
        seen["deep"] = await wire.ask(b"[" * 100_000 + b"]" * 100_000)
        seen["after deep"] = await wire.ping(2)
        seen["not json"] = await wire.ask(b'{"jsonrpc": "2.0", "id": 3,')
        seen["number"] = await wire.ask(b"1e400")
        seen["after all"] = await wire.ping(4)
        return seen

    seen, _ = run(tmp_path, go)
    assert seen["after cancel"] and seen["after deep"] and seen["after all"]
    assert seen["deep"]["error"]["code"] == -32700 and "nested too deeply" in str(seen["deep"])
    assert seen["not json"]["error"]["code"] == -32700 and "id" not in seen["not json"]
    assert seen["number"]["error"]["code"] == -32700


def test_batches_are_answered_in_2025_03_26_and_refused_in_the_others(tmp_path: Path) -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        call(2, "read_buffer", {"path": "b.py"}),
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
        call({"bad": 1}, "read_buffer", {"path": "c.py"}),
    ]

    async def go(wire: Wire) -> dict[str, Any]:
        seen = {"version": await wire.initialize("2025-03-26")}
        seen["batch"] = await wire.ask(batch)
        seen["empty"] = await wire.ask([])
        seen["after"] = await wire.ping()
        return seen

    seen, ran = run(tmp_path, go)
    assert seen["version"] == "2025-03-26"
    answers = {a.get("id"): a for a in seen["batch"]}
    assert set(answers) == {1, 2, None}  # the notification gets none; the bad id: null
    assert answers[1]["result"] == {}
    assert answers[2]["result"]["content"][0]["text"] == "text of b.py"
    assert answers[None]["error"]["code"] == -32600
    assert seen["empty"]["error"]["code"] == -32600
    assert seen["after"] and ran == [{"path": "b.py"}]

    async def later(wire: Wire) -> dict[str, Any]:
        await wire.initialize("2025-06-18")
        return {"batch": await wire.ask(batch), "after": await wire.ping()}

    seen, ran = run(tmp_path, later)
    assert seen["batch"]["error"]["code"] == -32600 and "batch" in seen["batch"]["error"]["message"]
    assert seen["after"] and ran == []


def test_a_line_over_the_limit_is_answered_then_the_connection_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_host, "MAX_LINE", 1 << 20)  # 1 MiB: the same rule, a shorter test

    async def go(wire: Wire) -> list[Any]:
        await wire.initialize("2025-11-25")
        request = call(5, "read_buffer", {"path": "x" * (1 << 20)})
        return [await wire.ask(request), await wire.read()]

    (answer, after), ran = run(tmp_path, go)
    assert answer["error"]["code"] == -32600 and "MiB" in answer["error"]["message"]
    assert "id" not in answer
    assert after is None  # closed: the rest of that line is not read as a message
    assert ran == []
