"""What the library makes of an agent's answers that the SDK's schema did not expect, and of
an agent slow to start: tests/adversary.py over real pipes, answering as each test scripts it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import minime
import pytest

ADVERSARY = Path(__file__).with_name("adversary.py")


def agent_command(directory: Path, script: dict[str, Any]) -> list[str]:
    path = directory / "adversary.json"
    path.write_text(json.dumps(script))
    return [sys.executable, str(ADVERSARY), str(path)]


def say(text: str) -> str:
    """A prompt the adversary plays: one chunk of text, then its answer."""
    return json.dumps([{"say": text}])


# --- session/list ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (
            {"error": {"code": -32601, "message": "Method not found"}},
            "session/list failed: Method not found",
        ),
        (
            {"error": {"code": -32603, "message": "Internal error", "data": "disk full"}},
            "disk full",
        ),
        ({"result": {"sessions": "not a list"}}, "session/list failed: "),
    ],
    ids=["method-not-found", "error-with-data", "malformed-result"],
)
def test_every_list_sessions_failure_is_a_minime_error(
    tmp_path: Path, reply: dict[str, Any], words: str
) -> None:
    command = agent_command(tmp_path, {"replies": {"session/list": reply}})

    async def main() -> None:
        async with await minime.connect(command=command, cwd=str(tmp_path)) as client:
            with pytest.raises(minime.Error) as caught:
                await client.list_sessions()
            assert words in str(caught.value)
            assert type(caught.value) is minime.Error
            # The connection lives on.
            session = await client.new_session()
            assert (await session.complete(say("alive"))).text == "alive"

    asyncio.run(main())


def test_list_sessions_after_the_agent_died_says_how(tmp_path: Path) -> None:
    command = agent_command(tmp_path, {})

    async def main() -> None:
        async with await minime.connect(command=command, cwd=str(tmp_path)) as client:
            assert client.process is not None
            client.process.process.kill()
            await client.process.wait()
            with pytest.raises(minime.Error, match="exited: killed by signal SIGKILL"):
                await client.list_sessions()

    asyncio.run(main())


# --- stop reasons ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "stop_reason"),
    [
        ({"stopReason": "paused_for_review"}, "paused_for_review"),
        ({"stopReason": "paused", "_meta": {"kept": 1}}, "paused"),
        # Our _meta key is ours: an agent's value under it is not taken for the stop reason.
        ({"stopReason": "refusal", "_meta": {"minime.py/stopReason": "forged"}}, "refusal"),
        ({"stopReason": "max_tokens"}, "max_tokens"),
    ],
    ids=["unknown", "unknown-with-meta", "forged-meta", "known"],
)
def test_a_stop_reason_the_sdk_does_not_know_passes_through(
    tmp_path: Path, result: dict[str, Any], stop_reason: str
) -> None:
    command = agent_command(tmp_path, {"replies": {"session/prompt": {"result": result}}})

    async def main() -> None:
        async with await minime.start(command=command, cwd=str(tmp_path)) as agent:
            completed = await agent.complete(say("so far"))
            assert (completed.text, completed.stop_reason) == ("so far", stop_reason)
            events = [event async for event in agent.stream(say("again"))]
            assert [(e.kind, e.text) for e in events] == [("text", "again"), ("done", "again")]
            assert events[-1].stop_reason == stop_reason

    asyncio.run(main())


def test_a_stop_reason_that_is_no_string_fails_the_turn_with_a_minime_error(
    tmp_path: Path,
) -> None:
    reply = {"result": {"stopReason": 42}}
    command = agent_command(tmp_path, {"replies": {"session/prompt": reply}})

    async def main() -> None:
        async with await minime.start(command=command, cwd=str(tmp_path)) as agent:
            with pytest.raises(minime.Error, match="turn failed: "):
                await agent.complete(say("x"))

    asyncio.run(main())


# --- one bound for the whole start -------------------------------------------------------------

READY = 4.0  # each answer alone comes well within it; both together do not
LATE = 0.7 * READY


def test_ready_timeout_bounds_the_whole_start_not_each_step(tmp_path: Path) -> None:
    delays = {"initialize": LATE, "session/new": LATE}
    command = agent_command(tmp_path, {"delays": delays})

    import acp  # noqa: F401  (imported now: its first import, ~1 s, is not the agent's time)

    async def main() -> None:
        began = time.monotonic()
        with pytest.raises(minime.Error) as caught:
            await minime.start(command=command, cwd=str(tmp_path), ready_timeout=READY)
        elapsed = time.monotonic() - began
        assert str(caught.value) == (
            f"{sys.executable} did not answer session/new within {READY:g} s of its start"
        )
        # A correctness bound, not a speed target: well under twice the bound (and under the
        # 2 x LATE at which both answers would have come).
        assert READY * 0.9 < elapsed < 2 * LATE, elapsed

    asyncio.run(main())


def test_connect_and_new_session_keep_their_own_bounds(tmp_path: Path) -> None:
    # connect() then new_session(): two calls, each bounded by ready_timeout on its own.
    delays = {"initialize": LATE, "session/new": LATE}
    command = agent_command(tmp_path, {"delays": delays})

    async def main() -> None:
        async with await minime.connect(
            command=command, cwd=str(tmp_path), ready_timeout=READY
        ) as client:
            session = await client.new_session()
            assert (await session.complete(say("up"))).text == "up"

    asyncio.run(main())
