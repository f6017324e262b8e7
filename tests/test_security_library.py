"""An agent that sends anything JSON-RPC allows: the library's scope, liveness and bounds hold.

Each test runs tests/adversary.py (a raw JSON-lines agent) over real pipes and sends the very
bytes a hostile or broken agent would; the assertions are on what crosses the wire back and
what the program sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import minime
import pytest
from conftest import FakeMM

ADVERSARY = Path(__file__).with_name("adversary.py")
LIST = "_org.mini-me/tools/list"
WHERE = "_minime.py/tools/where"
SESSION_META = "org.mini-me/sessionId"


class Adversary:
    """One adversary run: its script file, its trace of what the client wrote."""

    def __init__(self, directory: Path, script: dict[str, Any]) -> None:
        self.dir = directory
        self.trace_path = directory / "adversary-trace.jsonl"
        self.script_path = directory / "adversary.json"
        self.script_path.write_text(json.dumps({"trace": str(self.trace_path), **script}))
        self.command = [sys.executable, str(ADVERSARY), str(self.script_path)]

    def answers(self) -> dict[Any, dict[str, Any]]:
        """The client's responses, by request id."""
        if not self.trace_path.exists():
            return {}
        lines = self.trace_path.read_text().splitlines()
        messages = [json.loads(line)["in"] for line in lines]
        return {m["id"]: m for m in messages if "method" not in m and "id" in m}


@contextlib.asynccontextmanager
async def adversary(
    directory: Path, script: dict[str, Any] | None = None, **options: Any
) -> AsyncIterator[tuple[Adversary, minime.Client]]:
    agent = Adversary(directory, script or {})
    options.setdefault("cwd", str(directory))
    options.setdefault("ready_timeout", 20)
    client = await minime.connect(command=agent.command, **options)
    try:
        yield agent, client
    finally:
        await client.close()


def steps(*items: dict[str, Any]) -> str:
    return json.dumps(list(items))


def ask(request_id: int, method: str, params: Any) -> dict[str, Any]:
    return {"ask": {"id": request_id, "method": method, "params": params}}


def where_tool(seen: list[tuple[str, str]]) -> Any:
    """A tool source for discovery request: it records what it was asked for."""

    def source(session_id: str, cwd: str) -> list[minime.Tool]:
        seen.append((session_id, cwd))
        return [minime.Tool("where", lambda request: request.cwd)]

    return source


def call_where(request_id: int, session_id: str) -> dict[str, Any]:
    return ask(request_id, WHERE, {"_meta": {SESSION_META: session_id}})


# -- 1. a list request cannot re-scope a session -------------------------------------------


def test_a_forged_list_request_naming_another_cwd_is_refused_and_the_cwd_stays(
    tmp_path: Path,
) -> None:
    seen: list[tuple[str, str]] = []
    own = str(tmp_path)
    on_open = [ask(1, LIST, {"sessionId": "@SID@", "cwd": "@CWD@"})]

    async def main() -> None:
        options = {"discovery": "request", "tools": where_tool(seen)}
        async with adversary(tmp_path, {"on_open": on_open}, **options) as (agent, client):
            session = await client.new_session()
            sid = session.session_id
            await session.complete(
                steps(
                    ask(2, LIST, {"sessionId": sid, "cwd": "/"}),
                    ask(3, LIST, {"sessionId": "invented", "cwd": "/"}),
                    ask(4, LIST, {"sessionId": "invented", "cwd": own}),
                    call_where(5, sid),
                    call_where(6, "invented"),
                )
            )
            answers = agent.answers()
            assert answers[1]["result"]["tools"][0]["name"] == "where"
            for refused in (2, 3, 4):
                assert answers[refused]["error"]["code"] == -32602, answers[refused]
            assert "refused" in answers[2]["error"]["data"]["details"]
            assert answers[5]["result"]["content"][0]["text"] == own
            assert answers[5]["result"]["isError"] is False
            assert answers[6]["result"]["isError"] is True
            assert "never opened" in answers[6]["result"]["content"][0]["text"]
            assert seen == [(sid, own)]  # the tool source never heard of "/"

    asyncio.run(main())


