"""``$/cancel_request``: the handler of the named request is cancelled, answered -32800.

agent-client-protocol does not route ``$/cancel_request``; minime/transport.py (the SDK's
public Transport seam) handles it. These tests go through behaviour only: the handler would
run on, or nothing would answer -32800, if the seam broke.
"""

from __future__ import annotations

import asyncio
import threading

import minime
from conftest import FakeMM

METHOD = "_minime.py/tools/"


class Hang:
    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def __call__(self, request: minime.ToolRequest) -> str:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "never"


def test_a_timed_out_call_is_cancelled_and_answered_minus_32800(mm: FakeMM) -> None:
    hang = Hang()
    tools = [minime.Tool("hang", hang), minime.Tool("quick", lambda request: "quick")]

    async def main() -> None:
        config = mm.config(yolo=True, client_tools={"timeout": "200ms"})
        async with mm.agent(config, tools=tools) as agent:
            await agent.complete("/tool hang {}")
            await asyncio.wait_for(hang.cancelled.wait(), 10)
            (wire,) = mm.sent(METHOD + "hang")
            answer = await mm.until(lambda: mm.answer_to(wire["id"]), what="an answer")
            assert answer["error"] == {"code": -32800, "message": "Request cancelled"}
            # The connection is sound afterwards.
            assert (await agent.complete("/tool quick {}")).text == "client_quick -> quick"

    asyncio.run(main())


def test_a_cancelled_turn_cancels_the_call_it_was_in(mm: FakeMM) -> None:
    hang = Hang()

    async def main() -> None:
        async with mm.agent(mm.config(yolo=True), tools=[minime.Tool("hang", hang)]) as agent:
            turn = asyncio.ensure_future(agent.complete("/tool hang {}"))
            await asyncio.wait_for(hang.started.wait(), 10)
            await agent.cancel()
            assert (await asyncio.wait_for(turn, 10)).stop_reason == "cancelled"
            await asyncio.wait_for(hang.cancelled.wait(), 10)
            (wire,) = mm.sent(METHOD + "hang")
            answer = await mm.until(lambda: mm.answer_to(wire["id"]), what="an answer")
            assert answer["error"]["code"] == -32800

    asyncio.run(main())


def test_a_sync_handler_is_answered_minus_32800_while_its_thread_finishes(mm: FakeMM) -> None:
    release = threading.Event()
    finished = threading.Event()

    def handle(request: minime.ToolRequest) -> str:
        release.wait(10)
        finished.set()
        return "late"

    async def main() -> None:
        config = mm.config(yolo=True, client_tools={"timeout": "200ms"})
        async with mm.agent(config, tools=[minime.Tool("blocking", handle)]) as agent:
            text = (await agent.complete("/tool blocking {}")).text
            assert text == (
                "client_blocking -> [client tool error: "
                '{"code":-32603,"message":"Internal error",'
                '"data":{"error":"context deadline exceeded"}}]'
            )
            (wire,) = mm.sent(METHOD + "blocking")
            answer = await mm.until(lambda: mm.answer_to(wire["id"]), what="an answer")
            assert answer["error"]["code"] == -32800
            release.set()
            await mm.until(finished.is_set, what="the thread to finish")
            assert (await agent.complete("/say fine")).text == "fine"

    asyncio.run(main())


def test_a_cancel_for_no_running_request_is_harmless(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            assert (await agent.complete("/cancel-request 12345")).text == "sent"
            assert (await agent.complete('/cancel-request "nope"')).text == "sent"
            assert (await agent.complete("/say alive")).text == "alive"

    asyncio.run(main())


def test_the_library_names_no_sdk_internals() -> None:
    """Only the SDK's public seam is used, so its version may float within 0.12.x."""
    import re
    from pathlib import Path

    package = Path(minime.__file__).parent
    private = re.compile(
        r"_process_message|_execute_request|_notify_observers|_next_request_id|_run_request"
        r"|\._conn\b"
    )
    found = [
        f"{path.relative_to(package)}:{number}"
        for path in sorted(package.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if private.search(line)
    ]
    assert found == []
