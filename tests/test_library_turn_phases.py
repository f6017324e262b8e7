"""A turn's phases as the wire sees them: waiting → running → cancelling → ended.

A turn cancelled while it waits (not sent yet, or waiting for an abandoned turn to end) is
never sent and tells the agent nothing; one cancelled while it runs sends one session/cancel,
however often it is cancelled; a move the phase table does not allow is refused.
"""

from __future__ import annotations

import asyncio
from typing import Any

import minime
import pytest
from conftest import FakeMM


async def collect(stream: Any) -> list[minime.Event]:
    return [event async for event in stream]


def prompts(mm: FakeMM) -> list[str]:
    return [p["params"]["prompt"][0]["text"] for p in mm.received("session/prompt")]


def test_a_turn_cancelled_before_it_is_sent_tells_the_agent_nothing(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            stream = agent.stream("/say never")
            await agent.cancel()
            events = await asyncio.wait_for(collect(stream), 10)
            assert [(e.kind, e.stop_reason, e.text) for e in events] == [("done", "cancelled", "")]
            assert (await agent.complete("/say after")).text == "after"
        assert prompts(mm) == ["/say after"]
        assert mm.received("session/cancel") == []

    asyncio.run(main())


def test_a_running_turn_cancelled_twice_sends_one_session_cancel(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            stream = agent.stream("/slow 200")
            assert (await stream.__anext__()).text == "slow 0\n"
            await asyncio.gather(agent.cancel(), agent.cancel())
            await agent.cancel()
            rest = await asyncio.wait_for(collect(stream), 10)
            assert rest[-1].stop_reason == "cancelled"
            await agent.cancel()  # no turn any more
            assert (await agent.complete("/say after")).text == "after"
        assert len(mm.received("session/cancel")) == 1

    asyncio.run(main())


def test_a_turn_waiting_for_an_abandoned_one_is_cancelled_unsent(mm: FakeMM) -> None:
    """The abandoned turn's agent ignores session/cancel: it ends at cancel_timeout; the turn
    behind it, cancelled meanwhile, ends cancelled and its prompt is never sent."""

    async def main() -> None:
        async with mm.agent(cancel_timeout=1) as agent:
            first = agent.stream("/deaf")
            assert (await first.__anext__()).text == "deaf"
            closing = asyncio.ensure_future(first.aclose())
            await mm.until(lambda: not agent.session.busy, what="the session free again")
            second = agent.stream("/say never")
            behind = asyncio.ensure_future(collect(second))
            await agent.cancel()
            events = await asyncio.wait_for(behind, 10)
            assert [(e.kind, e.stop_reason) for e in events] == [("done", "cancelled")]
            await asyncio.wait_for(closing, 10)
            assert prompts(mm) == ["/deaf"]
            assert (await agent.complete("/say next")).text == "next"
        assert prompts(mm) == ["/deaf", "/say next"]
        assert len(mm.received("session/cancel")) == 1

    asyncio.run(main())


def test_a_move_the_phase_table_does_not_allow_is_refused() -> None:
    from minime.turn import Turn

    async def send(turn: Turn) -> None:
        turn.finish("end_turn", None)

    async def main() -> None:
        waiting = Turn("p")
        with pytest.raises(RuntimeError, match="from waiting to cancelling"):
            waiting.cancelling(1, minime.Error("late"))
        running = Turn("p")
        running.begin(send)
        with pytest.raises(RuntimeError, match="from running to running"):
            running.begin(send)
        assert (await running.queue.get()).kind == "done"  # type: ignore[union-attr]
        assert running.phase == "ended"
        running.fail(minime.Error("after the end"))  # the first end wins: nothing more
        assert running.queue.empty()
        with pytest.raises(RuntimeError, match="from ended to running"):
            running.begin(send)

    asyncio.run(main())
