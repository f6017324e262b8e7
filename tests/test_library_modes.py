"""Session modes and config options through the library, against tests/agents/modes.py (a real
agent process over pipes): what the session says it is in, and what crosses the wire."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import minime
import pytest

AGENT = Path(__file__).with_name("agents") / "modes.py"


def received(log: Path, method: str) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [m["params"] for m in lines if m.get("method") == method]


def connect(tmp_path: Path, **env: str) -> Any:
    log = tmp_path / "wire.jsonl"
    return minime.connect(
        command=[sys.executable, str(AGENT)],
        cwd=str(tmp_path),
        env={"MODES_LOG": str(log), **env},
    )


def test_a_new_session_keeps_the_modes_and_options_it_was_offered(tmp_path: Path) -> None:
    async def main() -> None:
        async with await connect(tmp_path) as client:
            session = await client.new_session()
            assert session.modes is not None
            assert session.modes.current == "auto"
            assert [m.id for m in session.modes.available] == ["auto", "default", "plan"]
            assert session.modes.find("default").name == "Ask"
            model, web = session.config_options
            assert (model.id, model.type, model.current) == ("model", "select", "fast")
            assert [v.value for v in model.values] == ["fast", "smart"]
            assert model.category == "model"
            assert (web.id, web.type, web.current) == ("web", "boolean", False)

    asyncio.run(main())


def test_set_mode_sends_session_set_mode_and_keeps_the_new_mode(tmp_path: Path) -> None:
    async def main() -> None:
        async with await connect(tmp_path) as client:
            session = await client.new_session()
            await session.set_mode("default")
            assert session.modes.current == "default"
            assert (await session.complete("which")).text == "mode is default"
        (sent,) = received(tmp_path / "wire.jsonl", "session/set_mode")
        assert sent == {"sessionId": session.session_id, "modeId": "default"}

    asyncio.run(main())


def test_a_mode_not_offered_is_refused_and_nothing_is_sent(tmp_path: Path) -> None:
    async def main() -> None:
        async with await connect(tmp_path) as client:
            session = await client.new_session()
            with pytest.raises(minime.Error, match=r"no mode 'yolo'; its modes: auto, default"):
                await session.set_mode("yolo")
            assert session.modes.current == "auto"
            await session.complete("which")  # the agent has read everything sent before
        assert received(tmp_path / "wire.jsonl", "session/set_mode") == []

    asyncio.run(main())


def test_an_agent_without_modes_refuses_set_mode_plainly(tmp_path: Path) -> None:
    async def main() -> None:
        async with await connect(tmp_path, MODES_OFFER="none") as client:
            session = await client.new_session()
            assert session.modes is None and session.config_options == []
            with pytest.raises(minime.Error, match="offers no session modes"):
                await session.set_mode("default")
            with pytest.raises(minime.Error, match=r"no config option 'model' \(it offers none"):
                await session.set_config_option("model", "smart")

    asyncio.run(main())


def test_current_mode_update_is_an_event_and_the_session_follows_it(tmp_path: Path) -> None:
    async def main() -> None:
        async with await connect(tmp_path) as client:
            session = await client.new_session()
            kinds = []
            async for event in session.stream("switch plan"):
                kinds.append(event.kind)
                if event.kind == "mode":
                    assert event.mode == "plan"
            assert kinds[0] == "mode" and kinds[-1] == "done"
            assert session.modes.current == "plan"

    asyncio.run(main())


def test_a_mode_update_to_a_mode_never_offered_is_ignored_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A mode's id is shown in titles and statuslines: one the agent never offered (there,
    ``%{…}`` ran as Vimscript) is not taken, and the log says so."""

    async def main() -> None:
        async with await connect(tmp_path) as client:
            session = await client.new_session()
            with caplog.at_level("WARNING", logger="minime"):
                events = [e async for e in session.stream("switch %{execute('qa!')}")]
            assert [e.kind for e in events if e.kind == "mode"] == []
            assert session.modes.current == "auto"
            kinds = [e.kind async for e in session.stream("switch plan")]
            assert "mode" in kinds and session.modes.current == "plan"

    asyncio.run(main())
    (record,) = [r for r in caplog.records if "never offered" in r.getMessage()]
    assert record.name == "minime"
    assert (
        "%{execute('qa!')}" in record.getMessage() and "auto, default, plan" in record.getMessage()
    )


def test_set_mode_mid_turn_is_sent_while_the_turn_runs(tmp_path: Path) -> None:
    async def main() -> None:
        async with await connect(tmp_path) as client:
            session = await client.new_session()
            texts = []
            async for event in session.stream("wait"):
                if event.kind == "text":
                    texts.append(event.text)
                    if event.text.startswith("waiting"):
                        await session.set_mode("plan")  # the agent ends the turn on it
            assert texts[-1] == "mode now plan"
            assert session.modes.current == "plan"

    asyncio.run(main())


