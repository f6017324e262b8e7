"""The fake mm itself, against the spec, over raw JSON lines.

The library refuses the tool lists and answers mm would skip or render specially, so these
rows of shared/spec/acp-client-tools.md are checked here with a bare client: what the library
tests rely on the fake to do, it does.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from typing import Any

import fake_mm
import pytest
from conftest import FAKE_MM, FakeMM
from raw_client import RawClient, run

# --- validation of a list (spec: "Validation of a list") -------------------------------------

ENTRIES = [
    {"name": "open buffers", "method": "_com.example/workspace/buffers"},
    "not an object",
    {"name": "  ", "method": "_x/blank"},
    {"method": "_x/noname"},
    {"name": "no method"},
    {"name": "not extension", "method": "com.example/x"},
    {"name": "array tool", "method": "_x/a", "inputSchema": {"type": "array"}},
    {"name": "open-buffers", "method": "_x/dup"},
    {"name": 7, "method": "_x/seven"},
    {"name": "schema string", "method": "_x/s", "inputSchema": "object"},
    {"name": "alpha", "method": "_x/alpha", "inputSchema": {"properties": {}}},
]


def test_each_bad_entry_is_skipped_with_its_reason_and_the_rest_sorted(mm: FakeMM) -> None:
    async def main() -> None:
        raw = await RawClient.start(mm, mm.config())
        await raw.initialize(ENTRIES)
        await raw.close()
        skipped = "[acp] client tools: entry {} skipped: {}"
        assert raw.acp_lines() == [
            skipped.format(1, "not a tool description: expected a JSON object, got string"),
            skipped.format(2, "no name"),
            skipped.format(3, "no name"),
            skipped.format(4, 'method "" must start with "_" (an ACP extension method)'),
            skipped.format(
                5, 'method "com.example/x" must start with "_" (an ACP extension method)'
            ),
            skipped.format(6, 'inputSchema.type must be "object", got "array"'),
            skipped.format(7, 'duplicate tool name "client_open_buffers"'),
            skipped.format(8, 'not a tool description: "name" is a number, not a string'),
            skipped.format(9, 'not a tool description: "inputSchema" is a string, not an object'),
            "[acp] client tools (meta): client_alpha, client_open_buffers",
        ]

    run(main())


def test_true_in_meta_mode_gives_no_tool_and_says_why(mm: FakeMM) -> None:
    async def main() -> None:
        raw = await RawClient.start(mm, mm.config())
        await raw.initialize(True)
        session = await raw.new_session()
        text, _ = await raw.prompt(session, "/tools")
        await raw.close()
        assert json.loads(text) == []
        assert raw.acp_lines() == [f"[acp] client tools: {fake_mm.NOT_A_LIST}"]
        assert not [r for r in raw.requests if r["method"] == fake_mm.LIST_METHOD]

    run(main())


def test_disabled_client_tools_ignore_the_list(mm: FakeMM) -> None:
    async def main() -> None:
        raw = await RawClient.start(mm, mm.config(client_tools={"enabled": False}))
        await raw.initialize([{"name": "a", "method": "_a"}])
        text, _ = await raw.prompt(await raw.new_session(), "/tools")
        await raw.close()
        assert json.loads(text) == []
        assert raw.acp_lines() == []

    run(main())


# --- discovery: request mode outcomes ---------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "line"),
    [
        (
            {"error": {"code": -32603, "message": "Internal error"}},
            '_org.mini-me/tools/list failed: {"code":-32603,"message":"Internal error"}',
        ),
        ({"result": {"tools": "no"}}, "_org.mini-me/tools/list answered no tools array"),
        ({"result": None}, "_org.mini-me/tools/list answered no tools array"),
        (
            None,
            "_org.mini-me/tools/list failed: "
            '{"code":-32603,"message":"Internal error",'
            '"data":{"error":"context deadline exceeded"}}',
        ),
    ],
    ids=["error", "no-array", "null", "no-answer"],
)
def test_a_failed_list_request_gives_no_tool_one_line_and_the_session_opens(
    mm: FakeMM, answer: dict[str, Any] | None, line: str
) -> None:
    config = mm.config(client_tools={"discovery": "request", "timeout": "300ms"})

    async def main() -> None:
        raw = await RawClient.start(mm, config, lambda msg: answer)
        await raw.initialize(True)
        session = await raw.new_session("/work")
        text, _ = await raw.prompt(session, "/tools")
        await raw.close()
        assert json.loads(text) == []
        assert raw.acp_lines() == [f"[acp] client tools: {line}"]
        (request,) = raw.requests
        assert request["method"] == "_org.mini-me/tools/list"
        assert request["params"] == {"sessionId": session, "cwd": "/work"}
        cancels = [n for n in raw.notifications if n["method"] == "$/cancel_request"]
        expected = [{"requestId": request["id"]}] if answer is None else []
        assert [n["params"] for n in cancels] == expected

    run(main())


def test_each_session_asks_for_its_own_tools_before_it_is_answered(mm: FakeMM) -> None:
    config = mm.config(client_tools={"discovery": "request"})
    lists = {
        "/one": [{"name": "a", "method": "_a"}, 5],
        "/two": [{"name": "b", "method": "_b"}, {"name": "c", "method": "_c"}],
    }

    def answer(msg: dict[str, Any]) -> dict[str, Any]:
        return {"result": {"tools": lists[msg["params"]["cwd"]]}}

    async def main() -> None:
        raw = await RawClient.start(mm, config, answer)
        await raw.initialize(True)
        one = await raw.new_session("/one")
        two = await raw.new_session("/two")
        assert [r["params"]["sessionId"] for r in raw.requests] == [one, two]
        tools_one, _ = await raw.prompt(one, "/tools")
        tools_two, _ = await raw.prompt(two, "/tools")
        await raw.close()
        assert [t["name"] for t in json.loads(tools_one)] == ["client_a"]
        assert [t["name"] for t in json.loads(tools_two)] == ["client_b", "client_c"]
        assert raw.acp_lines() == [
            "[acp] client tools: entry 1 skipped: not a tool description: "
            "expected a JSON object, got number",
            f"[acp] session {one} client tools (request): client_a",
            f"[acp] session {two} client tools (request): client_b, client_c",
        ]

    run(main())


# --- the call and its answer (spec: "Response", "Errors") --------------------------------------

TOOL = {"name": "t", "method": "_x/t"}


@pytest.mark.parametrize(
    ("body", "read"),
    [
        (
            {"result": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}},
            "ab",
        ),
        (
            {"result": {"content": [{"type": "image", "data": "", "mimeType": "image/png"}]}},
            "[client tool: non-text content of type image skipped]",
        ),
        (
            {"result": {"content": [{"type": "text", "text": "bad"}], "isError": True}},
            "[client tool error: bad]",
        ),
        ({"result": "a string"}, "a string"),
        ({"result": {"x": [1, 2]}}, '{"x":[1,2]}'),
        ({"result": 42}, "42"),
        ({"result": [1, "a"]}, '[1,"a"]'),
        (
            {"error": {"code": -32601, "message": "Method not found"}},
            '[client tool error: {"code":-32601,"message":"Method not found"}]',
        ),
        (
            {"error": {"code": -32601, "message": "Method not found", "data": {"m": 1, "a": "<"}}},
            '[client tool error: {"code":-32601,"message":"Method not found",'
            '"data":{"a":"\\u003c","m":1}}]',
        ),
    ],
    ids=[
        "texts",
        "image",
        "is-error",
        "string",
        "object",
        "number",
        "array",
        "rpc-error",
        "rpc-error-with-data",
    ],
)
def test_what_the_model_reads_from_each_answer(mm: FakeMM, body: dict[str, Any], read: str) -> None:
    def answer(msg: dict[str, Any]) -> dict[str, Any]:
        return body

    async def main() -> None:
        raw = await RawClient.start(mm, mm.config(yolo=True), answer)
        await raw.initialize([TOOL])
        session = await raw.new_session()
        text, _ = await raw.prompt(session, '/tool t {"k": "v", "_meta": {"mine": 1}}')
        await raw.close()
        assert text == f"client_t -> {read}"
        (request,) = raw.requests
        assert request["method"] == "_x/t"
        assert request["params"] == {"k": "v", "_meta": {"org.mini-me/sessionId": session}}

    run(main())


def test_a_tool_call_is_reported_like_mm_does(mm: FakeMM) -> None:
    async def main() -> None:
        raw = await RawClient.start(
            mm, mm.config(yolo=True), lambda msg: {"result": {"content": []}}
        )
        await raw.initialize([TOOL])
        session = await raw.new_session()
        await raw.prompt(session, '/tool t {"k": 1}')
        await raw.close()
        updates = [n["params"]["update"] for n in raw.notifications]
        calls = [u for u in updates if u["sessionUpdate"].startswith("tool_call")]
        call_id = calls[0]["toolCallId"]
        assert calls == [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": "client: t",
                "kind": "other",
                "status": "pending",
                "rawInput": {"k": 1},
            },
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"},
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "completed",
                "rawOutput": {"output": ""},
                "content": [{"type": "content", "content": {"type": "text", "text": ""}}],
            },
        ]

    run(main())


def test_permission_request_offers_mm_four_options(mm: FakeMM) -> None:
    def answer(msg: dict[str, Any]) -> dict[str, Any]:
        return {"result": {"outcome": {"outcome": "selected", "optionId": "never"}}}

    async def main() -> None:
        raw = await RawClient.start(mm, mm.config(), answer)
        await raw.initialize([TOOL])
        session = await raw.new_session()
        text, _ = await raw.prompt(session, "/tool t {}\n/tool t {}")
        await raw.close()
        assert (
            text
            == "client_t -> [client_t rejected by user]\nclient_t -> [client_t rejected by user]"
        )
        (request,) = raw.requests  # "never" is remembered: asked once
        assert request["method"] == "session/request_permission"
        assert request["params"]["options"] == [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            {"optionId": "never", "name": "Never", "kind": "reject_always"},
        ]
        assert request["params"]["toolCall"]["title"] == "client: t"
        assert request["params"]["toolCall"]["kind"] == "other"

    run(main())


def test_prompt_answer_carries_usage(mm: FakeMM) -> None:
    async def main() -> None:
        raw = await RawClient.start(mm, mm.config())
        await raw.initialize()
        text, answer = await raw.prompt(await raw.new_session(), "/say hello")
        await raw.close()
        assert text == "hello"
        assert answer["result"] == {
            "stopReason": "end_turn",
            "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        }

    run(main())


def test_session_ids_look_like_mm(mm: FakeMM) -> None:
    async def main() -> None:
        raw = await RawClient.start(mm, mm.config())
        await raw.initialize()
        session = await raw.new_session()
        await raw.close()
        assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{8}", session)

    run(main())


def test_stored_sessions_are_listed_and_loaded_with_their_history(mm: FakeMM) -> None:
    stored = {
        "sessionId": "20261101-101010-0badcafe",
        "cwd": "/proj",
        "title": "Earlier",
        "updatedAt": "2026-11-01T10:10:10Z",
        "history": [{"role": "user", "text": "hi"}, {"role": "agent", "text": "hello"}],
    }
    config = mm.config(client_tools={"discovery": "request"}, fake={"load_sessions": [stored]})

    async def main() -> None:
        raw = await RawClient.start(mm, config, lambda msg: {"result": {"tools": []}})
        await raw.initialize(True)
        listed = await raw.call("session/list", {"cwd": "/proj"})
        elsewhere = await raw.call("session/list", {"cwd": "/other"})
        params = {"sessionId": stored["sessionId"], "cwd": "/proj", "mcpServers": []}
        loaded = await raw.call("session/load", params)
        text, _ = await raw.prompt(stored["sessionId"], "/say back")
        await raw.close()
        assert listed["result"]["sessions"] == [
            {k: stored[k] for k in ("sessionId", "cwd", "title", "updatedAt")}
        ]
        assert elsewhere["result"]["sessions"] == []
        assert "result" in loaded
        replayed = [n["params"]["update"] for n in raw.notifications[:2]]
        assert [(u["sessionUpdate"], u["content"]["text"]) for u in replayed] == [
            ("user_message_chunk", "hi"),
            ("agent_message_chunk", "hello"),
        ]
        (ask,) = raw.requests
        assert ask["params"] == {"sessionId": stored["sessionId"], "cwd": "/proj"}
        assert text == "back"

    run(main())


# --- command line and start-up ---------------------------------------------------------------


def test_other_usage_exits_2() -> None:
    done = subprocess.run(
        [sys.executable, str(FAKE_MM), "-p", "hello"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2
    assert done.stderr.startswith("usage: ")


def test_exit_before_initialize(mm: FakeMM) -> None:
    config = mm.config(fake={"exit_before_initialize": 3, "exit_message": "fatal: no model"})
    done = subprocess.run(
        [mm.bin, "-acp", "-config", config], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 3
    assert done.stderr.splitlines()[-1] == "fatal: no model"


def test_a_held_start_answers_only_once_its_file_exists(mm: FakeMM) -> None:
    """``hold_initialize`` / ``hold_session_new``: the plugin's start-up tests stop and cancel
    while these are unanswered, so they must stay unanswered until the test says so — and the
    fake must still hear stdin close meanwhile (a stop closes it)."""
    gate_init, gate_new = mm.dir / "init.go", mm.dir / "new.go"
    config = mm.config(fake={"hold_initialize": str(gate_init), "hold_session_new": str(gate_new)})

    async def main() -> None:
        raw = await RawClient.start(mm, config)
        init = asyncio.ensure_future(raw.initialize())
        await wait_until(lambda: bool(received(mm, "initialize")))
        assert not init.done() and not answered(raw), "held: initialize is not answered"
        gate_init.touch()
        assert "result" in await init
        new = asyncio.ensure_future(raw.new_session())
        await wait_until(lambda: bool(received(mm, "session/new")))
        assert not new.done(), "held: session/new is not answered"
        gate_new.touch()
        assert await new, "a session id once the file exists"
        # Held again (a second session): closing stdin still ends the fake at once.
        gate_new.unlink()
        held = asyncio.ensure_future(raw.new_session())
        await wait_until(lambda: len(received(mm, "session/new")) == 2)
        assert await raw.close() == 0
        held.cancel()
        answers = [json.loads(line) for line in raw.lines]
        sessions = [a for a in answers if "sessionId" in (a.get("result") or {})]
        assert len(sessions) == 1, "the held session/new was never answered"

    run(main())


def test_a_slow_start_answers_after_its_delay(mm: FakeMM) -> None:
    config = mm.config(fake={"initialize_delay": "300ms", "session_new_delay": 0.3})

    async def main() -> None:
        raw = await RawClient.start(mm, config)
        loop = asyncio.get_running_loop()
        started = loop.time()
        await raw.initialize()
        await raw.new_session()
        elapsed = loop.time() - started
        await raw.close()
        assert elapsed >= 0.6, elapsed

    run(main())


def received(mm: FakeMM, method: str) -> list[dict[str, Any]]:
    """The requests for ``method`` the fake has read (its trace)."""
    if not mm.trace_path.exists():
        return []
    lines = mm.trace_path.read_text().splitlines()
    messages = [json.loads(line) for line in lines if line.strip()]
    return [m["msg"] for m in messages if m["dir"] == "in" and m["msg"].get("method") == method]


def answered(raw: RawClient) -> bool:
    return any("result" in json.loads(line) for line in raw.lines)


async def wait_until(condition: Any, timeout: float = 20.0) -> None:
    """Poll ``condition`` until true, failing after ``timeout`` s."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