@pytest.mark.parametrize("how", ["new", "load", "resume"])
def test_a_list_request_while_opening_is_answered_only_for_that_open_and_its_cwd(
    tmp_path: Path, how: str
) -> None:
    seen: list[tuple[str, str]] = []
    own = str(tmp_path)
    on_open = [
        ask(1, LIST, {"sessionId": "@SID@", "cwd": "/"}),
        ask(2, LIST, {"sessionId": "someone-else", "cwd": "@CWD@"}),
        ask(3, LIST, {"sessionId": "@SID@", "cwd": "@CWD@"}),
    ]
    if how == "new":  # the slot is bound by 2 (an unknown id, the open's cwd): 3 is refused
        on_open = [on_open[0], on_open[2], on_open[1]]

    async def main() -> None:
        options = {"discovery": "request", "tools": where_tool(seen)}
        async with adversary(tmp_path, {"on_open": on_open}, **options) as (agent, client):
            if how == "new":
                session = await client.new_session()
            elif how == "load":
                session = await client.load_session("stored-1")
            else:
                session = await client.resume_session("stored-1")
            sid = session.session_id
            answers = agent.answers()
            assert answers[1]["error"]["code"] == -32602
            assert answers[2]["error"]["code"] == -32602
            assert [t["name"] for t in answers[3]["result"]["tools"]] == ["where"]
            assert seen == [(sid, own)]
            await session.complete(steps(call_where(4, sid)))
            assert agent.answers()[4]["result"]["content"][0]["text"] == own

    asyncio.run(main())


def test_in_meta_discovery_a_list_request_is_method_not_found(tmp_path: Path) -> None:
    tool = minime.Tool("where", lambda request: request.cwd)

    async def main() -> None:
        async with adversary(tmp_path, tools=[tool]) as (agent, client):
            session = await client.new_session()
            sid = session.session_id
            await session.complete(
                steps(ask(1, LIST, {"sessionId": sid, "cwd": "/"}), call_where(2, sid))
            )
            assert agent.answers()[1]["error"]["code"] == -32601
            assert agent.answers()[2]["result"]["content"][0]["text"] == str(tmp_path)

    asyncio.run(main())


# -- 2. odd lines are ignored; an agent that stops talking is dead ---------------------------

ODD_LINES = [
    "[1,2,3]",
    "42",
    "null",
    '"x"',
    "true",
    '{"jsonrpc":"2.0","id":{"a":1},"method":"session/request_permission","params":{}}',
    '{"jsonrpc":"2.0","id":[1],"method":"_minime.py/tools/where","params":{}}',
    '{"jsonrpc":"2.0","id":1.5,"method":"_minime.py/tools/where","params":{}}',
    '{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":{"a":1}}}',
    '{"jsonrpc":"2.0","method":"$/cancel_request","params":[1]}',
    '{"jsonrpc":"2.0","method":"$/cancel_request"}',
    '{"jsonrpc":"2.0","id":{"x":1},"result":{}}',
    '{"jsonrpc":"2.0","id":[0],"error":{"code":1,"message":"m"}}',
    '{"jsonrpc":"2.0","id":true,"result":{}}',
    '{"jsonrpc":"2.0","id":0,"error":"not an object"}',
    '{"jsonrpc":"2.0","method":5}',
    '{"jsonrpc":"2.0","method":"session/update","params":7}',
    '{"jsonrpc":"2.0"}',
    "{}",
    "[" * 100_000 + "]" * 100_000,
]


def test_odd_lines_are_ignored_and_the_connection_lives_on(tmp_path: Path) -> None:
    async def main() -> None:
        async with adversary(tmp_path) as (_agent, client):
            session = await client.new_session()
            odd = [{"raw": line} for line in ODD_LINES]
            result = await session.complete(steps(*odd, {"say": "still here"}))
            assert result.text == "still here"
            assert client.alive
            assert (await session.complete(steps({"say": "and again"}))).text == "and again"
            assert client.transport.dropped == len(ODD_LINES) - 4  # 3 cancels, 1 error mended

    asyncio.run(main())


def test_an_agent_that_closes_stdout_but_lives_on_is_dead_and_ended(tmp_path: Path) -> None:
    async def main() -> None:
        async with adversary(tmp_path) as (_agent, client):
            session = await client.new_session()
            with pytest.raises(minime.Error, match="closed its output while still running"):
                await session.complete(steps({"close_stdout": True}))
            assert not client.alive
            assert client.death is not None
            process = client.process
            assert process is not None
            await FakeMM.until(lambda: process.returncode is not None, what="the agent to end")
            with pytest.raises(minime.Error, match="closed its output"):
                await client.new_session()

    asyncio.run(main())


# -- 3. permissions for sessions never opened -----------------------------------------------


