"""Client tools through the library, against the fake mm: shared/spec/acp-client-tools.md.

What the model reads is what the fake says after ``<model name> ->``; what crossed the wire is
in the fake's trace.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import fake_mm
import minime
import pytest
from conftest import FakeMM
from helpers.handlers import Recorder
from helpers.wire import DEADLINE_ERROR

DEFAULT_METHOD = "_minime.py/tools/"


class Hang:
    """An async handler that never answers until cancelled, and says so."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False

    async def __call__(self, request: minime.ToolRequest) -> str:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return "never"


def yolo(mm: FakeMM, **client_tools: Any) -> str:
    return mm.config(yolo=True, client_tools=client_tools or None)


def tools_seen(text: str) -> list[dict[str, Any]]:
    return json.loads(text)


# --- discovery -------------------------------------------------------------------------------


def test_meta_discovery_sends_the_list_in_initialize(mm: FakeMM) -> None:
    tools = [
        minime.Tool(
            "open buffers",
            Recorder(),
            description="List the files open in the editor.",
            input_schema={"type": "object", "properties": {"language": {"type": "string"}}},
        ),
        minime.Tool("add", Recorder(), method="_com.example/todo/add"),
    ]

    async def main() -> None:
        async with mm.agent(yolo(mm), tools=tools) as agent:
            seen = tools_seen((await agent.complete("/tools")).text)
        (initialize,) = mm.received("initialize")
        meta = initialize["params"]["clientCapabilities"]["_meta"]
        assert meta == {
            "org.mini-me/tools": [
                {
                    "name": "open buffers",
                    "method": DEFAULT_METHOD + "open buffers",
                    "description": "List the files open in the editor.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"language": {"type": "string"}},
                    },
                },
                {"name": "add", "method": "_com.example/todo/add"},
            ]
        }
        assert [t["name"] for t in seen] == ["client_add", "client_open_buffers"]
        assert "[acp] client tools (meta): client_add, client_open_buffers" in mm.stderr
        assert mm.sent(fake_mm.LIST_METHOD) == []

    asyncio.run(main())


