"""nvim/single_flight.py: one start per key however many ask while it runs (the agent pool's
clients and sessions)."""

from __future__ import annotations

import asyncio

import pytest
from minime.nvim.single_flight import SingleFlight, StartCancelled


def test_callers_during_a_start_share_it_and_a_failure_reaches_each() -> None:
    async def main() -> None:
        flight: SingleFlight[str, int] = SingleFlight()
        started: list[str] = []
        gate = asyncio.Event()

        async def start() -> int:
            started.append("x")
            await gate.wait()
            return len(started)

        calls = [asyncio.create_task(flight.run("k", start)) for _ in range(5)]
        await asyncio.sleep(0)
        assert flight.running("k") and not flight.running("other")
        gate.set()
        assert await asyncio.gather(*calls) == [1] * 5
        assert started == ["x"] and not flight.running("k")

        async def broken() -> int:
            await asyncio.sleep(0)
            raise RuntimeError("no agent")

        failing = [asyncio.create_task(flight.run("k", broken)) for _ in range(3)]
        results = await asyncio.gather(*failing, return_exceptions=True)
        assert [str(r) for r in results] == ["no agent"] * 3
        assert await flight.run("k", start) == 2, "after a failure the next call starts again"

        # A waiter cancelled (its ask given up) leaves the start running for the others.
        gate.clear()
        first = asyncio.create_task(flight.run("j", start))
        second = asyncio.create_task(flight.run("j", start))
        await asyncio.sleep(0)
        second.cancel()
        gate.set()
        assert await first == 3
        with pytest.raises(asyncio.CancelledError):
            await second

    asyncio.run(main())


def test_the_first_caller_cancelled_leaves_the_start_and_cancel_all_ends_it() -> None:
    """:MiniMeCancel gives up the ask that started the agent: the start goes on for the next
    ask. :MiniMeStop (cancel_all) ends the start itself, after its clean-up ran, and its
    callers learn it was stopped (StartCancelled), not that it failed."""

    async def main() -> None:
        flight: SingleFlight[str, int] = SingleFlight()
        gate = asyncio.Event()
        cleaned: list[str] = []

        entered = asyncio.Event()

        async def start() -> int:
            entered.set()
            try:
                await gate.wait()
            except asyncio.CancelledError:
                await asyncio.sleep(0)  # clean-up that awaits (closing the agent)
                cleaned.append("closed")
                raise
            return 7

        first = asyncio.create_task(flight.run("k", start))
        await asyncio.sleep(0)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        assert flight.running("k"), "the start goes on without its first caller"
        later = asyncio.create_task(flight.run("k", start))
        gate.set()
        assert await later == 7 and cleaned == []

        gate.clear()
        entered.clear()
        waiters = [asyncio.create_task(flight.run("s", start)) for _ in range(2)]
        await entered.wait()
        await flight.cancel_all()
        assert cleaned == ["closed"] and not flight.running("s")
        results = await asyncio.gather(*waiters, return_exceptions=True)
        assert [type(r) for r in results] == [StartCancelled, StartCancelled]
        assert await asyncio.wait_for(flight.run("s", lambda: asyncio.sleep(0, 8)), 5) == 8

    asyncio.run(main())
