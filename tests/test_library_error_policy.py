"""The one error policy (minime/connection.py): whichever request is in flight, an agent that
died reads as its death (exit status and last stderr line), an agent that said no in its own
words, a closed connection as closed — never "turn failed" for what was no turn.

tests/adversary.py over real pipes: it exits on the request a test names, and with ``hold`` a
child of its keeps the pipes open, so no end of output tells the client (only the exit does).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import minime
import pytest

ADVERSARY = Path(__file__).with_name("adversary.py")
MODES = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]}
MODES["availableModes"].append({"id": "plan", "name": "Plan"})
NEW = {"session/new": {"result": {"sessionId": "adv-1", "modes": MODES}}}
# How long a request may take to end once the agent is gone (it waited for ever before).
BOUND = 15.0


def command(directory: Path, script: dict[str, Any]) -> list[str]:
    path = directory / "adversary.json"
    path.write_text(json.dumps(script))
    return [sys.executable, str(ADVERSARY), str(path)]


def dies_on(method: str, hold: bool) -> dict[str, Any]:
    death = {"status": 3, "stderr": "fatal: the model server is gone", "hold": hold}
    return {"replies": NEW, "exit_on": {method: death}}


async def request(session: minime.Session, client: minime.Client, method: str) -> None:
    if method == "session/set_mode":
        await session.set_mode("plan")
    elif method == "session/close":
        await client.close_session(session.session_id)
    else:
        await client.list_sessions()


@pytest.mark.parametrize("hold", [False, True], ids=["pipes-end", "pipes-held"])
@pytest.mark.parametrize("method", ["session/set_mode", "session/close", "session/list"])
def test_a_request_in_flight_when_the_agent_dies_says_it_died(
    tmp_path: Path, method: str, hold: bool
) -> None:
    """The agent exits on the request, unanswered. Held pipes: the request waited for ever."""
    argv = command(tmp_path, dies_on(method, hold))

    async def main() -> None:
        async with await minime.connect(command=argv, cwd=str(tmp_path)) as client:
            session = await client.new_session()
            with pytest.raises(minime.Error) as caught:
                await asyncio.wait_for(request(session, client, method), BOUND)
            said = str(caught.value)
            assert said.startswith("python"), said
            assert "exited: exit status 3" in said
            assert "(last stderr line: fatal: the model server is gone)" in said
            assert "failed" not in said
            assert not client.alive

    asyncio.run(main())


def test_the_turn_after_such_a_death_says_the_same(tmp_path: Path) -> None:
    argv = command(tmp_path, dies_on("session/set_mode", True))

    async def main() -> None:
        async with await minime.connect(command=argv, cwd=str(tmp_path)) as client:
            session = await client.new_session()
            with pytest.raises(minime.Error) as first:
                await asyncio.wait_for(session.set_mode("plan"), BOUND)
            with pytest.raises(minime.Error) as second:
                await asyncio.wait_for(session.complete("[]"), BOUND)
            assert str(second.value) == str(first.value)

    asyncio.run(main())


@pytest.mark.parametrize("method", ["session/set_mode", "session/list"])
def test_a_request_in_flight_when_the_client_closes_says_closed(
    tmp_path: Path, method: str
) -> None:
    trace = tmp_path / "trace.jsonl"
    argv = command(tmp_path, {"replies": NEW, "delays": {method: 30}, "trace": str(trace)})

    def received() -> bool:
        lines = trace.read_text().splitlines() if trace.exists() else []
        return any(json.loads(line)["in"].get("method") == method for line in lines)

    async def main() -> None:
        client = await minime.connect(command=argv, cwd=str(tmp_path))
        session = await client.new_session()
        asked = asyncio.ensure_future(request(session, client, method))
        deadline = asyncio.get_running_loop().time() + BOUND
        while not received():  # the agent has it, and sits on it
            assert asyncio.get_running_loop().time() < deadline, f"{method} never sent"
            await asyncio.sleep(0.02)
        await client.close()
        with pytest.raises(minime.Error) as caught:
            await asyncio.wait_for(asked, BOUND)
        assert str(caught.value) == "the agent connection was closed"

    asyncio.run(main())


def test_a_refusal_is_the_agents_words_without_its_stderr(tmp_path: Path) -> None:
    """Alive and answering: its last stderr line is whatever it last logged, not the reason."""
    error = {"code": -32603, "message": "Internal error", "data": {"error": "no plan mode today"}}
    script = {
        "replies": {**NEW, "session/set_mode": {"error": error}},
        "on_open": [{"stderr": "[acp] session adv-1: 0 client tools"}],
    }
    argv = command(tmp_path, script)

    async def main() -> None:
        async with await minime.connect(command=argv, cwd=str(tmp_path)) as client:
            session = await client.new_session()
            with pytest.raises(minime.Error) as caught:
                await session.set_mode("plan")
            said = "session/set_mode failed: Internal error (-32603): no plan mode today"
            assert str(caught.value) == said
            assert session.modes is not None and session.modes.current == "ask"
            assert client.alive

    asyncio.run(main())
