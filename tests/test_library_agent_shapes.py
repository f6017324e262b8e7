"""What real ACP agents send, through the library: tests/agents/shapes.py as the agent (see its
docstring), and the fake mm (mm's Go wire) for the size of a client tool's answer. Each test
reads the events a program receives, what the library logs, or what the model read.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

import minime
import pytest
from conftest import FakeMM

SHAPES = Path(__file__).with_name("agents") / "shapes.py"


async def events_of(prompt: str, cwd: Path) -> list[minime.Event]:
    client = await minime.connect(command=[sys.executable, str(SHAPES)], cwd=cwd)
    try:
        session = await client.new_session()
        return [event async for event in session.stream(prompt)]
    finally:
        await client.close()


FLUSHED = "ignored notification _shapes/flushed"


class Flushes(logging.Handler):
    """Counts the agent's ``_shapes/flushed`` notifications the client has read."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() == FLUSHED:
            self.count += 1

    async def wait(self, count: int, timeout: float = 10.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while self.count < count:
            assert asyncio.get_running_loop().time() < deadline, "the agent's late updates"
            await asyncio.sleep(0.005)

    def __enter__(self) -> Flushes:
        logging.getLogger("minime").addHandler(self)
        logging.getLogger("minime").setLevel(logging.INFO)
        return self

    def __exit__(self, *_: object) -> None:
        logging.getLogger("minime").removeHandler(self)


def results(events: list[minime.Event]) -> dict[str, minime.Event]:
    return {e.call.id: e for e in events if e.kind == "tool_result" and e.call is not None}


def test_chunks_carry_their_message_id(tmp_path: Path) -> None:
    events = asyncio.run(events_of("messages", tmp_path))
    chunks = [(e.kind, e.message_id, e.text) for e in events if e.kind in ("text", "thinking")]
    assert chunks == [
        ("thinking", "t1", "\n\n"),
        ("thinking", "t1", "**Planning**\n\nwrite the file"),
        ("text", "m1", "I wrote "),
        ("text", "m1", "hello.txt."),
        ("text", "m2", "\nAll done"),
        ("text", "m2", ", bye."),
    ]


def test_a_turns_text_keeps_its_messages_apart(tmp_path: Path) -> None:
    """Result.text glued two messages into one line (``…hello.txt.All done…``, claude's text
    before and after a tool): a new messageId starts a new paragraph."""

    async def main() -> minime.Result:
        client = await minime.connect(command=[sys.executable, str(SHAPES)], cwd=tmp_path)
        try:
            return await (await client.new_session()).complete("messages")
        finally:
            await client.close()

    assert asyncio.run(main()).text == "I wrote hello.txt.\n\n\nAll done, bye."


def test_text_after_a_tool_call_without_message_ids_is_a_message_of_its_own(
    tmp_path: Path,
) -> None:
    """gemini-cli sends no messageId: its text before and after a command read glued
    (``Running it.All done.``)."""

    async def main() -> minime.Result:
        client = await minime.connect(command=[sys.executable, str(SHAPES)], cwd=tmp_path)
        try:
            return await (await client.new_session()).complete("gemini")
        finally:
            await client.close()

    assert asyncio.run(main()).text == "Running it.\n\nAll done."


def test_an_mcp_call_tool_result_in_raw_output_is_shown_as_its_text(tmp_path: Path) -> None:
    """codex-acp sends an MCP tool's result only as rawOutput, the CallToolResult wrapped:
    its text (or its error), not 13 lines of JSON around it (I2)."""
    done = results(asyncio.run(events_of("mcpresult", tmp_path)))
    assert (done["m1"].status, done["m1"].output) == ("completed", '{"text":"unsaved words"}')
    assert (done["m2"].status, done["m2"].output) == (
        "failed",
        "error: tool call failed: the server is gone",
    )


def test_tool_output_wherever_the_agent_puts_it(tmp_path: Path) -> None:
    events = asyncio.run(events_of("qwen codex edit terminal nokind", tmp_path))
    done = results(events)
    assert done["q1"].output == "line one\nline two\n"  # qwen: rawOutput "", text in content
    assert done["c1"].output == "a.txt\n"  # codex: a JSON rawOutput's known field
    # An edit: the diff is in call.content; its 252 KB JSON rawOutput (the same two files) is
    # not made into output text.
    assert done["e1"].output == ""
    assert done["e1"].call is not None and done["e1"].call.content[0]["type"] == "diff"
    assert done["x1"].output == "built ok\n"  # terminal output in _meta (codex)
    # codex-acp 2.6: chunks of earlier updates gathered, the exit code from the last one.
    assert done["x3"].output == "one\ntwo\n(exit code 2)"
    assert done["x2"].output == (
        "(the output is in the agent's terminal term-x2; this client has no terminal)"
    )
    # A tool_call_update without kind or title keeps the call's.
    updates = [e for e in events if e.call is not None and e.call.id == "k1"]
    assert [(e.kind, e.call.kind, e.call.title) for e in updates if e.call] == [
        ("tool_call", "search", "Find needle"),
        ("tool_update", "search", "Find needle"),
        ("tool_result", "search", "Find needle"),
    ]


def test_a_program_sees_none_where_no_update_named_a_field(tmp_path: Path) -> None:
    """A call is merged once, in the turn: None where no update said a field (ACP's default
    kind "other" is the shown kind, ``acp_kind``, not a kind the agent named), and what an
    update says replaces what came before, ``""`` included (ACP: only what changes is sent)."""
    events = asyncio.run(events_of("fields", tmp_path))
    seen = {
        call_id: [
            (e.kind, e.call.title, e.call.kind, e.call.status)
            for e in events
            if e.call is not None and e.call.id == call_id
        ]
        for call_id in ("f1", "f2", "f3")
    }
    assert seen == {
        "f1": [
            ("tool_call", "Plan the change", None, "pending"),
            ("tool_update", "Plan the change", None, "in_progress"),
            ("tool_result", "Plan the change", None, "completed"),
        ],
        "f2": [
            ("tool_call", "Run tests", "execute", "pending"),
            ("tool_update", "", "execute", "pending"),
            ("tool_result", "", "execute", "completed"),
        ],
        "f3": [
            ("tool_call", None, None, "in_progress"),
            ("tool_result", None, None, "completed"),
        ],
    }
    kinds = {e.call.id: e.call.acp_kind for e in events if e.call is not None}
    assert kinds == {"f1": "other", "f2": "execute", "f3": "other"}


def test_a_calls_locations_come_with_it_move_in_updates_and_are_bounded(tmp_path: Path) -> None:
    """ACP's ``locations`` (path, line) reach the program on the call, as the last update that
    named them said; an update naming none keeps them; a flood is cut and a path no file can
    have is dropped."""
    events = asyncio.run(events_of("locations", tmp_path))
    seen = [
        (e.kind, [(loc.path, loc.line) for loc in e.call.locations or []])
        for e in events
        if e.call is not None and e.call.id == "r1"
    ]
    a, b = str(tmp_path / "a.py"), str(tmp_path / "b.py")
    assert seen == [
        ("tool_call", [(a, None)]),
        ("tool_update", [(b, 7)]),
        ("tool_result", [(b, 7)]),
    ]
    [grep] = [e for e in events if e.kind == "tool_call" and e.call and e.call.id == "r2"]
    assert grep.call is not None and grep.call.locations is not None
    paths = [loc.path for loc in grep.call.locations]
    assert len(paths) == 50 and paths[:2] == [f"{tmp_path}/f0.py", f"{tmp_path}/f1.py"]
    assert isinstance(grep.call.locations[0], minime.ToolCallLocation)


def test_vendor_notifications_are_debug_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """qwen/notify/... was logged as an error with a traceback by the SDK."""
    caplog.set_level(logging.DEBUG)
    events = asyncio.run(events_of("qwen", tmp_path))
    assert events[-1].kind == "done"
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == [], [r.getMessage() for r in loud]
    messages = [r.getMessage() for r in caplog.records]
    assert "ignored the agent's notification qwen/notify/usage" in messages
    assert "ignored notification _qwen/hello" in messages  # still to ext_notification


def test_a_load_replays_until_its_answer_and_not_after(tmp_path: Path) -> None:
    """Updates after session/load was answered are not history: not given to on_update."""

    async def main() -> tuple[list[minime.Event], str]:
        replayed: list[minime.Event] = []
        client = await minime.connect(command=[sys.executable, str(SHAPES)], cwd=tmp_path)
        try:
            with Flushes() as flushes:
                session = await client.load_session("old-1", on_update=replayed.append)
                await flushes.wait(1)  # the late updates were read (else ping's own)
            result = await session.complete("ping")
            return replayed, result.text
        finally:
            await client.close()

    replayed, text = asyncio.run(main())
    assert text == "pong"
    assert [(e.kind, e.message_id, e.text) for e in replayed if e.kind in ("user", "text")] == [
        ("user", "u1", "first question"),
        ("text", "a1", "first answer."),
        ("user", "u2", "second question"),
        ("text", "a2", "second answer."),
    ]
    assert all("LATE" not in (e.text + (e.output or "")) for e in replayed)
    # A replayed call's updates are merged as a turn's are: the last one names no title.
    h2 = [(e.kind, e.call.title, e.call.kind) for e in replayed if e.call and e.call.id == "h2"]
    assert h2[-1] == ("tool_result", "Run make", "execute"), h2
    # codex-acp's replay of a finished command: the call comes completed (no output yet), its
    # output and exit after it; the last result of the call is the whole of it (I4).
    h3 = [e for e in replayed if e.kind == "tool_result" and e.call and e.call.id == "h3"]
    assert (h3[-1].status, h3[-1].output) == ("completed", "3 passed\n(exit code 0)"), h3
    assert h3[-1].call is not None and h3[-1].call.title == "Run tests"
    (h4,) = [e for e in replayed if e.kind == "tool_result" and e.call and e.call.id == "h4"]
    assert h4.output == '{"text":"unsaved words"}', "the text of codex's CallToolResult (I2)"


def test_an_earlier_turns_late_update_is_not_the_next_turns(tmp_path: Path) -> None:
    """codex-acp sends a cancelled turn's last tool_call_update ~10 s later: within the next
    turn it would show as one of that turn's calls."""

    async def main() -> list[minime.Event]:
        client = await minime.connect(command=[sys.executable, str(SHAPES)], cwd=tmp_path)
        try:
            session = await client.new_session()
            with Flushes() as flushes:
                await session.complete("late")
                await flushes.wait(1)
            return [event async for event in session.stream("stale")]
        finally:
            await client.close()

    events = asyncio.run(main())
    assert [(e.kind, e.text) for e in events if e.kind in ("text", "tool_call", "tool_result")] == [
        ("text", "fresh")
    ]


def test_an_answer_over_mms_line_limit_is_cut_and_the_connection_lives(mm: FakeMM) -> None:
    """mm's Go SDK ends the connection on a line over 10 MiB: an 11 MB answer reaches the model
    cut (head and tail kept, a marker between), and the next turn still works."""
    big = "HEAD" + "x" * 11_000_000 + "TAIL"
    tool = minime.Tool("big", lambda request: big)
    config = mm.config(yolo=True, max_output=20_000_000, trace=False)

    async def main() -> tuple[str, str]:
        async with mm.agent(config, tools=[tool]) as agent:
            read = (await agent.complete("/tool big {}")).text
            again = (await agent.complete("/say still here")).text
            return read, again

    read, again = asyncio.run(main())
    assert read.startswith("client_big -> HEADxxx") and read.endswith("xxxTAIL")
    assert "characters cut here: the answer was too long for the agent's connection" in read
    assert 7_000_000 < len(read) < 8 * 1024 * 1024
    assert again == "still here"
    assert not any("token too long" in line for line in mm.stderr)


def test_an_answer_of_escaped_characters_is_cut_by_its_json_size() -> None:
    """What counts is the JSON line: a control character takes 6 bytes in it."""
    from minime.tools import capped, text_result

    result = capped(text_result("\x01" * 2_000_000), limit=1_000_000)
    import json

    size = len(json.dumps(result, separators=(",", ":")))
    assert 900_000 < size <= 1_000_000
    text: Any = result["content"][0]["text"]
    assert "characters cut here" in text


def test_a_command_streaming_without_end_is_kept_bounded() -> None:
    """codex-acp streams a command's output in ``_meta`` chunks: 3,000 chunks of 1 KB are kept
    up to MAX_STREAMED characters, joined once, and what was not kept is said."""
    from minime.turn import MAX_STREAMED, Turn

    turn = Turn("p")
    for _ in range(3_000):
        turn.keep_output("c1", "x" * 1023 + "\n")
    text = turn.streamed_output("c1")
    assert text.startswith("x" * 1023 + "\n")
    assert len(text) < MAX_STREAMED + 100
    assert text.endswith(f"… ({3_000 * 1024 - MAX_STREAMED} more characters not kept)\n")
    assert turn.streamed_output("other") == ""
