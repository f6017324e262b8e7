"""``request.cancelled``: the cancellation a sync handler or sync permission callback can see.

An async handler gets CancelledError; a sync one runs on a thread no exception can reach, so
the request carries a ``threading.Event`` (Go's ctx), set when the call is cancelled: mm's
``$/cancel_request`` at its timeout, the turn cancelled, the connection closed. Each test's
handler waits on it far longer than the test's deadline: only the signal lets it return.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import minime
from conftest import FakeMM
from helpers.wire import DEADLINE_ERROR

METHOD = "_minime.py/tools/wait"
LONG = 60.0  # what a handler would wait without the signal


class Waiter:
    """A sync handler (or permission callback) that waits on ``request.cancelled``."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.outcome: list[tuple[bool, float]] = []  # (signalled, seconds waited)

    def __call__(self, request: Any) -> Any:
        self.started.set()
        began = time.monotonic()
        signalled = request.cancelled.wait(LONG)
        self.outcome.append((signalled, time.monotonic() - began))
        return "late" if isinstance(request, minime.ToolRequest) else minime.ALLOW


def test_cancel_request_from_mm_reaches_a_sync_handler(mm: FakeMM) -> None:
    waiter = Waiter()

    async def main() -> None:
        config = mm.config(yolo=True, client_tools={"timeout": "300ms"})
        async with mm.agent(config, tools=[minime.Tool("wait", waiter)]) as agent:
            text = (await agent.complete("/tool wait {}")).text
            assert text == f"client_wait -> [client tool error: {DEADLINE_ERROR}]"
            await mm.until(lambda: waiter.outcome, timeout=10, what="the handler to return")
            (wire,) = mm.sent(METHOD)
            # The handler returns on the signal before the -32800 answer reaches mm's trace.
            answer = await mm.until(lambda: mm.answer_to(wire["id"]), what="the -32800 answer")
            assert answer["error"]["code"] == -32800
            assert (await agent.complete("/say alive")).text == "alive"
        ((signalled, waited),) = waiter.outcome
        assert signalled and waited < 10

    asyncio.run(main())


def test_a_cancelled_turn_reaches_a_sync_handler(mm: FakeMM) -> None:
    waiter = Waiter()

    async def main() -> None:
        async with mm.agent(mm.config(yolo=True), tools=[minime.Tool("wait", waiter)]) as agent:
            turn = asyncio.ensure_future(agent.complete("/tool wait {}"))
            await mm.until(waiter.started.is_set, what="the handler to start")
            await agent.cancel()
            assert (await asyncio.wait_for(turn, 10)).stop_reason == "cancelled"
            await mm.until(lambda: waiter.outcome, timeout=10, what="the handler to return")
        ((signalled, _),) = waiter.outcome
        assert signalled

    asyncio.run(main())


def test_closing_the_agent_reaches_a_sync_handler(mm: FakeMM) -> None:
    waiter = Waiter()

    async def main() -> None:
        async with mm.agent(mm.config(yolo=True), tools=[minime.Tool("wait", waiter)]) as agent:
            turn = asyncio.ensure_future(agent.complete("/tool wait {}"))
            await mm.until(waiter.started.is_set, what="the handler to start")
            await agent.close()
            await mm.until(lambda: waiter.outcome, timeout=10, what="the handler to return")
            turn.cancel()
        ((signalled, _),) = waiter.outcome
        assert signalled

    asyncio.run(main())


def test_a_cancelled_turn_reaches_a_sync_permission_callback(mm: FakeMM) -> None:
    waiter = Waiter()

    async def main() -> None:
        async with mm.agent(on_permission=waiter) as agent:
            turn = asyncio.ensure_future(agent.complete("/say before\n/bash ls"))
            await mm.until(waiter.started.is_set, what="the callback to be asked")
            await agent.cancel()
            result = await asyncio.wait_for(turn, 10)
            assert (result.stop_reason, result.text) == ("cancelled", "before")
            await mm.until(lambda: waiter.outcome, timeout=10, what="the callback to return")
            assert (await agent.complete("/say next")).text == "next"
        ((signalled, _),) = waiter.outcome
        assert signalled

    asyncio.run(main())


def test_a_call_that_ends_normally_is_not_marked_cancelled(mm: FakeMM) -> None:
    seen: list[minime.ToolRequest] = []

    def handle(request: minime.ToolRequest) -> str:
        seen.append(request)
        return "done"

    async def main() -> None:
        async with mm.agent(mm.config(yolo=True), tools=[minime.Tool("t", handle)]) as agent:
            assert (await agent.complete("/tool t {}")).text == "client_t -> done"
        ((request,),) = [seen]
        assert not request.cancelled.is_set()

    asyncio.run(main())
