"""Several sessions of one agent, turns running in them at once (notes/library.md): one
process, each session's events its own, a slow turn in one never holding up another."""

from __future__ import annotations

import asyncio
import random

import minime
from conftest import FakeMM


def texts(events: list[minime.Event]) -> str:
    return "".join(event.text for event in events if event.kind == "text")


def test_two_sessions_of_one_client_stream_at_once(mm: FakeMM) -> None:
    """A slow turn in one session; three quick turns start and end in the other meanwhile."""

    async def main() -> None:
        async with mm.client(mm.config(yolo=True)) as client:
            slow_session = await client.new_session()
            quick_session = await client.new_session()
            assert slow_session.session_id != quick_session.session_id
            slow_events: list[minime.Event] = []
            quick_ended_while_slow_ran: list[bool] = []
            streaming = asyncio.Event()

            async def slow() -> None:
                async for event in slow_session.stream("/slow 40"):
                    slow_events.append(event)
                    streaming.set()

            async def quick() -> list[str]:
                answers = []
                for word in ("one", "two", "three"):
                    result = await quick_session.complete(f"/say {word}")
                    answers.append(result.text)
                    quick_ended_while_slow_ran.append(slow_session.busy)
                return answers

            slow_task = asyncio.create_task(slow())
            await asyncio.wait_for(streaming.wait(), 20)  # under way before the quick ones
            answers = await asyncio.wait_for(quick(), 20)
            await asyncio.wait_for(slow_task, 30)

            assert answers == ["one", "two", "three"]
            assert quick_ended_while_slow_ran == [True, True, True]
            assert texts(slow_events) == "".join(f"slow {i}\n" for i in range(40))
            assert slow_events[-1].kind == "done"
            assert slow_events[-1].stop_reason == "end_turn"
            # One agent process for both; each prompt went to its own session.
            prompts = [m["params"]["sessionId"] for m in mm.received("session/prompt")]
            assert sorted(set(prompts)) == sorted(
                {slow_session.session_id, quick_session.session_id}
            )
            assert prompts.count(quick_session.session_id) == 3

    asyncio.run(main())


def test_many_sessions_random_turns_keep_their_own_text(mm: FakeMM) -> None:
    """Seeded: a few sessions, turns of random lengths at once; each session's answers are
    exactly its own prompts' (nothing drawn into another)."""
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    plan = {i: [rng.randint(1, 6) for _ in range(rng.randint(1, 3))] for i in range(4)}

    async def main() -> None:
        async with mm.client(mm.config(yolo=True)) as client:
            sessions = [await client.new_session() for _ in plan]

            async def run(i: int) -> list[str]:
                said = []
                for n, lines in enumerate(plan[i]):
                    prompt = "\n".join(f"/say s{i} t{n} l{k}" for k in range(lines))
                    said.append((await sessions[i].complete(prompt)).text)
                return said

            results = await asyncio.wait_for(asyncio.gather(*(run(i) for i in plan)), 60)
            for i, said in enumerate(results):
                for n, text in enumerate(said):
                    expected = "".join(f"s{i} t{n} l{k}" for k in range(plan[i][n]))
                    assert text.replace("\n", "") == expected, (seed, i, n)

    asyncio.run(main())