def test_no_tools_no_capability(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            assert tools_seen((await agent.complete("/tools")).text) == []
        (initialize,) = mm.received("initialize")
        meta = initialize["params"].get("clientCapabilities", {}).get("_meta") or {}
        assert "org.mini-me/tools" not in meta

    asyncio.run(main())


def test_request_discovery_answers_the_list_while_session_new_waits(mm: FakeMM) -> None:
    asked: list[tuple[str, str]] = []

    def tools(session_id: str, cwd: str) -> list[minime.Tool]:
        asked.append((session_id, cwd))
        return [minime.Tool("buffers", Recorder("a.go"))]

    config = yolo(mm, discovery="request")

    async def main() -> None:
        async with mm.agent(config, tools=tools, discovery="request") as agent:
            assert asked == [(agent.session_id, str(mm.dir))]
            text = (await agent.complete("/tool buffers {}")).text
            assert text == "client_buffers -> a.go"
            line = f"[acp] session {agent.session_id} client tools (request): client_buffers"
            assert line in mm.stderr
        (initialize,) = mm.received("initialize")
        assert initialize["params"]["clientCapabilities"]["_meta"] == {"org.mini-me/tools": True}
        # mm's list request was answered before mm answered session/new.
        trace = mm.trace()
        ask = next(i for i, t in enumerate(trace) if t["msg"].get("method") == fake_mm.LIST_METHOD)
        ask_id = trace[ask]["msg"]["id"]
        answered = next(
            i
            for i, t in enumerate(trace)
            if t["dir"] == "in" and t["msg"].get("id") == ask_id and "method" not in t["msg"]
        )
        (new,) = mm.received("session/new")
        opened = next(
            i
            for i, t in enumerate(trace)
            if t["dir"] == "out" and t["msg"].get("id") == new["id"] and "result" in t["msg"]
        )
        assert ask < answered < opened
        assert trace[answered]["msg"]["result"] == {
            "tools": [{"name": "buffers", "method": DEFAULT_METHOD + "buffers"}]
        }

    asyncio.run(main())


def test_async_tool_source_in_request_mode(mm: FakeMM) -> None:
    async def tools(session_id: str, cwd: str) -> list[minime.Tool]:
        await asyncio.sleep(0)
        return [minime.Tool("later", Recorder("yes"))]

    async def main() -> None:
        config = yolo(mm, discovery="request")
        async with mm.agent(config, tools=tools, discovery="request") as agent:
            assert (await agent.complete("/tool later {}")).text == "client_later -> yes"

    asyncio.run(main())


def test_several_sessions_with_their_own_tools(mm: FakeMM, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    handlers = {str(one): Recorder("from one"), str(two): Recorder("from two")}

    def tools(session_id: str, cwd: str) -> list[minime.Tool]:
        name = os.path.basename(cwd)
        return [minime.Tool(f"only {name}", handlers[cwd]), minime.Tool("both", handlers[cwd])]

    async def main() -> None:
        async with mm.client(yolo(mm, discovery="request"), tools=tools, discovery="request") as c:
            first = await c.new_session(str(one))
            second = await c.new_session(str(two))
            assert first.session_id != second.session_id
            seen_one = tools_seen((await first.complete("/tools")).text)
            seen_two = tools_seen((await second.complete("/tools")).text)
            assert [t["name"] for t in seen_one] == ["client_both", "client_only_one"]
            assert [t["name"] for t in seen_two] == ["client_both", "client_only_two"]
            results = await asyncio.gather(
                first.complete("/tool both {}\n/tool only_two {}"),
                second.complete("/tool both {}"),
            )
            assert [r.text for r in results] == [
                "client_both -> from one\nonly_two -> [unknown tool]",
                "client_both -> from two",
            ]
        (request_one,) = handlers[str(one)].requests
        (request_two,) = handlers[str(two)].requests
        assert (request_one.session_id, request_one.cwd) == (first.session_id, str(one))
        assert (request_two.session_id, request_two.cwd) == (second.session_id, str(two))

    asyncio.run(main())


def test_meta_tools_serve_every_session_of_the_connection(mm: FakeMM, tmp_path: Path) -> None:
    handler = Recorder("seen")

    async def main() -> None:
        async with mm.client(yolo(mm), tools=[minime.Tool("t", handler)]) as client:
            first = await client.new_session(str(tmp_path))
            second = await client.new_session(str(tmp_path))
            for session in (first, second):
                assert (await session.complete("/tool t {}")).text == "client_t -> seen"
        assert [r.session_id for r in handler.requests] == [first.session_id, second.session_id]
        assert len(mm.received("initialize")) == 1

    asyncio.run(main())


def test_a_failing_tool_source_gives_a_session_without_tools(mm: FakeMM) -> None:
    def tools(session_id: str, cwd: str) -> list[minime.Tool]:
        raise RuntimeError("no editor state")

    async def main() -> None:
        config = yolo(mm, discovery="request")
        async with mm.agent(config, tools=tools, discovery="request") as agent:
            assert tools_seen((await agent.complete("/tools")).text) == []
        failed = [line for line in mm.stderr if line.startswith("[acp] client tools: ")]
        assert len(failed) == 1
        assert failed[0].startswith("[acp] client tools: _org.mini-me/tools/list failed: ")

    asyncio.run(main())


def test_a_tool_source_that_never_answers_times_out_and_is_cancelled(mm: FakeMM) -> None:
    hang = Hang()

    async def tools(session_id: str, cwd: str) -> list[minime.Tool]:
        await hang(None)  # type: ignore[arg-type]
        return []

    async def main() -> None:
        config = yolo(mm, discovery="request", timeout="300ms")
        async with mm.agent(config, tools=tools, discovery="request") as agent:
            assert tools_seen((await agent.complete("/tools")).text) == []
            await mm.until(lambda: hang.cancelled, what="the list request to be cancelled")
        line = f"[acp] client tools: _org.mini-me/tools/list failed: {DEADLINE_ERROR}"
        assert line in mm.stderr

    asyncio.run(main())


def test_request_mode_client_against_meta_mode_agent(mm: FakeMM) -> None:
    def tools(session_id: str, cwd: str) -> list[minime.Tool]:
        return [minime.Tool("x", Recorder())]

    async def main() -> None:
        async with mm.agent(yolo(mm), tools=tools, discovery="request") as agent:
            assert tools_seen((await agent.complete("/tools")).text) == []
        assert f"[acp] client tools: {fake_mm.NOT_A_LIST}" in mm.stderr

    asyncio.run(main())


@pytest.mark.parametrize("discovery", ["meta", "request"])
def test_disabled_client_tools(mm: FakeMM, discovery: str) -> None:
    tool = minime.Tool("x", Recorder())
    tools: Any = [tool] if discovery == "meta" else (lambda sid, cwd: [tool])

    async def main() -> None:
        config = yolo(mm, enabled=False, discovery=discovery)
        async with mm.agent(config, tools=tools, discovery=discovery) as agent:
            assert tools_seen((await agent.complete("/tools")).text) == []
        assert mm.sent(fake_mm.LIST_METHOD) == []
        assert not [line for line in mm.stderr if line.startswith("[acp]")]

    asyncio.run(main())


# --- the client's own checks (before anything is spawned) ---------------------------------------


@pytest.mark.parametrize(
    ("tools", "words"),
    [
        ([minime.Tool("", Recorder())], "no name"),
        ([minime.Tool("   ", Recorder())], "no name"),
        ([minime.Tool("x", None)], "no handle"),
        (
            [minime.Tool("open buffers", Recorder()), minime.Tool("open-buffers", Recorder())],
            'duplicate tool name "client_open_buffers"',
        ),
        ([minime.Tool("x", Recorder(), method="com.example/x")], 'must start with "_"'),
        (
            [minime.Tool("x", Recorder(), input_schema={"type": "array"})],
            'inputSchema.type must be "object"',
        ),
    ],
    ids=["no-name", "blank-name", "no-handle", "duplicate", "method", "schema-type"],
)
def test_bad_tools_are_refused_before_spawning(
    mm: FakeMM, monkeypatch: pytest.MonkeyPatch, tools: list[minime.Tool], words: str
) -> None:
    spawned = mm.dir / "spawned"
    monkeypatch.setenv("FAKE_MM_SPAWNED", str(spawned))

    async def main() -> None:
        with pytest.raises(minime.Error, match=words.replace("(", r"\(")):
            await minime.start(mm.config(), mm=mm.bin, cwd=str(mm.dir), tools=tools)

    asyncio.run(main())
    assert not spawned.exists()


# --- names and schemas as the model sees them --------------------------------------------------


def test_names_are_sanitised(mm: FakeMM) -> None:
    names = ["open buffers", "--weird..name--", "a/b.c", "Plain9"]
    tools = [minime.Tool(name, Recorder(name)) for name in names]

    async def main() -> None:
        async with mm.agent(yolo(mm), tools=tools) as agent:
            seen = tools_seen((await agent.complete("/tools")).text)
            text = (await agent.complete("/tool client_weird_name {}")).text
        assert [t["name"] for t in seen] == [
            "client_Plain9",
            "client_a_b_c",
            "client_open_buffers",
            "client_weird_name",
        ]
        assert text == "client_weird_name -> --weird..name--"

    asyncio.run(main())


def test_the_schema_as_the_model_sees_it(mm: FakeMM) -> None:
    tools = [
        minime.Tool(
            "open buffers",
            Recorder(),
            description="List the files open in the editor.",
            input_schema={
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "language": {
                        "type": "string",
                        "description": "Only the buffers of this language.",
                        "enum": ["go", "python"],
                    },
                    "limit": {"type": "integer"},
                },
                "required": ["language", "limit"],
                "additionalProperties": False,
            },
        ),
        minime.Tool("bare", Recorder()),
    ]

    async def main() -> None:
        async with mm.agent(yolo(mm), tools=tools) as agent:
            seen = tools_seen((await agent.complete("/tools")).text)
        assert seen == [
            {
                "name": "client_bare",
                "description": f"Tool provided by the editor ({DEFAULT_METHOD}bare).",
                "inputSchema": {"type": "object", "properties": {}},
                "method": DEFAULT_METHOD + "bare",
            },
            {
                "name": "client_open_buffers",
                "description": "List the files open in the editor. "
                "Required parameters: language, limit",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "language": {
                            "type": "string",
                            "description": "Only the buffers of this language. One of: go, python.",
                        },
                        "limit": {"type": "integer"},
                    },
                },
                "method": DEFAULT_METHOD + "open buffers",
            },
        ]

    asyncio.run(main())