def test_a_permission_request_for_a_session_never_opened_is_refused_unasked(
    tmp_path: Path,
) -> None:
    asked: list[minime.PermissionRequest] = []

    def on_permission(request: minime.PermissionRequest) -> minime.Decision:
        asked.append(request)
        return minime.ALLOW

    options = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
    call = {"toolCallId": "c1", "title": "bash: rm -rf ~", "kind": "execute"}

    async def main() -> None:
        async with adversary(tmp_path, on_permission=on_permission) as (agent, client):
            session = await client.new_session()
            sid = session.session_id
            params = {"toolCall": call, "options": options}
            await session.complete(
                steps(
                    ask(1, "session/request_permission", {"sessionId": "invented", **params}),
                    ask(2, "session/request_permission", {"sessionId": sid, **params}),
                )
            )
            answers = agent.answers()
            assert answers[1]["error"]["code"] == -32602
            assert "never opened" in answers[1]["error"]["data"]["details"]
            assert answers[2]["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}
            assert [r.session_id for r in asked] == [sid]

    asyncio.run(main())


# -- 4. updates for sessions never opened are bounded ----------------------------------------


def _update(session_id: str, i: int) -> dict[str, Any]:
    content = {"type": "text", "text": f"u{i} " + "x" * 900}
    update = {"sessionUpdate": "agent_message_chunk", "content": content}
    message = {"jsonrpc": "2.0", "method": "session/update"}
    return {"raw": json.dumps({**message, "params": {"sessionId": session_id, "update": update}})}


def test_updates_for_unknown_sessions_are_bounded_and_freed(tmp_path: Path) -> None:
    from minime.scopes import EARLY_UPDATES_PER_SESSION, EARLY_UPDATES_TOTAL

    kept: list[tuple[int, int]] = []
    client_ref: list[minime.Client] = []

    def source(session_id: str, cwd: str) -> list[minime.Tool]:
        early = client_ref[0]._scopes.early  # what is held while the open is in flight
        kept.append((sum(len(v) for v in early.values()), len(early.get(session_id, []))))
        return []

    flood = [_update(f"ghost-{i}", i) for i in range(3000)]
    flood += [_update("@SID@", i) for i in range(EARLY_UPDATES_PER_SESSION + 200)]
    on_open = [*flood, ask(1, LIST, {"sessionId": "@SID@", "cwd": "@CWD@"})]

    async def main() -> None:
        options = {"discovery": "request", "tools": source}
        async with adversary(tmp_path, {"on_open": on_open}, **options) as (_agent, client):
            client_ref.append(client)
            session = await client.new_session()
            ((total, own),) = kept
            assert total == EARLY_UPDATES_TOTAL
            assert own == 0  # the ghosts filled the buffer first: the rest was dropped
            assert client._scopes.early == {}  # freed once no open is in flight
            ghosts = [_update(f"late-{i}", i) for i in range(2000)]
            await session.complete(steps(*ghosts, {"say": "done"}))
            assert client._scopes.early == {}  # nothing kept while nothing is being opened

    asyncio.run(main())


def test_early_updates_for_the_session_being_opened_are_bounded_per_session(
    tmp_path: Path,
) -> None:
    from minime.scopes import EARLY_UPDATES_PER_SESSION

    kept: list[int] = []
    client_ref: list[minime.Client] = []

    def source(session_id: str, cwd: str) -> list[minime.Tool]:
        kept.append(len(client_ref[0]._scopes.early.get(session_id, [])))
        return []

    flood = [_update("@SID@", i) for i in range(EARLY_UPDATES_PER_SESSION + 500)]
    on_open = [*flood, ask(1, LIST, {"sessionId": "@SID@", "cwd": "@CWD@"})]

    async def main() -> None:
        options = {"discovery": "request", "tools": source}
        async with adversary(tmp_path, {"on_open": on_open}, **options) as (_agent, client):
            client_ref.append(client)
            await client.new_session()
            assert kept == [EARLY_UPDATES_PER_SESSION]
            assert client._scopes.early == {}

    asyncio.run(main())


# -- 6. the agent's own words -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (
            {"code": -32603, "message": "Internal error", "data": {"error": "model overloaded"}},
            "Internal error (-32603): model overloaded",
        ),
        (
            {"code": -32603, "message": "Internal error", "data": {"details": "disk full"}},
            "Internal error (-32603): disk full",
        ),
        ({"code": -32000, "message": "Oops", "data": "plain words"}, "Oops (-32000): plain words"),
        ({"code": -32000, "message": "Oops", "data": [1, {"a": 2}]}, 'Oops (-32000): [1,{"a":2}]'),
        ({"code": -32000, "message": "Oops"}, "Oops (-32000)"),
    ],
)
def test_an_agent_error_is_shown_in_the_agents_words(
    tmp_path: Path, error: dict[str, Any], shown: str
) -> None:
    async def main() -> None:
        async with adversary(tmp_path) as (_agent, client):
            session = await client.new_session()
            with pytest.raises(minime.Error) as raised:
                await session.complete(steps({"fail": error}))
            assert str(raised.value) == f"turn failed: {shown}"
            assert "None" not in str(raised.value)

    asyncio.run(main())


