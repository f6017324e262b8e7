"""Turns: complete and stream, the event kinds, errors, Busy, reset, cancel, and odd agents."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import fake_mm
import minime
import pytest
from conftest import FakeMM
from helpers.procs import rss_kib


async def collect(stream: Any) -> list[minime.Event]:
    return [event async for event in stream]


def texts(events: list[minime.Event]) -> str:
    return "".join(event.text for event in events if event.kind == "text")


def slow_chunk_sent(mm: FakeMM) -> bool:
    for message in mm.sent("session/update"):
        content = message["params"]["update"].get("content")
        if isinstance(content, dict) and str(content.get("text", "")).startswith("slow 0"):
            return True
    return False


# --- answers ---------------------------------------------------------------------------------


def test_complete_returns_text_stop_reason_and_usage(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            result = await agent.complete("hello there")
        assert result == minime.Result(
            "echo: hello there",
            "end_turn",
            {"input_tokens": 11, "output_tokens": 17, "total_tokens": 28},
        )
        (prompt,) = mm.received("session/prompt")
        assert prompt["params"]["prompt"] == [{"type": "text", "text": "hello there"}]

    asyncio.run(main())


def test_text_is_unicode_clean(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            result = await agent.complete("/say héllo wörld 🎉 — 日本語\n/think ∑")
        assert result.text == "héllo wörld 🎉 — 日本語"

    asyncio.run(main())


def test_usage_is_none_when_mm_sends_none(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent(mm.config(fake={"usage": False})) as agent:
            result = await agent.complete("/say x")
        assert result.usage is None

    asyncio.run(main())


def test_stream_gives_every_event_kind_in_order(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent(mm.config(yolo=True)) as agent:
            events = await collect(agent.stream("/think pondering\n/plan\n/bash ls\nhi"))
        kinds = [event.kind for event in events]
        assert kinds == [
            "thinking",
            "plan",
            "tool_call",
            "tool_result",
            "text",
            "text",
            "text",
            "text",
            "done",
        ]
        thinking, plan, call, result, *_, done = events
        assert thinking.text == "pondering"
        assert plan.entries == fake_mm.PLAN_ENTRIES
        assert call.call is not None
        assert (call.call.title, call.call.kind, call.call.input) == (
            "bash: ls",
            "execute",
            {"command": "ls"},
        )
        assert result.call is not None and result.call.id == call.call.id
        assert (result.status, result.output) == ("completed", "ran: ls")
        assert done.stop_reason == "end_turn"
        assert done.text == texts(events) == "bash -> ran: ls\necho: hi"
        assert done.usage is not None

    asyncio.run(main())


def test_ten_thousand_chunks_arrive_whole_and_in_order(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent(mm.config(trace=False)) as agent:
            events = await collect(agent.stream("/chunks 10000 16"))
        chunks = [event.text for event in events if event.kind == "text"]
        assert chunks == fake_mm.chunks_text(10000, 16)
        assert events[-1].text == "".join(chunks)

    asyncio.run(main())


def test_a_two_megabyte_line(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent(mm.config(trace=False)) as agent:
            result = await agent.complete("/bigline 2000000\n/say after")
        assert result.text == fake_mm.bigline_text(2_000_000) + "\nafter"

    asyncio.run(main())


def test_a_thousand_turns_on_one_agent(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent(mm.config(trace=False)) as agent:
            pid = int((await agent.complete("/pid")).text.split()[1])
            tasks_before = len(asyncio.all_tasks())
            started = time.monotonic()
            for i in range(1000):
                result = await agent.complete(f"/say turn {i}")
                assert result.text == f"turn {i}"
                if i == 99:
                    rss_at_100 = rss_kib(pid)
            elapsed = time.monotonic() - started
            assert len(asyncio.all_tasks()) <= tasks_before + 2
            assert rss_kib(pid) - rss_at_100 < 5_000, "the fake mm grows turn after turn"
        assert elapsed < 60

    asyncio.run(main())


# --- errors --------------------------------------------------------------------------------


def test_a_turn_mm_ends_with_an_error_raises_it_with_mm_words(mm: FakeMM) -> None:
    """mm's error is Go's: Internal error, its words in data.error; the user reads those words."""

    async def main() -> None:
        async with mm.agent() as agent:
            with pytest.raises(minime.Error) as caught:
                await agent.complete(
                    "/stderr warn: loop detected\n/error the model went in circles"
                )
            # mm is alive and answered: its last stderr line is unrelated, and not appended.
            assert str(caught.value) == (
                "turn failed: Internal error (-32603): the model went in circles"
            )
            # The agent lives on.
            assert (await agent.complete("/say next")).text == "next"
        (answer,) = [t["msg"] for t in mm.trace() if t["dir"] == "out" and "error" in t["msg"]]
        assert answer["error"] == {
            "code": -32603,
            "message": "Internal error",
            "data": {"error": "the model went in circles"},
        }

    asyncio.run(main())


def test_the_loop_detector_stops_the_turn_in_mm_words(mm: FakeMM) -> None:
    """The 6th identical bash call with the same answer ends the turn: mm's words, not None."""

    async def main() -> None:
        async with mm.agent(mm.config(yolo=True)) as agent:
            with pytest.raises(minime.Error) as caught:
                await agent.complete("\n".join(["/bash ls"] * 6 + ["/say never"]))
            assert str(caught.value).startswith(
                "turn failed: Internal error (-32603): "
                "the model repeated the same bash call 6 times"
            )
            assert "None" not in str(caught.value)
            five = await agent.complete("\n".join(["/bash ls"] * 5 + ["/say five are fine"]))
            assert five.text.endswith("five are fine")

    asyncio.run(main())