# --- the call -----------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    "required": ["a", "b"],
}


def test_missing_required_parameters_send_no_request(mm: FakeMM) -> None:
    handler = Recorder()
    tools = [minime.Tool("need", handler, input_schema=SCHEMA)]

    async def main() -> None:
        async with mm.agent(yolo(mm), tools=tools) as agent:
            text = (await agent.complete('/tool need {"b": "x"}')).text
            events = [e async for e in agent.stream("/tool need {}")]
        assert text == "client_need -> [client tool error: missing required parameters: a]"
        (result,) = [e for e in events if e.kind == "tool_result"]
        assert result.status == "failed"
        assert result.output == "[client tool error: missing required parameters: a, b]"
        assert handler.requests == []
        assert mm.sent(DEFAULT_METHOD + "need") == []

    asyncio.run(main())


def test_the_request_carries_the_arguments_and_the_session(mm: FakeMM) -> None:
    handler = Recorder("done")
    tools = [minime.Tool("need", handler, input_schema=SCHEMA)]
    args = {"a": "1", "b": "2", "n": [1, {"deep": True}], "_meta": {"the model": "put this"}}

    async def main() -> None:
        async with mm.agent(yolo(mm), tools=tools) as agent:
            text = (await agent.complete(f"/tool need {json.dumps(args)}")).text
            session_id = agent.session_id
        assert text == "client_need -> done"
        (request,) = handler.requests
        assert request.session_id == session_id
        assert request.arguments == {"a": "1", "b": "2", "n": [1, {"deep": True}]}
        assert request.cwd == str(mm.dir)
        (wire,) = mm.sent(DEFAULT_METHOD + "need")
        assert wire["params"] == {
            "a": "1",
            "b": "2",
            "n": [1, {"deep": True}],
            "_meta": {"org.mini-me/sessionId": session_id},
        }
        assert mm.answer_to(wire["id"])["result"] == {
            "content": [{"type": "text", "text": "done"}],
            "isError": False,
        }

    asyncio.run(main())


