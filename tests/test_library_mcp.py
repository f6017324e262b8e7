"""A program's minime.Tools served over MCP (``connect(tools_via="mcp")``) to an agent that is
an MCP client of the servers it is given (tests/agents/mcp_agent.py); the tests read what it
reports crossing the wire, and the socket's security."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import stat
import sys
from pathlib import Path
from typing import Any

import minime
import pytest
from minime.model import ToolRequest

AGENT = Path(__file__).with_name("agents") / "mcp_agent.py"


def echo(request: ToolRequest) -> str:
    return json.dumps({"cwd": request.cwd, "session": request.session_id, **request.arguments})


def fail(_request: Any) -> str:
    raise ValueError("no such buffer")


TOOLS = [
    minime.Tool(
        "echo",
        echo,
        description="say it back",
        input_schema={"type": "object", "properties": {"x": {"type": "string"}}},
    ),
    minime.Tool("fail", fail),
]


async def connect(cwd: Path, **options: Any) -> minime.Client:
    options.setdefault("tools", TOOLS)
    options.setdefault("tools_via", "mcp")
    return await minime.connect(command=[sys.executable, str(AGENT)], cwd=cwd, **options)


async def said(session: Any, prompt: Any) -> str:
    text = prompt if isinstance(prompt, str) else json.dumps(prompt)
    events = [e async for e in session.stream(text)]
    return "".join(e.text for e in events if e.kind == "text")


def reply(text: str, word: str) -> Any:
    assert text.startswith(word + " "), text
    return json.loads(text[len(word) + 1 :])


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_tools_are_listed_and_called_over_mcp_in_the_sessions_cwd(tmp_path: Path) -> None:
    async def go() -> tuple[Any, Any, Any, Any, str]:
        client = await connect(tmp_path)
        try:
            session = await client.new_session()
            tools = reply(await said(session, "tools"), "TOOLS")
            called = reply(await said(session, {"tool": "echo", "arguments": {"x": "hi"}}), "MCP")
            failed = reply(await said(session, {"tool": "fail"}), "MCP")
            caps = reply(await said(session, "caps"), "CAPS")
            return tools, called, failed, caps, session.session_id
        finally:
            await client.close()

    tools, called, failed, caps, session_id = run(go())
    assert tools == {"minime": ["echo", "fail"]}
    text = called["result"]["content"][0]["text"]
    assert json.loads(text) == {"cwd": str(tmp_path), "session": session_id, "x": "hi"}
    assert called["result"]["isError"] is False
    assert failed["result"] == {
        "content": [{"type": "text", "text": "no such buffer"}],
        "isError": True,
    }
    # Over MCP, mm's client-tools extension is not offered: no model sees a tool twice.
    assert "org.mini-me/tools" not in json.dumps(caps)


def test_the_entry_is_acp_stdio_and_the_programs_own_servers_come_along(tmp_path: Path) -> None:
    own = [
        {"name": "files", "command": "/bin/true", "args": ["-x"], "env": {"K": "v"}},
        {"name": "web", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "A", "value": "b"}]},
    ]

    async def go() -> Any:
        client = await connect(tmp_path, mcp_servers=own)
        try:
            servers = reply(await said(await client.new_session(), "servers"), "SERVERS")
            return servers, client.mcp.dropped
        finally:
            await client.close()

    servers, dropped = run(go())
    by_name = {s["name"]: s for s in servers}
    assert by_name["files"] == {
        "name": "files",
        "command": "/bin/true",
        "args": ["-x"],
        "env": [{"name": "K", "value": "v"}],
    }
    assert "web" not in by_name and dropped == ["web"]  # the agent takes no http servers
    editor = by_name["minime"]
    assert editor["command"] == sys.executable
    assert {e["name"] for e in editor["env"]} == {"MINIME_MCP_SOCKET", "MINIME_MCP_TOKEN"}


def test_an_http_server_goes_to_an_agent_that_takes_http(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MCP_AGENT_HTTP", "1")
    own = [{"name": "web", "url": "http://127.0.0.1:9/mcp", "headers": {"A": "b"}}]

    async def go() -> Any:
        client = await connect(tmp_path, mcp_servers=own)
        try:
            return reply(await said(await client.new_session(), "servers"), "SERVERS")
        finally:
            await client.close()

    servers = run(go())
    assert {
        "type": "http",
        "name": "web",
        "url": "http://127.0.0.1:9/mcp",
        "headers": [{"name": "A", "value": "b"}],
    } in servers


@pytest.mark.parametrize(
    ("servers", "words"),
    [
        ([{"command": "x"}], "mcp_servers[1]: a server needs a name"),
        ([{"name": "a"}], "mcp_servers[1] (a): a server needs a command (stdio) or a url"),
        ([{"name": "a", "command": "x", "env": [{"name": 1}]}], "each of env must be"),
        ([{"name": "minime", "command": "x"}], "the editor's own server"),
        ("x", "mcp_servers must be a list"),
    ],
)
def test_bad_servers_are_refused_before_anything_starts(tmp_path: Path, servers, words) -> None:
    with pytest.raises(minime.Error, match=re.escape(words)):
        run(connect(tmp_path, mcp_servers=servers))


def _entry_env(servers: list[dict[str, Any]]) -> dict[str, str]:
    editor = next(s for s in servers if s["name"] == "minime")
    return {e["name"]: e["value"] for e in editor["env"]}


def _present(path: str, token: str) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(path)
        conn.sendall(token.encode() + b"\n")
        return conn.recv(4096)


def test_a_wrong_token_or_an_ended_sessions_is_refused_and_the_socket_is_private(
    tmp_path: Path,
) -> None:
    async def go() -> dict[str, Any]:
        client = await connect(tmp_path)
        try:
            first = await client.new_session()
            env = _entry_env(reply(await said(first, "servers"), "SERVERS"))
            path, token = env["MINIME_MCP_SOCKET"], env["MINIME_MCP_TOKEN"]
            seen: dict[str, Any] = {
                "dir_mode": stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode),
                "sock_mode": stat.S_IMODE(os.stat(path).st_mode),
                "good": await asyncio.to_thread(_present, path, token),
                "wrong": await asyncio.to_thread(_present, path, token[:-1] + "x"),
            }
            client.forget(first)  # the session ended
            seen["ended"] = await asyncio.to_thread(_present, path, token)
            seen["path"] = path
            return seen
        finally:
            await client.close()

    seen = run(go())
    assert seen["dir_mode"] == 0o700 and seen["sock_mode"] == 0o600
    assert seen["good"] == b"ok\n"
    assert seen["wrong"].startswith(b"refused")
    assert seen["ended"].startswith(b"refused")
    assert not os.path.exists(seen["path"])  # the client closed: nothing left to reach


def test_an_ended_sessions_bridge_is_cut_off_and_cannot_come_back(tmp_path: Path) -> None:
    async def go() -> tuple[Any, Any]:
        client = await connect(tmp_path)
        try:
            session = await client.new_session()
            client.mcp.ended(session.session_id)
            called = reply(await said(session, {"tool": "echo"}), "MCP")
            again = reply(await said(session, "restart"), "RESTARTED")
            return called, again
        finally:
            await client.close()

    called, again = run(go())
    assert called["exited"] == 0  # the host closed its socket: the bridge ended at once
    assert again["minime"]["exited"] == 1
    assert "refused" in again["minime"]["stderr"]


def test_the_bridge_exits_when_the_host_goes(tmp_path: Path) -> None:
    async def go() -> list[tuple[int, bool]]:
        client = await connect(tmp_path)
        try:
            session = await client.new_session()
            pids = reply(await said(session, "pids"), "PIDS")
            await client.mcp.close()  # the host's end goes, the agent stays
            return [(pid, await asyncio.to_thread(_gone_within, pid, 10)) for pid in pids]
        finally:
            await client.close()

    gone = run(go())
    assert gone and all(ended for _, ended in gone), gone


def _gone_within(pid: int, seconds: float) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ")[1].startswith("Z"):
                    return True  # exited, not yet reaped by the agent
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("how", ["load", "resume"])
def test_a_reopened_session_gets_a_fresh_server_and_its_old_token_is_refused(
    tmp_path: Path, how: str
) -> None:
    async def go() -> tuple[Any, Any, Any]:
        client = await connect(tmp_path)
        try:
            first = await client.new_session()
            old = _entry_env(reply(await said(first, "servers"), "SERVERS"))
            reopen = client.load_session if how == "load" else client.resume_session
            session = await reopen(first.session_id, str(tmp_path))
            new = _entry_env(reply(await said(session, "servers"), "SERVERS"))
            called = reply(await said(session, {"tool": "echo", "arguments": {"x": "y"}}), "MCP")
            path = old["MINIME_MCP_SOCKET"]
            refused = await asyncio.to_thread(_present, path, old["MINIME_MCP_TOKEN"])
            return new["MINIME_MCP_TOKEN"] != old["MINIME_MCP_TOKEN"], called, refused
        finally:
            await client.close()

    fresh, called, refused = run(go())
    assert fresh, "each opening gets its own token"
    assert json.loads(called["result"]["content"][0]["text"])["x"] == "y"
    assert refused.startswith(b"refused")


def test_a_long_runtime_dir_falls_back_to_one_where_the_socket_fits(
    tmp_path: Path, monkeypatch
) -> None:
    deep = tmp_path / ("d" * 90)
    deep.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))

    async def go() -> str:
        client = await connect(tmp_path)
        try:
            session = await client.new_session()
            path = _entry_env(reply(await said(session, "servers"), "SERVERS"))["MINIME_MCP_SOCKET"]
            called = reply(await said(session, {"tool": "echo"}), "MCP")
            assert called["result"]["isError"] is False
            return path
        finally:
            await client.close()

    path = run(go())
    assert not path.startswith(str(deep)) and len(path) < 104
