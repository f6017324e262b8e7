"""Permissions: when mm asks, what ``on_permission`` sees, and what each decision answers."""

from __future__ import annotations

import asyncio
from typing import Any

import fake_mm
import minime
import pytest
from conftest import FakeMM


class Asked:
    """An ``on_permission`` callback answering ``decisions`` in turn (the last one repeats)."""

    def __init__(self, *decisions: Any) -> None:
        self.decisions = list(decisions)
        self.requests: list[minime.PermissionRequest] = []

    def __call__(self, request: minime.PermissionRequest) -> Any:
        self.requests.append(request)
        decision = self.decisions[min(len(self.requests), len(self.decisions)) - 1]
        if isinstance(decision, BaseException):
            raise decision
        return decision


def tool() -> minime.Tool:
    return minime.Tool("echo", lambda request: f"echo {request.arguments.get('x', '')}")


def chosen(mm: FakeMM) -> list[Any]:
    """The option ids the client answered to mm's permission requests, in order."""
    answers = []
    for request in mm.sent("session/request_permission"):
        answer = mm.answer_to(request["id"])
        assert answer is not None
        outcome = answer["result"]["outcome"]
        answers.append(outcome.get("optionId", outcome["outcome"]))
    return answers


ALLOWED = "client_echo -> echo 1"
REJECTED = "client_echo -> [client_echo rejected by user]"


@pytest.mark.parametrize(
    ("permissions", "yolo", "asks"),
    [("auto", False, True), ("auto", True, False), ("ask", False, True), ("ask", True, True)],
)
def test_when_a_client_tool_asks(mm: FakeMM, permissions: str, yolo: bool, asks: bool) -> None:
    asked = Asked(minime.ALLOW)
    config = mm.config(yolo=yolo, client_tools={"permissions": permissions})

    async def main() -> None:
        async with mm.agent(config, tools=[tool()], on_permission=asked) as agent:
            assert (await agent.complete('/tool echo {"x": 1}')).text == ALLOWED
        assert len(asked.requests) == (1 if asks else 0)

    asyncio.run(main())


def test_what_the_callback_sees(mm: FakeMM) -> None:
    asked = Asked(minime.ALLOW)

    async def main() -> None:
        async with mm.agent(tools=[tool()], on_permission=asked) as agent:
            await agent.complete('/tool echo {"x": 1}')
            session_id = agent.session_id
        (request,) = asked.requests
        assert request.session_id == session_id
        call = request.tool_call
        assert (call.title, call.kind, call.input) == ("client: echo", "other", {"x": 1})
        assert [(o.option_id, o.name, o.kind) for o in request.options] == [
            (o["optionId"], o["name"], o["kind"]) for o in fake_mm.PERMISSION_OPTIONS
        ]

    asyncio.run(main())


@pytest.mark.parametrize(
    ("decision", "read", "answer"),
    [
        (minime.ALLOW, ALLOWED, "allow"),
        (minime.REJECT, REJECTED, "reject"),
        (minime.choose("allow"), ALLOWED, "allow"),
        (minime.choose("reject"), REJECTED, "reject"),
        (minime.choose("proceed_once"), REJECTED, "reject"),
        (None, REJECTED, "reject"),
        (RuntimeError("callback broke"), REJECTED, "reject"),
    ],
    ids=["ALLOW", "REJECT", "choose-allow", "choose-reject", "not-offered", "None", "raises"],
)
def test_each_decision(mm: FakeMM, decision: Any, read: str, answer: str) -> None:
    asked = Asked(decision)

    async def main() -> None:
        async with mm.agent(tools=[tool()], on_permission=asked) as agent:
            assert (await agent.complete('/tool echo {"x": 1}')).text == read
            assert (await agent.complete("/say alive")).text == "alive"
        assert chosen(mm) == [answer]

    asyncio.run(main())