# --- pure helpers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "seen"),
    [
        ("open buffers", "client_open_buffers"),
        ("--weird..name--", "client_weird_name"),
        ("a/b.c", "client_a_b_c"),
        ("plain", "client_plain"),
    ],
)
def test_model_name(name: str, seen: str) -> None:
    assert fake_mm.model_name(name) == seen


def test_schema_as_the_model_sees_it() -> None:
    tool = fake_mm.model_tool(
        {
            "name": "open buffers",
            "description": "List the files open in the editor.",
            "method": "_com.example/workspace/buffers",
            "inputSchema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "language": {"type": "string", "description": "Only these.", "enum": ["go", 1]},
                    "kind": {"type": "string", "enum": ["a", "b"]},
                },
                "required": ["language", "kind"],
                "additionalProperties": False,
            },
        }
    )
    assert tool.as_model_sees_it() == {
        "name": "client_open_buffers",
        "description": "List the files open in the editor. Required parameters: language, kind",
        "inputSchema": {
            "type": "object",
            "properties": {
                "language": {"type": "string", "description": "Only these. One of: go, 1."},
                "kind": {"type": "string", "description": "One of: a, b."},
            },
        },
        "method": "_com.example/workspace/buffers",
    }
    bare = fake_mm.model_tool({"name": "x", "method": "_m/x"})
    assert bare.description == "Tool provided by the editor (_m/x)."
    assert bare.schema == {"type": "object", "properties": {}}


