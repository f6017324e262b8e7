"""The fake mm's test-only commands that name files in ACP ``locations`` (mm sends none;
claude-agent-acp does, for its reads and edits): what follow, <CR> on a tool line and the
review's baseline read.

Added to the script by tests/fake_mm.py beside fake_mm_faults' commands; same signature.

==============================  ================================================================
``/located-write PATH TEXT``    an edit that names PATH only in its ``locations`` (no diff; its
                                permission request names no file), then TEXT written to PATH on
                                disk by the agent itself. ``\\n`` in TEXT is a line break.
``/locate-wait FILE PATH``      the demo's ``/locate PATH`` (PATH[:LINE]; demo/scripted_mm/
                                edits.py), its result sent once FILE (in
                                the session's cwd) exists.
==============================  ================================================================
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from scripted_mm.agent import Turn
from scripted_mm.edits import edit_call, locate, write_args, write_file, write_if_allowed
from scripted_mm.script import Command

if TYPE_CHECKING:
    from fake_mm import FakeMM


async def _located_write(mm: FakeMM, turn: Turn, rest: str) -> None:
    path, full, text = write_args(turn, rest)
    call = edit_call(mm, f"Edit {path}", full, rawInput={"path": path})
    asked = {key: value for key, value in call.items() if key != "locations"}
    if await write_if_allowed(mm, turn, "edit", call, write_file(full, text), asked):
        await mm.say(turn, f"edit -> wrote {path}")


async def _locate_wait(mm: FakeMM, turn: Turn, rest: str) -> None:
    until, _, specs = rest.partition(" ")

    async def exists() -> None:
        while not os.path.exists(os.path.join(turn.session.cwd, until)):
            await asyncio.sleep(0.02)

    await locate(mm, turn, specs, exists)


LOCATIONS: dict[str, Command] = {
    "/located-write": _located_write,
    "/locate-wait": _locate_wait,
}
