"""The offline demo agent (demo/mm with demo/agent.yaml) on its own, without the test faults."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import minime
import pytest
from nvim_harness import REPO

DEMO_MM = str(REPO / "demo" / "mm")
DEMO_CONFIG = str(REPO / "demo" / "agent.yaml")


def test_a_plain_prompt_plays_the_tour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Thought, plan, a client tool, a bash permission: in a project whose own ``yaml.py``
    would break an agent that put the cwd on its import path."""
    monkeypatch.setenv("MINIME_PYTHON", sys.executable)
    (tmp_path / "yaml.py").write_text("raise SystemExit('the project shadowed yaml')\n")
    asked: list[str] = []

    def allow(call: minime.PermissionRequest) -> minime.Decision:
        asked.append(call.tool_call.title)
        return minime.ALLOW

    async def main() -> list[minime.Event]:
        tools = [minime.Tool("open_buffers", lambda request: "a.txt")]
        async with await minime.start(
            DEMO_CONFIG,
            mm=DEMO_MM,
            cwd=str(tmp_path),
            tools=tools,
            discovery="request",
            on_permission=allow,
        ) as agent:
            return [e async for e in agent.stream("hello")]

    events = asyncio.run(main())
    kinds = {e.kind for e in events}
    assert {"thinking", "plan", "tool_call", "tool_result", "done"} <= kinds
    text = events[-1].text
    assert "**Offline demo agent**" in text and "You asked: hello" in text
    assert "client_open_buffers -> a.txt" in text
    assert "bash -> ran: echo hello from the demo" in text
    assert asked == ["client: open_buffers", "bash: echo hello from the demo"]


def test_the_demo_has_no_test_faults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """/crash and its kind live in tests/fake_mm_faults.py: the demo a user meets lacks them."""
    monkeypatch.setenv("MINIME_PYTHON", sys.executable)

    async def main() -> str:
        async with await minime.start(DEMO_CONFIG, mm=DEMO_MM, cwd=str(tmp_path)) as agent:
            return (await agent.complete("/crash 3\n/say still here")).text

    assert asyncio.run(main()) == "unknown command /crash\nstill here"


def test_the_demo_advertises_each_command_of_its_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its available_commands_update names every command the script runs (none the faults
    add), each with a description, so the editor lists and completes them."""
    monkeypatch.setenv("MINIME_PYTHON", sys.executable)
    sys.path.insert(0, str(REPO / "demo"))
    try:
        from scripted_mm.script import COMMANDS
    finally:
        sys.path.remove(str(REPO / "demo"))

    async def main() -> list[minime.AvailableCommand]:
        async with await minime.start(DEMO_CONFIG, mm=DEMO_MM, cwd=str(tmp_path)) as agent:
            await agent.complete("/say hi")  # the update came just after session/new's answer
            return agent.session.commands

    commands = asyncio.run(main())
    assert ["/" + c.name for c in commands] == list(COMMANDS)
    assert all(c.description for c in commands)