# --- one turn at a time, reset ----------------------------------------------------------------


def test_busy_while_a_turn_runs(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            stream = agent.stream("/slow 200")
            first = await stream.__anext__()
            assert first.text == "slow 0\n"
            with pytest.raises(minime.Busy):
                await agent.complete("/say no")
            with pytest.raises(minime.Busy):
                await collect(agent.stream("/say no"))
            with pytest.raises(minime.Busy):
                await agent.reset()
            assert issubclass(minime.Busy, minime.Error)
            await agent.cancel()
            rest = await collect(stream)
            assert rest[-1].stop_reason == "cancelled"
            assert (await agent.complete("/say free")).text == "free"

    asyncio.run(main())


def test_reset_gives_a_new_session_on_the_same_process(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            first_id = agent.session_id
            pid = (await agent.complete("/pid")).text
            await agent.reset()
            assert agent.session_id != first_id
            assert (await agent.complete("/pid")).text == pid
        prompts = mm.received("session/prompt")
        assert [p["params"]["sessionId"] for p in prompts] == [first_id, agent.session_id]
        assert len(mm.received("session/new")) == 2

    asyncio.run(main())


# --- cancel ----------------------------------------------------------------------------------


def test_cancel_ends_the_stream_cancelled_with_the_text_so_far(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            events = []
            async for event in agent.stream("/slow 200"):
                events.append(event)
                if len(events) == 2:
                    await agent.cancel()
            done = events[-1]
            assert done.kind == "done"
            assert done.stop_reason == "cancelled"
            assert done.text == texts(events)
            assert done.text.startswith("slow 0\nslow 1\n")
            assert len(done.text.splitlines()) < 200
            assert [c["params"] for c in mm.received("session/cancel")] == [
                {"sessionId": agent.session_id}
            ]
            assert (await agent.complete("/say after")).text == "after"

    asyncio.run(main())


def test_cancel_while_complete_awaits(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            turn = asyncio.ensure_future(agent.complete("/slow 200"))
            await mm.until(lambda: slow_chunk_sent(mm), what="the first slow chunk")
            await agent.cancel()
            result = await asyncio.wait_for(turn, 10)
            assert result.stop_reason == "cancelled"
            assert result.text.startswith("slow 0\n")

    asyncio.run(main())


def test_cancel_with_no_turn_does_nothing(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            await agent.cancel()
            assert (await agent.complete("/say ok")).text == "ok"
        assert mm.received("session/cancel") == []

    asyncio.run(main())


def test_a_deaf_agent_ends_the_turn_with_an_error_after_cancel_timeout(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent(cancel_timeout=0.5) as agent:
            stream = agent.stream("/deaf")
            assert (await stream.__anext__()).text == "deaf"
            started = time.monotonic()
            await agent.cancel()
            with pytest.raises(minime.Error):
                await asyncio.wait_for(collect(stream), 10)
            assert time.monotonic() - started < 5
        assert mm.received("session/cancel")

    asyncio.run(main())


def test_cancelling_the_awaiting_task_cancels_the_turn(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            turn = asyncio.ensure_future(agent.complete("/slow 500"))
            await mm.until(lambda: slow_chunk_sent(mm), what="the first slow chunk")
            turn.cancel()
            with pytest.raises(asyncio.CancelledError):
                await turn
            await mm.until(lambda: mm.received("session/cancel"), what="session/cancel")
            result = await asyncio.wait_for(agent.complete("/say next"), 10)
            assert result.text == "next"

    asyncio.run(main())


def test_leaving_the_stream_early_cancels_the_turn(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            async with contextlib.aclosing(agent.stream("/slow 500")) as stream:
                async for event in stream:
                    assert event.text == "slow 0\n"
                    break
            assert mm.received("session/cancel")
            started = time.monotonic()
            assert (await agent.complete("/say next")).text == "next"
            assert time.monotonic() - started < 5

    asyncio.run(main())


def test_a_plain_break_out_of_the_stream_cancels_the_turn(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            async for event in agent.stream("/slow 200"):
                assert event.text == "slow 0\n"
                break
            started = time.monotonic()
            assert (await agent.complete("/say next")).text == "next"
            assert time.monotonic() - started < 5
            assert mm.received("session/cancel")

    asyncio.run(main())


def test_a_rejected_permission_may_end_the_turn_cancelled(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            result = await agent.complete("/reject-cancels rm -rf build")
        assert result.stop_reason == "cancelled"
        assert result.text == "bash -> [bash rejected by user]"

    asyncio.run(main())


# --- what real agents do -----------------------------------------------------------------------


def test_garbage_on_the_wire_is_survived(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            events = await collect(agent.stream("/garbage"))
            # Of what /garbage sends, the session's title, usage and commands are ACP updates the
            # library follows; the rest is survived unseen.
            assert [e.kind for e in events] == ["title", "usage", "commands", "text", "done"]
            assert events[0].text == "A title"
            assert events[1].usage == {"used": 1200, "size": 32000}
            assert (agent.session.title, agent.session.usage) == ("A title", events[1].usage)
            assert events[-1].text == "after garbage"
            assert (await agent.complete("/badutf8")).text == "after badutf8"
            assert (await agent.complete("/say alive")).text == "alive"
        await mm.until(lambda: mm.answer_to("odd-1"), what="an answer to the unknown request")
        assert mm.answer_to("odd-1")["error"]["code"] == -32601

    asyncio.run(main())


def test_the_same_tool_call_id_twice_and_empty_input(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            events = await collect(agent.stream("/dup-toolcall\n/empty-input"))
        tool_events = [(e.kind, e.call) for e in events if e.call is not None]
        kinds = [kind for kind, _ in tool_events]
        # The second tool_call for an id is an update of the first, not a second call.
        assert kinds == ["tool_call", "tool_update", "tool_result", "tool_call", "tool_result"]
        (_, first), (_, again), _, (_, empty), _ = tool_events
        assert first is not None and again is not None and empty is not None
        assert first.id == again.id != empty.id
        assert (first.title, again.title) == ("bash: first", "bash: second")
        assert empty.input is None
        results = [(e.call.id, e.output) for e in events if e.kind == "tool_result" and e.call]
        assert results == [(first.id, "dup done"), (empty.id, "read nothing")]

    asyncio.run(main())


def test_terminal_content_without_the_capability(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            events = await collect(agent.stream("/terminal"))
        (call,) = [e.call for e in events if e.kind == "tool_call"]
        assert call is not None
        assert call.content == [{"type": "terminal", "terminalId": "term-1"}]
        assert events[-1].text == "terminal -> made"
        (initialize,) = mm.received("initialize")
        capabilities = initialize["params"].get("clientCapabilities", {})
        assert not capabilities.get("terminal")

    asyncio.run(main())
