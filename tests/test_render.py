"""The host's batching of streamed events into Lua calls (rplugin/python3/minime/nvim/render.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from minime.nvim import events
from minime.nvim.render import FLUSH_SECONDS, Renderer


def text(s: str) -> dict[str, Any]:
    return {"kind": "text", "text": s}


def test_flushes_at_the_next_turn_then_at_most_once_per_frame_and_at_once_on_done() -> None:
    async def main() -> list[tuple[float, str, list[dict[str, Any]]]]:
        loop = asyncio.get_running_loop()
        sent: list[tuple[float, str, list[dict[str, Any]]]] = []

        def send(batches: list[tuple[str, list[events.LuaEvent]]]) -> None:
            for key, batch in batches:
                sent.append((loop.time(), key, msgspec.to_builtins(batch)))

        r = Renderer(send)
        t0 = loop.time()
        r.push("k", events.Text("a"))
        await asyncio.sleep(0)  # one turn of the loop: a lone chunk goes out now
        assert [s[2] for s in sent] == [[text("a")]]
        for s in ("b", "c", "d"):  # a burst right after: one call, a frame after the first
            r.push("k", events.Text(s))
        r.push("k", events.Notice("n"))
        r.push("k", events.Text("e"))
        r.push("k", events.Thinking("t1"))  # a run of another kind is its own event
        r.push("k", events.Thinking("t2"))
        await asyncio.sleep(FLUSH_SECONDS * 2)
        notice = {"kind": "notice", "text": "n"}
        thinking = {"kind": "thinking", "text": "t1t2"}
        assert [s[2] for s in sent[1:]] == [[text("bcd"), notice, text("e"), thinking]]
        assert sent[1][0] - t0 >= FLUSH_SECONDS * 0.9
        r.push("k", events.Text("f"))  # within a frame of the last flush: waits...
        r.push("k", events.Done(stop_reason="end_turn"))  # ...unless the turn ends
        await asyncio.sleep(0)
        assert sent[2][2] == [text("f"), {"kind": "done", "stop_reason": "end_turn"}]
        return sent

    sent = asyncio.run(main())
    assert len(sent) == 3
    assert {key for _, key, _ in sent} == {"k"}


def test_each_event_crosses_as_the_table_lua_reads() -> None:
    """One Struct per shape (nvim/events.py); fields at their default are not sent."""
    shown = msgspec.to_builtins(
        [
            events.Begin(prompt="p", cwd="/c"),
            events.ToolCallShown(id="1", title="t", tool_kind="read", input={"a": [1]}),
            events.ToolResultShown(id="1", status="completed", output="o"),
            events.Plan([{"content": "x", "status": "pending", "priority": "low"}]),
            events.Done(stop_reason="error", error="why", cwd="/c", session_id="s"),
        ]
    )
    assert shown == [
        {"kind": "begin", "prompt": "p", "cwd": "/c"},
        {"kind": "tool_call", "id": "1", "title": "t", "tool_kind": "read", "input": {"a": [1]}},
        {"kind": "tool_result", "id": "1", "status": "completed", "output": "o"},
        {"kind": "plan", "entries": [{"content": "x", "status": "pending", "priority": "low"}]},
        {"kind": "done", "stop_reason": "error", "error": "why", "cwd": "/c", "session_id": "s"},
    ]


def test_chunks_of_different_messages_are_not_joined() -> None:
    """A new messageId is a new message: the batch keeps it apart for Lua to start a paragraph."""

    async def main() -> list[list[dict[str, Any]]]:
        sent: list[list[dict[str, Any]]] = []
        r = Renderer(lambda batches: sent.extend(msgspec.to_builtins(b) for _, b in batches))
        for chunk, mid in (("a", "m1"), ("b", "m1"), ("c", "m2"), ("d", None), ("e", None)):
            r.push("k", events.Text(chunk, mid))
        await asyncio.sleep(0)
        return sent

    assert asyncio.run(main()) == [
        [
            {"kind": "text", "text": "ab", "message_id": "m1"},
            {"kind": "text", "text": "c", "message_id": "m2"},
            {"kind": "text", "text": "de"},
        ]
    ]


def test_a_batch_waits_while_an_editor_tool_call_is_in_flight_and_for_quiet_after() -> None:
    """The answer to the agent never queues behind drawing on Neovim's main loop: a batch sent
    while a tool call runs waits for it to end and for QUIET_SECONDS more, but the float still
    moves in a long burst of calls (MAX_HOLD_SECONDS)."""
    from minime.nvim.render import MAX_HOLD_SECONDS, QUIET_SECONDS

    async def main() -> None:
        loop = asyncio.get_running_loop()
        sent: list[float] = []
        r = Renderer(lambda batches: sent.extend(loop.time() for _ in batches))
        r.tool_began()
        r.push("k", events.ToolCallShown(id="c1", title="t"))
        await asyncio.sleep(FLUSH_SECONDS * 2)
        assert sent == []  # the call is in flight: nothing drawn
        r.tool_ended()
        ended = loop.time()
        await asyncio.sleep(QUIET_SECONDS / 4)
        assert sent == []  # the next call may come at once
        await asyncio.sleep(QUIET_SECONDS * 2)
        assert len(sent) == 1 and sent[0] - ended >= QUIET_SECONDS * 0.9
        # A burst that never pauses: drawn anyway within MAX_HOLD_SECONDS (plus a frame).
        r.tool_began()
        r.push("k", events.ToolResultShown(id="c1", output="x"))
        start = loop.time()
        while len(sent) == 1 and loop.time() - start < MAX_HOLD_SECONDS * 3:
            await asyncio.sleep(0.005)
        assert len(sent) == 2
        assert MAX_HOLD_SECONDS * 0.9 <= sent[1] - start <= MAX_HOLD_SECONDS + 0.1
        r.push("k", events.Done(stop_reason="end_turn"))  # the turn's end is not held
        await asyncio.sleep(0)
        assert len(sent) == 3

    asyncio.run(main())


def test_a_burst_that_never_pauses_is_drawn_a_slice_at_a_time_in_order() -> None:
    """Issue 34: calls back to back never leave the quiet a batch waits for, so the batch held
    MAX_HOLD_SECONDS grew to ~130 calls' updates, and the call that came while Neovim drew
    them waited 20-40 ms. Each batch drawn while the calls go on holds at most a slice (by
    events and by bytes); every event arrives once, in order; a pause sends a slice a frame."""
    from minime.nvim.render import MAX_HOLD_SECONDS, SLICE_BYTES, SLICE_EVENTS

    async def main() -> None:
        loop = asyncio.get_running_loop()
        sent: list[tuple[float, int, list[LuaEventDict]]] = []
        r = Renderer(
            lambda batches: sent.extend((loop.time(), r._calls, to_dicts(b)) for _, b in batches)
        )
        pushed: list[str] = []
        start = loop.time()
        i = 0
        while loop.time() - start < MAX_HOLD_SECONDS * 3.5:  # a call every ~2 ms, never quiet
            r.tool_began()
            for event in (
                events.ToolCallShown(id=f"c{i}", title="t", status="pending"),
                events.ToolResultShown(id=f"c{i}", status="completed", output="x" * 11_000),
            ):
                r.push("k", event)
                pushed.append(f"{event.id}:{type(event).__name__}")
            await asyncio.sleep(0.002)
            r.tool_ended()
            i += 1
        during = [batch for _, calls, batch in sent]
        assert len(during) >= 3, len(during)  # the float moved during the burst
        for batch in during:
            assert len(batch) <= SLICE_EVENTS
            assert sum(len(e.get("output", "")) for e in batch) <= SLICE_BYTES + 11_000

        # The calls pause: what is left goes a slice a frame, all of it, in order.
        def order() -> list[str]:
            return [f"{e['id']}:{TYPES[e['kind']]}" for _, _, batch in sent for e in batch]

        deadline = loop.time() + 10
        while len(order()) < len(pushed) and loop.time() < deadline:
            await asyncio.sleep(FLUSH_SECONDS)
        assert order() == pushed
        assert max(len(batch) for _, _, batch in sent) <= SLICE_EVENTS

    asyncio.run(main())


LuaEventDict = dict[str, Any]
TYPES = {"tool_call": "ToolCallShown", "tool_result": "ToolResultShown"}


def to_dicts(batch: list[events.LuaEvent]) -> list[LuaEventDict]:
    return msgspec.to_builtins(batch)


def test_the_threads_flushed_together_go_in_one_call() -> None:
    """Four threads streaming: each flush is one call holding each thread's batch, in the
    order their events came (a call per thread woke Neovim once each: bench/threads.py)."""

    async def main() -> list[list[tuple[str, list[Any]]]]:
        calls: list[list[tuple[str, list[Any]]]] = []
        r = Renderer(
            lambda batches: calls.append([(k, msgspec.to_builtins(b)) for k, b in batches])
        )
        for key in ("t1", "t2", "t3", "t4"):
            r.push(key, events.Text(key + " a"))
        r.push("t1", events.Text(" b"))
        await asyncio.sleep(0)
        return calls

    assert asyncio.run(main()) == [
        [
            ("t1", [text("t1 a b")]),
            ("t2", [text("t2 a")]),
            ("t3", [text("t3 a")]),
            ("t4", [text("t4 a")]),
        ]
    ]