def test_truncate_keeps_head_and_tail() -> None:
    text = "A" * 60 + "B" * 100 + "C" * 60
    cut = fake_mm.truncate(text, 100)
    assert cut == "A" * 37 + "\n[… 146 characters cut …]\n" + "C" * 37
    assert fake_mm.truncate("short", 100) == "short"


@pytest.mark.parametrize("limit", [40, 99, 100, 101, 1000, 9999, 50_000])
@pytest.mark.parametrize("size", [10_000, 123_457, 1_000_000])
def test_truncate_gives_exactly_max_output_characters(limit: int, size: int) -> None:
    """maxOutput is a bound on what the model reads: the marker counts against it."""
    text = "".join(chr(0x41 + i % 26) for i in range(size))
    cut = fake_mm.truncate(text, limit)
    if size <= limit:
        assert cut == text
        return
    assert len(cut) == limit
    head, _, rest = cut.partition("\n[… ")
    count, _, tail = rest.partition(" characters cut …]\n")
    assert text.startswith(head) and text.endswith(tail)
    assert int(count) == size - len(head) - len(tail)
    assert abs(len(head) - len(tail)) <= 1


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30), ("200ms", 0.2), ("1m30s", 90), ("1.5s", 1.5)]
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert fake_mm.parse_duration(text) == pytest.approx(seconds)