def test_a_session_this_connection_never_opened_is_refused_without_running(mm: FakeMM) -> None:
    handler = Recorder()
    tools = [minime.Tool("t", handler)]

    async def main() -> None:
        async with mm.agent(yolo(mm), tools=tools) as agent:
            text = (await agent.complete("/tool-as 20000101-000000-deadbeef t {}")).text
        assert text.startswith("client_t -> [client tool error: ")
        assert handler.requests == []
        (wire,) = mm.sent(DEFAULT_METHOD + "t")
        assert mm.answer_to(wire["id"])["result"]["isError"] is True

    asyncio.run(main())


def test_a_session_closed_by_reset_is_refused_too(mm: FakeMM) -> None:
    handler = Recorder()

    async def main() -> None:
        async with mm.agent(yolo(mm), tools=[minime.Tool("t", handler)]) as agent:
            old = agent.session_id
            await agent.reset()
            text = (await agent.complete(f"/tool-as {old} t {{}}")).text
            assert (await agent.complete("/tool t {}")).text == "client_t -> ok"
        assert text.startswith("client_t -> [client tool error: ")
        assert [r.session_id for r in handler.requests] == [agent.session_id]

    asyncio.run(main())


@pytest.mark.parametrize(
    ("reply", "read", "is_error"),
    [
        ("main.go\nutil.go", "main.go\nutil.go", False),
        ("", "", False),
        (ValueError("no such buffer"), "[client tool error: no such buffer]", True),
    ],
    ids=["text", "empty", "raises"],
)
def test_the_handler_answer_is_what_the_model_reads(
    mm: FakeMM, reply: Any, read: str, is_error: bool
) -> None:
    async def main() -> None:
        async with mm.agent(yolo(mm), tools=[minime.Tool("t", Recorder(reply))]) as agent:
            events = [e async for e in agent.stream("/tool t {}")]
            assert (await agent.complete("/say still alive")).text == "still alive"
        (result,) = [e for e in events if e.kind == "tool_result"]
        assert (result.output, result.status) == (read, "failed" if is_error else "completed")
        assert events[-1].text == f"client_t -> {read}"
        (wire,) = mm.sent(DEFAULT_METHOD + "t")
        assert mm.answer_to(wire["id"])["result"]["isError"] is is_error

    asyncio.run(main())


