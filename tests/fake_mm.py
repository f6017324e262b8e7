#!/usr/bin/env python3
"""The fake mm for tests: the scripted mm of demo/ (mm's dialect on mm's Go wire) plus faults.

Usage (mm's own command line; anything else exits 2)::

    python tests/fake_mm.py -acp -config agent.yaml

Everything mm does lives in demo/scripted_mm (its docstring lists the agent file, the ``fake:``
knobs ``banner``, ``trace``, ``demo``, ``load_sessions``, and the script's commands). This layer
adds what only a test wants: an mm that fails to start, floods, hangs, crashes or misbehaves on
the wire, and the quirks other agents have. Kept apart so the demo agent a user meets has none
of them, and small enough that the two layers read in one sitting each.

Test-only knobs under ``fake:``
-------------------------------
=============================  =================================================================
``exit_before_initialize: N``  write ``exit_message`` on stderr and exit with status N at once.
``exit_message: str``          the line above (default ``fatal: cannot reach the model server``).
``never_initialize: true``     never answer ``initialize``.
``initialize_delay: D``         answer ``initialize`` D later (a Go duration or seconds): a slow
                               start, the process running and reading stdin meanwhile.
``session_new_delay: D``        the same for ``session/new``.
``hold_initialize: PATH``       answer ``initialize`` only once PATH exists (after its delay): a
                               start that lasts exactly until the test creates PATH.
``hold_session_new: PATH``      the same for ``session/new``.
``stderr_flood_bytes: N``      write N bytes of stderr lines before answering ``initialize``.
``usage: false``               no ``usage`` on the prompt's answer.
``commands_early: false``      the ``available_commands_update`` after the session's answer (the
                               demo's way); by default the fake sends it before the answer
                               (as claude-agent-acp may), not after it.
``ignore_stdin_eof: true``     keep running after stdin closes (a stuck agent).
``plain_script: TEXT``         a prompt with no ``/`` line plays TEXT (a script) instead: the
                               conversation shows a person's prompt (tests/scenes.py).
``on_prompt: {when, then}``    a prompt holding the text ``when`` runs, after its own lines, the
                               next script of the list ``then`` (the n-th such prompt the n-th
                               script): an agent that acts on what it is sent.
``fork: true``                 ``session/fork`` at a message (tests/fake_mm_rewind.py).
=============================  =================================================================

The script's extra commands are in ``fake_mm_faults``, ``fake_mm_locations``, ``fake_mm_git``,
``fake_mm_usage`` and ``fake_mm_rewind`` (their docstrings list them).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

DEMO = str(Path(__file__).resolve().parent.parent / "demo")
if DEMO not in sys.path:
    sys.path.insert(0, DEMO)

from fake_mm_faults import FAULTS, bigline_text  # noqa: E402
from fake_mm_git import GIT  # noqa: E402
from fake_mm_locations import LOCATIONS  # noqa: E402
from fake_mm_rewind import REWIND, Forks  # noqa: E402
from fake_mm_usage import USAGE  # noqa: E402
from scripted_mm import cli  # noqa: E402
from scripted_mm.agent import ScriptedMM, Turn  # noqa: E402
from scripted_mm.calls import LOOP_LIMIT, PERMISSION_OPTIONS  # noqa: E402
from scripted_mm.client_tools import (  # noqa: E402
    LIST_METHOD,
    META_TOOLS,
    NOT_A_LIST,
    SESSION_META,
    ClientTool,
    model_name,
    model_tool,
    render_result,
    truncate,
    validate_tools,
)
from scripted_mm.config import Config, parse_duration  # noqa: E402
from scripted_mm.script import (  # noqa: E402
    COMMANDS,
    PLAN_ENTRIES,
    Command,
    chunks_text,
    commands_update,
)
from scripted_mm.tour import is_plain  # noqa: E402
from scripted_mm.wire import CANCEL_REQUEST, MAX_LINE  # noqa: E402

__all__ = [
    "CANCEL_REQUEST",
    "LIST_METHOD",
    "LOOP_LIMIT",
    "MAX_LINE",
    "META_TOOLS",
    "NOT_A_LIST",
    "PERMISSION_OPTIONS",
    "PLAN_ENTRIES",
    "SESSION_META",
    "ClientTool",
    "FakeMM",
    "bigline_text",
    "chunks_text",
    "main",
    "model_name",
    "model_tool",
    "parse_duration",
    "render_result",
    "truncate",
    "validate_tools",
]

DEFAULT_BANNER = "mm v0.0.0-fake (fake mm for tests): ACP on stdio"
DEFAULT_EXIT_MESSAGE = "fatal: cannot reach the model server"


class FakeMM(ScriptedMM):
    """The scripted mm with the test-only knobs and the fault commands."""

    commands: ClassVar[dict[str, Command]] = {
        **COMMANDS,
        **FAULTS,
        **LOCATIONS,
        **GIT,
        **USAGE,
        **REWIND,
    }
    title, version = "mini-me (fake)", "0.0.0-fake"

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.children: list[subprocess.Popen[bytes]] = []
        self.forks = Forks()  # ``fork: true`` (fake_mm_rewind.py)

    async def handle(self, method: str, params: Any) -> Any:
        if method == "session/fork" and self.config.fake.get("fork"):
            return await self.forks.fork(self, params)
        return await super().handle(method, params)

    async def update(self, session_id: str, update: dict[str, Any]) -> None:
        if self.config.fake.get("fork"):
            update = self.forks.tag(session_id, update)
        await super().update(session_id, update)

    def before_serving(self) -> int | None:
        fake = self.config.fake
        if "exit_before_initialize" not in fake:
            return None
        sys.stderr.write(str(fake.get("exit_message", DEFAULT_EXIT_MESSAGE)) + "\n")
        return int(fake["exit_before_initialize"])

    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        fake = self.config.fake
        if flood := int(fake.get("stderr_flood_bytes", 0)):
            line = b"flood " + b"." * 93 + b"\n"
            out = sys.stderr.buffer
            for _i in range(flood // len(line)):
                out.write(line)
            out.write(b"." * (flood % len(line)))
            out.write(b"\n")
            out.flush()
        if fake.get("never_initialize"):
            await asyncio.Event().wait()
        await self._slow("initialize")
        answer = await super().initialize(params)
        if fake.get("fork"):
            answer["agentCapabilities"]["sessionCapabilities"]["fork"] = {}
        return answer

    async def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        await self._slow("session_new")
        return await super().new_session(params)

    async def advertise_commands(self, session_id: str) -> None:
        # Before the answer unless a test asks for after (the demo's way): sent after, it races
        # the first prompt and lands in the first turn's events, which most tests read whole.
        if self.config.fake.get("commands_early", True):
            await self.update(session_id, commands_update())
        else:
            await super().advertise_commands(session_id)

    async def _slow(self, step: str) -> None:
        """A slow start: ``<step>_delay``, then ``hold_<step>`` (a file the test creates)."""
        fake = self.config.fake
        if delay := fake.get(f"{step}_delay"):
            await asyncio.sleep(parse_duration(delay))
        if hold := fake.get(f"hold_{step}"):
            while not os.path.exists(hold):
                await asyncio.sleep(0.02)

    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.config.fake.get("fork") and params.get("sessionId") in self.sessions:
            blocks = params.get("prompt") if isinstance(params.get("prompt"), list) else []
            text = "".join(str(b.get("text") or "") for b in blocks if isinstance(b, dict))
            self.forks.begin(params["sessionId"], text)
        answer = await super().prompt(params)
        if not self.config.fake.get("usage", True):
            answer.pop("usage", None)
        return answer

    async def _run(self, turn: Turn, text: str) -> str:
        """``on_prompt``'s next script after the prompt's lines; ``plain_script`` in place of a
        prompt a person typed."""
        hook = self.config.fake.get("on_prompt")
        if isinstance(hook, dict) and str(hook.get("when")) in text:
            scripts = list(hook.get("then") or [])
            self.hooked = getattr(self, "hooked", 0) + 1
            if self.hooked <= len(scripts):
                text = text + "\n" + scripts[self.hooked - 1]
        script = self.config.fake.get("plain_script")
        return await super()._run(turn, script if script and is_plain(text) else text)

    async def closed(self, why: str) -> None:
        await super().closed(why)
        if self.config.fake.get("ignore_stdin_eof"):
            await asyncio.Event().wait()


def main(argv: list[str]) -> int:
    # FakeMM is looked up when called: a test may replace it (tests/test_everyday.py).
    return cli.main(argv, lambda config: FakeMM(config), DEFAULT_BANNER)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