def test_no_callback_rejects(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent(tools=[tool()]) as agent:
            result = await agent.complete('/tool echo {"x": 1}\n/bash ls')
        assert result.text == f"{REJECTED}\nbash -> [bash rejected by user]"
        assert chosen(mm) == ["reject", "reject"]

    asyncio.run(main())


def test_an_async_callback(mm: FakeMM) -> None:
    async def decide(request: minime.PermissionRequest) -> Any:
        await asyncio.sleep(0)
        return minime.ALLOW

    async def main() -> None:
        async with mm.agent(tools=[tool()], on_permission=decide) as agent:
            assert (await agent.complete('/tool echo {"x": 1}')).text == ALLOWED

    asyncio.run(main())


@pytest.mark.parametrize(("option", "read"), [("allow_always", ALLOWED), ("never", REJECTED)])
def test_allow_always_and_never_are_remembered_for_the_session(
    mm: FakeMM, option: str, read: str
) -> None:
    asked = Asked(
        minime.choose(option), minime.REJECT if option == "allow_always" else minime.ALLOW
    )

    async def main() -> None:
        async with mm.agent(tools=[tool()], on_permission=asked) as agent:
            text = (await agent.complete('/tool echo {"x": 1}\n/tool echo {"x": 1}')).text
            assert text == f"{read}\n{read}"
            assert (await agent.complete('/tool echo {"x": 1}')).text == read
            await agent.reset()  # a new session forgets
            assert (await agent.complete('/tool echo {"x": 1}')).text != read
        assert chosen(mm) == [option, "reject" if option == "allow_always" else "allow"]

    asyncio.run(main())


def test_bash_asks_unless_yolo(mm: FakeMM) -> None:
    asked = Asked(minime.REJECT, minime.ALLOW)

    async def main() -> None:
        async with mm.agent(on_permission=asked) as agent:
            events = [e async for e in agent.stream("/bash rm -rf /\n/bash ls")]
        assert events[-1].text == "bash -> [bash rejected by user]\nbash -> ran: ls"
        titles = [(r.tool_call.title, r.tool_call.kind) for r in asked.requests]
        assert titles == [("bash: rm -rf /", "execute"), ("bash: ls", "execute")]
        results = [(e.status, e.output) for e in events if e.kind == "tool_result"]
        assert results == [("failed", "[bash rejected by user]"), ("completed", "ran: ls")]

    asyncio.run(main())


def test_yolo_bash_does_not_ask(mm: FakeMM) -> None:
    asked = Asked(minime.REJECT)

    async def main() -> None:
        async with mm.agent(mm.config(yolo=True), on_permission=asked) as agent:
            assert (await agent.complete("/bash ls")).text == "bash -> ran: ls"
        assert asked.requests == []

    asyncio.run(main())


def test_a_permission_asked_before_its_tool_call(mm: FakeMM) -> None:
    order: list[str] = []

    def decide(request: minime.PermissionRequest) -> Any:
        order.append(f"asked {request.tool_call.title}")
        return minime.ALLOW

    async def main() -> None:
        async with mm.agent(on_permission=decide) as agent:
            async for event in agent.stream("/permission-first ls"):
                if event.kind == "tool_call" and event.call is not None:
                    order.append(f"call {event.call.title}")
                if event.kind == "done":
                    assert event.text == "bash -> ran: ls"
        # The request names the call before its tool_call comes: one tool_call event, drawn
        # from the request, and the agent's own tool_call later is an update of it.
        assert sorted(order) == ["asked bash: ls", "call bash: ls"]

    asyncio.run(main())


def test_a_permission_with_diff_content(mm: FakeMM) -> None:
    asked = Asked(minime.ALLOW)

    async def main() -> None:
        async with mm.agent(on_permission=asked) as agent:
            assert (await agent.complete("/diff")).text == "edit -> applied"
        (request,) = asked.requests
        assert request.tool_call.kind == "edit"
        assert request.tool_call.content == [
            {
                "type": "diff",
                "path": str(mm.dir / "a.txt"),
                "oldText": "old\n",
                "newText": "new\n",
            }
        ]

    asyncio.run(main())


def test_cancel_while_the_callback_decides(mm: FakeMM) -> None:
    entered = asyncio.Event()

    async def decide(request: minime.PermissionRequest) -> Any:
        entered.set()
        await asyncio.Event().wait()

    async def main() -> None:
        async with mm.agent(on_permission=decide) as agent:
            turn = asyncio.ensure_future(agent.complete("/say before\n/bash ls"))
            await asyncio.wait_for(entered.wait(), 10)
            await agent.cancel()
            result = await asyncio.wait_for(turn, 10)
            assert result.stop_reason == "cancelled"
            assert result.text == "before"
            assert (await agent.complete("/say next")).text == "next"

    asyncio.run(main())