def test_one_tool_call_event_then_updates_then_the_result(mm: FakeMM) -> None:
    # mm sends tool_call (pending, with title, kind and rawInput), then tool_call_update
    # (in_progress, with none of them), then the final update: one tool_call event, then a
    # tool_update that does not blank what the first said, then tool_result.
    async def main() -> None:
        async with mm.agent(yolo(mm), tools=[minime.Tool("t", Recorder("done"))]) as agent:
            events = [e async for e in agent.stream('/tool t {"k": 1}')]
        tool_events = [e for e in events if e.call is not None]
        assert [e.kind for e in tool_events] == ["tool_call", "tool_update", "tool_result"]
        call, update, result = (e.call for e in tool_events)
        assert call is not None and update is not None and result is not None
        assert (call.id, call.title, call.kind, call.input) == (
            call.id,
            "client: t",
            "other",
            {"k": 1},
        )
        assert (update.id, update.title, update.kind, update.input) == (
            call.id,
            "client: t",
            "other",
            {"k": 1},
        )
        assert [c.status for c in (call, update, result)] == ["pending", "in_progress", "completed"]
        assert (result.id, tool_events[2].output) == (call.id, "done")

    asyncio.run(main())


def test_async_handlers_and_concurrent_calls(mm: FakeMM) -> None:
    inside = 0
    most = 0
    all_in = asyncio.Event()

    async def handle(request: minime.ToolRequest) -> str:
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        if inside == 3:
            all_in.set()
        await asyncio.wait_for(all_in.wait(), 10)
        inside -= 1
        return f"n={request.arguments['n']}"

    async def main() -> None:
        async with mm.agent(yolo(mm), tools=[minime.Tool("t", handle)]) as agent:
            text = (await agent.complete('/parallel 3 t {"n": 7}')).text
        assert text == "\n".join(["client_t -> n=7"] * 3)
        assert most == 3

    asyncio.run(main())


def test_sync_handlers_do_not_block_the_connection(mm: FakeMM) -> None:
    release = threading.Event()

    def handle(request: minime.ToolRequest) -> str:
        assert release.wait(10)
        return "sync"

    async def main() -> None:
        async with mm.agent(yolo(mm), tools=[minime.Tool("t", handle)]) as agent:
            stream = agent.stream("/tool t {}")
            first = await stream.__anext__()  # the tool_call event arrives while it blocks
            while first.kind == "commands":  # the session's commands (sent after session/new)
                first = await stream.__anext__()
            assert first.kind == "tool_call"
            release.set()
            events = [first] + [e async for e in stream]
        assert events[-1].text == "client_t -> sync"

    asyncio.run(main())