def test_the_editor_starts_a_new_agent_after_one_closed_its_output(tmp_path: Path) -> None:
    """Through the plugin: the turn ends in an error that says so, the mute agent is ended,
    and the next ask starts a fresh agent that answers."""
    from conftest import process_gone
    from nvim_harness import wait_for
    from plugin_harness import editor

    with editor(tmp_path) as ed:
        first = ed.agent_pid()
        done, _text = ed.turn("/close-stdout")
        assert done["stop_reason"] == "error"
        assert "closed its output while still running" in done["error"]
        wait_for(lambda: process_gone(first), 10, message="for the mute agent to be ended")
        done, text = ed.turn("/say back again")
        assert done["stop_reason"] == "end_turn"
        assert "back again" in text
        assert ed.agent_pid() != first


def test_a_50_mb_line_still_arrives_whole(mm: FakeMM) -> None:
    """The strict transport reads lines of any length (the SDK's own default allows 50 MB)."""
    import fake_mm

    size = 50_000_000

    async def main() -> None:
        async with mm.agent(mm.config(trace=False)) as agent:
            result = await agent.complete(f"/bigline {size}\n/say after")
            assert len(result.text) == size + len("\nafter")
            assert result.text == fake_mm.bigline_text(size) + "\nafter"

    asyncio.run(main())


# -- hostile messages and failing handlers: one line on the library's logger -----------------

HOSTILE_UPDATES = [
    {"sessionUpdate": "tool_call"},
    {"sessionUpdate": "agent_message_chunk", "content": 5},
    {"sessionUpdate": "tool_call_update"},
    {"sessionUpdate": "current_mode_update"},
]


def test_hostile_updates_and_failing_fs_handlers_are_one_line_on_the_minime_logger(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The SDK logged each with its whole traceback on the root logger: for a program that
    configured no logging, a traceback on stderr per hostile line."""

    def read(session_id: str, path: str, line: Any, limit: Any) -> str:
        raise RuntimeError(f"cannot read {path}\nsecond line")

    def write(session_id: str, path: str, content: str) -> None:
        raise PermissionError(13, "Permission denied", path)

    target = str(tmp_path / "a.txt")

    async def main() -> dict[Any, dict[str, Any]]:
        async with adversary(tmp_path, fs=(read, write)) as (agent, client):
            session = await client.new_session()
            sid = session.session_id
            raw = [
                {"raw": json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": p})}
                for p in ({"sessionId": "@SID@", "update": u} for u in HOSTILE_UPDATES)
            ]
            result = await session.complete(
                steps(
                    *raw,
                    ask(1, "fs/read_text_file", {"sessionId": sid, "path": target}),
                    ask(2, "fs/write_text_file", {"sessionId": sid, "path": target, "content": ""}),
                    {"say": "still here"},
                )
            )
            assert result.text.endswith("still here")
            return agent.answers()

    # The minime logger's own level too: another test (a host) may have set it above DEBUG.
    with caplog.at_level("DEBUG"), caplog.at_level("DEBUG", logger="minime"):
        answers = asyncio.run(main())
    # The agent still reads what failed, in the handler's words.
    assert answers[1]["error"]["code"] == -32603
    assert answers[1]["error"]["data"]["details"].startswith(f"cannot read {target}")
    assert "Permission denied" in answers[2]["error"]["data"]["details"]
    assert [r.getMessage() for r in caplog.records if r.name == "root"] == []
    warnings = [r for r in caplog.records if r.name == "minime" and r.levelno >= 30]
    said = "\n".join(r.getMessage() for r in warnings)
    assert said.count("session/update") == len(HOSTILE_UPDATES), said
    assert "fs/read_text_file: the handler failed: RuntimeError: cannot read" in said
    assert "fs/write_text_file: the handler failed: PermissionError" in said
    for record in warnings:
        assert record.exc_info is None and "\n" not in record.getMessage(), record.getMessage()
    debug = [r for r in caplog.records if r.name == "minime" and r.levelno == 10 and r.exc_info]
    assert len(debug) >= len(HOSTILE_UPDATES) + 2  # the tracebacks, for who asks for them


def test_the_working_directory_itself_is_not_a_file_to_read(tmp_path: Path) -> None:
    seen: list[str] = []

    def read(session_id: str, path: str, line: Any, limit: Any) -> str:
        seen.append(path)
        return "listing"

    async def main() -> dict[Any, dict[str, Any]]:
        async with adversary(tmp_path, fs=(read, lambda *_: None)) as (agent, client):
            session = await client.new_session()
            sid = session.session_id
            paths = [str(tmp_path), str(tmp_path) + "/", str(tmp_path / "sub" / "..")]
            await session.complete(
                steps(
                    *(
                        ask(n, "fs/read_text_file", {"sessionId": sid, "path": p})
                        for n, p in enumerate(paths, 1)
                    )
                )
            )
            return agent.answers()

    answers = asyncio.run(main())
    assert seen == []
    for n in (1, 2, 3):
        assert answers[n]["error"]["code"] == -32602, answers[n]
        assert "working directory, not a file" in answers[n]["error"]["data"]["details"]