def test_set_config_option_sends_it_and_takes_the_agents_list(tmp_path: Path) -> None:
    async def main() -> None:
        async with await connect(tmp_path) as client:
            session = await client.new_session()
            options = await session.set_config_option("model", "smart")
            assert [o.current for o in options] == ["smart", False]
            await session.set_config_option("web", True)
            assert session.config_options[1].current is True
            with pytest.raises(minime.Error, match=r"no value 'huge'; its values: fast, smart"):
                await session.set_config_option("model", "huge")
            with pytest.raises(minime.Error, match="on or off"):
                await session.set_config_option("web", "yes")
            with pytest.raises(minime.Error, match=r"no config option 'colour'; its options"):
                await session.set_config_option("colour", "red")
        sent = received(tmp_path / "wire.jsonl", "session/set_config_option")
        assert sent == [
            {"sessionId": session.session_id, "configId": "model", "value": "smart"},
            {"sessionId": session.session_id, "configId": "web", "type": "boolean", "value": True},
        ]

    asyncio.run(main())


def test_config_option_update_is_an_event_and_the_session_follows_it(tmp_path: Path) -> None:
    async def main() -> None:
        async with await connect(tmp_path) as client:
            session = await client.new_session()
            events = [e async for e in session.stream("model smart")]
            (config,) = [e for e in events if e.kind == "config"]
            assert config.config_options[0].current == "smart"
            assert session.config_options[0].current == "smart"

    asyncio.run(main())


def test_a_mode_update_between_turns_is_followed_and_given_to_on_update(tmp_path: Path) -> None:
    async def main() -> None:
        async with await connect(tmp_path) as client:
            session = await client.new_session()
            seen: list[minime.Event] = []
            session.subscribe(seen.append)
            # An update with no turn running, as an agent sends when it changes its own mode.
            from acp.schema import CurrentModeUpdate

            session.inbound.update(
                CurrentModeUpdate(session_update="current_mode_update", current_mode_id="plan")
            )
            assert session.modes.current == "plan"
            assert [(e.kind, e.mode) for e in seen] == [("mode", "plan")]

    asyncio.run(main())


def test_set_mode_on_a_dead_agent_says_it_died(tmp_path: Path) -> None:
    async def main() -> None:
        client = await connect(tmp_path)
        session = await client.new_session()
        assert client.process is not None
        client.process.kill_tree()
        deadline = time.monotonic() + 10
        while client.alive and time.monotonic() < deadline:  # until its death is known
            await asyncio.sleep(0.02)
        with pytest.raises(minime.Error, match="exited"):
            await session.set_mode("plan")
        await client.close()

    asyncio.run(main())


def test_modes_offered_as_a_mode_config_option_are_the_session_modes(tmp_path: Path) -> None:
    """opencode offers its modes (build, plan) only as a config option of category ``mode``:
    they are the session's modes; set_mode sets that option (no session/set_mode, which such
    an agent does not answer), and the agent's own change of it moves the mode."""

    async def main() -> None:
        async with await connect(tmp_path, MODES_OFFER="option") as client:
            session = await client.new_session()
            assert session.modes is not None and session.modes.current == "auto"
            assert [m.id for m in session.modes.available] == ["auto", "default", "plan"]
            assert session.modes.find("default").name == "Ask"
            await session.set_mode("default")
            assert session.modes.current == "default"
            assert (await session.complete("which")).text == "mode is default"
            with pytest.raises(minime.Error, match=r"no mode 'yolo'; its modes: auto, default"):
                await session.set_mode("yolo")
            events = [e async for e in session.stream("switch plan")]
            assert "config" in [e.kind for e in events]
            assert session.modes.current == "plan"
        wire = tmp_path / "wire.jsonl"
        assert received(wire, "session/set_mode") == []
        assert received(wire, "session/set_config_option") == [
            {"sessionId": session.session_id, "configId": "mode", "value": "default"}
        ]

    asyncio.run(main())


def test_a_mode_said_as_agent_text_moves_the_mode_and_is_not_text(tmp_path: Path) -> None:
    """gemini-cli says a change of its mode only as the agent text ``[MODE_UPDATE] <id>``: a
    ``mode`` event (the statusline follows), not a line of the answer; a mode it never
    offered stays text."""

    async def main() -> None:
        async with await connect(tmp_path, MODES_SAY="text") as client:
            session = await client.new_session()
            events = [e async for e in session.stream("switch plan")]
            assert [e.mode for e in events if e.kind == "mode"] == ["plan"]
            assert session.modes.current == "plan"
            assert events[-1].text == "switched to plan"
            said = [e.text async for e in session.stream("switch nope") if e.kind == "text"]
            assert said == ["[MODE_UPDATE] nope", "switched to nope"]
            assert session.modes.current == "plan"

    asyncio.run(main())
