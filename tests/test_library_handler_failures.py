"""A program's handlers misbehaving: hung sync handlers, SystemExit, wrong argument types.

The library runs sync handlers on its own daemon threads (tool handlers and on_permission
apart), never waits for them at exit, and turns any handler's exception — SystemExit and
KeyboardInterrupt too — into a failed call or a rejection.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import minime
import pytest
from conftest import FakeMM

PROGRAM = textwrap.dedent(
    """
    import asyncio, sys, threading, time
    import minime

    def stuck(request):
        threading.Event().wait()  # never returns

    def on_permission(request):
        return minime.ALLOW

    async def main():
        config, mm, cwd = sys.argv[1:4]
        tools = [minime.Tool("stuck", stuck)]
        agent = await minime.start(
            config, mm=mm, cwd=cwd, tools=tools, on_permission=on_permission
        )
        await agent.complete("/parallel 33 stuck {}")
        started = time.monotonic()
        text = (await agent.complete("/bash ls")).text
        print(f"permission after {time.monotonic() - started:.2f} s: {text}", flush=True)
        await agent.close()

    asyncio.run(main())
    print("exiting", flush=True)
    """
)


def test_hung_sync_handlers_neither_delay_a_permission_nor_hold_the_exit(
    mm: FakeMM, tmp_path: Path
) -> None:
    """33 sync tool handlers that never return (more than asyncio's default executor ever has
    threads): the sync on_permission after them is answered at once and the program exits at
    once (asyncio.run's executor shutdown would wait for them for ever)."""
    config = mm.config(client_tools={"timeout": "200ms"})
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, str(script), config, mm.bin, str(mm.dir)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    first, last = done.stdout.splitlines()
    assert first.endswith("s: bash -> ran: ls"), first
    assert float(first.split()[2]) < 5.0, first
    assert last == "exiting"


class Abort:
    """Handlers that raise what ends a program: SystemExit, KeyboardInterrupt."""

    def sync_tool(self, request: minime.ToolRequest) -> str:
        raise SystemExit(3)

    async def async_tool(self, request: minime.ToolRequest) -> str:
        raise KeyboardInterrupt

    def sync_permission(self, request: minime.PermissionRequest) -> Any:
        raise SystemExit("no")

    async def async_permission(self, request: minime.PermissionRequest) -> Any:
        raise KeyboardInterrupt


@pytest.mark.parametrize("permission", ["sync_permission", "async_permission"])
def test_system_exit_in_a_handler_is_a_failed_call_not_an_exit(mm: FakeMM, permission: str) -> None:
    abort = Abort()
    tools = [minime.Tool("quit", abort.sync_tool), minime.Tool("interrupt", abort.async_tool)]

    async def main() -> None:
        config = mm.config(yolo=True)
        async with mm.agent(config, tools=tools) as agent:
            text = (await agent.complete("/tool quit {}\n/tool interrupt {}")).text
            assert text.splitlines() == [
                "client_quit -> [client tool error: the handler raised SystemExit: 3]",
                "client_interrupt -> [client tool error: the handler raised KeyboardInterrupt]",
            ]
        on_permission = getattr(abort, permission)
        async with mm.agent(mm.config(), on_permission=on_permission) as agent:
            assert (await agent.complete("/bash ls")).text == "bash -> [bash rejected by user]"
            assert (await agent.complete("/say alive")).text == "alive"

    asyncio.run(main())


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"config": 123}, "config must be a path"),
        ({"cwd": 5}, "cwd must be a path"),
        ({"mm": 7}, "mm must be a str"),
        ({"tools": 5}, "tools must be a list"),
        ({"tools": "abc"}, "tools must be a list"),
        ({"discovery": 1}, "discovery must be"),
        ({"on_permission": 3}, "on_permission must be a function"),
        ({"on_stderr": "x"}, "on_stderr must be a function"),
        ({"command": "mm -acp"}, "command must be a list of strings"),
        ({"env": {"A": 1}}, "env must be a dict of str to str"),
        ({"ready_timeout": "soon"}, "ready_timeout must be a positive number"),
        ({"cancel_timeout": -1}, "cancel_timeout must be a positive number"),
        ({"colour": "blue"}, "unknown options: colour"),
    ],
)
def test_wrong_arguments_to_start_raise_minime_error_in_plain_words(
    mm: FakeMM, tmp_path: Path, options: dict[str, Any], words: str
) -> None:
    spawned = tmp_path / "spawned"
    os.environ["FAKE_MM_SPAWNED"] = str(spawned)
    options = {"config": mm.config(), "mm": mm.bin, "cwd": str(mm.dir), **options}
    try:
        with pytest.raises(minime.Error, match=words):
            asyncio.run(minime.start(**options))
    finally:
        del os.environ["FAKE_MM_SPAWNED"]
    assert not spawned.exists()


def test_system_exit_in_a_tool_source_or_on_stderr_is_no_exit_either(mm: FakeMM) -> None:
    def source(session_id: str, cwd: str) -> list[minime.Tool]:
        raise SystemExit(4)

    def on_stderr(line: str) -> None:
        raise SystemExit(5)

    async def main() -> None:
        config = mm.config(yolo=True, client_tools={"discovery": "request"})
        options = {"discovery": "request", "on_stderr": on_stderr}
        async with mm.agent(config, tools=source, **options) as agent:
            assert (await agent.complete("/tools\n/stderr x\n/say alive")).text == "[]\nalive"
            (listed,) = mm.sent("_org.mini-me/tools/list")
            answer = await mm.until(lambda: mm.answer_to(listed["id"]), what="the list answer")
            assert "SystemExit: 4" in json.dumps(answer["error"])
            assert (await agent.complete("/say still")).text == "still"

    asyncio.run(main())


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"colour": "blue"}, r"^connect\(\) got unknown options: colour$"),
        ({"terminal_auth": "yes"}, "^terminal_auth must be True or False, got 'yes'$"),
        ({"terminal": "on"}, "^terminal must be True, False or a Terminals, got str$"),
        ({"on_elicitation": 3}, "^on_elicitation must be a function, got int$"),
        ({"tools_via": "pipe"}, '^tools_via must be "client" or "mcp", got \'pipe\'$'),
    ],
)
def test_wrong_options_to_connect_raise_minime_error_naming_them(
    mm: FakeMM, tmp_path: Path, options: dict[str, Any], words: str
) -> None:
    """connect's options are one Struct checked once: an unknown name was a TypeError, a
    terminal_auth that is no bool was taken as true."""
    spawned = tmp_path / "spawned"
    os.environ["FAKE_MM_SPAWNED"] = str(spawned)
    options = {"config": mm.config(), "mm": mm.bin, "cwd": str(mm.dir), **options}
    try:
        with pytest.raises(minime.Error, match=words):
            asyncio.run(minime.connect(**options))
    finally:
        del os.environ["FAKE_MM_SPAWNED"]
    assert not spawned.exists()