# --- errors (spec: "Errors") -------------------------------------------------------------------


def test_an_unknown_method_is_answered_method_not_found(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent(yolo(mm), tools=[minime.Tool("t", Recorder())]) as agent:
            text = (await agent.complete("/call _nobody/home {}")).text
            assert (await agent.complete("/tool t {}")).text == "client_t -> ok"
        # mm reads a JSON-RPC error as Go's RequestError.Error(): with the data the SDK put in.
        assert text == (
            '_nobody/home -> [client tool error: {"code":-32601,"message":"Method not found",'
            '"data":{"method":"_nobody/home"}}]'
        )

    asyncio.run(main())


def test_a_call_with_no_answer_in_time_is_cancelled(mm: FakeMM) -> None:
    hang = Hang()

    async def main() -> None:
        config = yolo(mm, timeout="300ms")
        async with mm.agent(config, tools=[minime.Tool("slow", hang)]) as agent:
            result = await agent.complete("/tool slow {}\n/say the turn goes on")
            assert result.text == (
                f"client_slow -> [client tool error: {DEADLINE_ERROR}]\nthe turn goes on"
            )
            assert result.stop_reason == "end_turn"
            await mm.until(lambda: hang.cancelled, what="the handler to be cancelled")
            (wire,) = mm.sent(DEFAULT_METHOD + "slow")
            (cancel,) = mm.sent("$/cancel_request")
            assert cancel["params"] == {"requestId": wire["id"]}
            answer = await mm.until(lambda: mm.answer_to(wire["id"]), what="the -32800 answer")
            assert answer["error"]["code"] == -32800

    asyncio.run(main())


def test_a_cancelled_turn_cancels_the_running_call(mm: FakeMM) -> None:
    hang = Hang()

    async def main() -> None:
        async with mm.agent(yolo(mm), tools=[minime.Tool("slow", hang)]) as agent:
            turn = asyncio.ensure_future(agent.complete("/say before\n/tool slow {}"))
            await asyncio.wait_for(hang.started.wait(), 10)
            await agent.cancel()
            result = await asyncio.wait_for(turn, 10)
            assert result.stop_reason == "cancelled"
            assert result.text == "before"
            await mm.until(lambda: hang.cancelled, what="the handler to be cancelled")
            (wire,) = mm.sent(DEFAULT_METHOD + "slow")
            assert [c["params"] for c in mm.sent("$/cancel_request")] == [{"requestId": wire["id"]}]
            assert (await agent.complete("/say next")).text == "next"

    asyncio.run(main())


@pytest.mark.parametrize("fails", [False, True], ids=["result", "error"])
def test_every_result_is_cut_to_max_output(mm: FakeMM, fails: bool) -> None:
    long = "A" * 60 + "B" * 100 + "C" * 60
    reply: Any = RuntimeError(long) if fails else long
    seen = f"[client tool error: {long}]" if fails else long

    async def main() -> None:
        config = mm.config(yolo=True, max_output=100)
        async with mm.agent(config, tools=[minime.Tool("big", Recorder(reply))]) as agent:
            events = [e async for e in agent.stream("/tool big {}")]
        (result,) = [e for e in events if e.kind == "tool_result"]
        assert result.output == fake_mm.truncate(seen, 100)
        assert len(result.output) == 100, "maxOutput bounds what the model reads, marker included"
        assert result.output.startswith(seen[:30]) and result.output.endswith(seen[-30:])
        assert "B" * 60 not in result.output
        assert events[-1].text == f"client_big -> {fake_mm.truncate(seen, 100)}"

    asyncio.run(main())
