"""The library keeps the agent's slash commands per session (``session.commands``): the fake mm
advertises its script's commands in an ``available_commands_update`` just after each session's
answer (``commands_early``: before it, which the client must keep for the id it does not know
yet), and ``/commands NAME…`` replaces the list mid-turn."""

from __future__ import annotations

import asyncio

import minime
from conftest import FakeMM

SCRIPT = ["say", "think", "chunks", "slow", "plan", "tools", "tool", "parallel", "bash", "diff"]
DEMO = ["help", "tour", "wait", "question", "run", "shell-write", "ask-write", "fs-write", "locate"]


def names(session: minime.Session) -> list[str]:
    return [command.name for command in session.commands]


def test_commands_sent_after_the_answer_are_kept_with_description_and_hint(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.client(mm.config(fake={"commands_early": False})) as client:
            session = await client.new_session()
            await mm.until(lambda: session.commands, what="the commands")
            assert names(session) == [*SCRIPT, "error", *DEMO]
            tool = next(c for c in session.commands if c.name == "tool")
            assert tool == minime.AvailableCommand(
                name="tool", description="Call a client tool", hint="NAME [JSON arguments]"
            )
            plan = next(c for c in session.commands if c.name == "plan")
            assert plan.hint is None

    asyncio.run(main())


def test_commands_sent_before_the_session_new_answer_are_kept(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.client(mm.config(fake={"commands_early": True})) as client:
            session = await client.new_session()
            # Already there when new_session returns: they came before its answer.
            assert names(session) == [*SCRIPT, "error", *DEMO]
            out = [t["msg"] for t in mm.trace() if t["dir"] == "out"]
            update = next(i for i, m in enumerate(out) if m.get("method") == "session/update")
            answer = next(i for i, m in enumerate(out) if "sessionId" in (m.get("result") or {}))
            assert update < answer

    asyncio.run(main())


def test_a_later_update_replaces_the_list_and_events_say_so(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.client() as client:
            session = await client.new_session()
            await mm.until(lambda: session.commands, what="the commands")
            kinds = []
            async for event in session.stream("/commands review compact"):
                kinds.append(event.kind)
                if event.kind == "commands":
                    assert [c.name for c in event.commands or []] == ["review", "compact"]
            assert "commands" in kinds
            assert names(session) == ["review", "compact"]
            await session.complete("/commands")
            assert names(session) == []

    asyncio.run(main())


def test_a_huge_list_is_bounded(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.client() as client:
            session = await client.new_session()
            await session.complete("/big-update 560000")
            assert len(session.commands) == 200
            assert all(len(c.description) == 300 for c in session.commands)

    asyncio.run(main())
