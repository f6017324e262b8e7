"""The fake mm's commands that name files in ACP ``locations`` (mm sends none; claude-agent-acp
does, for its reads and edits): what follow, <CR> on a tool line and the review's baseline read.

Added to the script by tests/fake_mm.py beside fake_mm_faults' commands; same signature.

==============================  ================================================================
``/located-write PATH TEXT``    an edit that names PATH only in its ``locations`` (no diff; its
                                permission request names no file), then TEXT written to PATH on
                                disk by the agent itself. ``\\n`` in TEXT is a line break.
``/locate PATH[:LINE]...``      a read whose ``tool_call`` has the first PATH (and LINE) in its
                                ``locations``, each next one in a ``tool_call_update``
                                (in_progress), then completed: ``locate -> done``. PATH is
                                relative to the session's cwd unless absolute.
``/locate-wait FILE PATH``      ``/locate PATH`` (PATH[:LINE]), its result sent once FILE (in
                                the session's cwd) exists.
==============================  ================================================================
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from fake_mm_faults import edit_call, write_args, write_file, write_if_allowed
from scripted_mm.agent import Turn
from scripted_mm.script import Command

if TYPE_CHECKING:
    from fake_mm import FakeMM


async def _located_write(mm: FakeMM, turn: Turn, rest: str) -> None:
    path, full, text = write_args(turn, rest)
    call = edit_call(mm, f"Edit {path}", full, rawInput={"path": path})
    asked = {key: value for key, value in call.items() if key != "locations"}
    if await write_if_allowed(mm, turn, "edit", call, write_file(full, text), asked):
        await mm.say(turn, f"edit -> wrote {path}")


def _location(turn: Turn, spec: str) -> dict[str, Any]:
    """PATH[:LINE] as an ACP location (PATH made absolute from the session's cwd)."""
    head, _, tail = spec.rpartition(":")
    path, line = (head, tail) if head and tail.isdigit() else (spec, "")
    location: dict[str, Any] = {"path": os.path.join(turn.session.cwd, path)}
    if line:
        location["line"] = int(line)
    return location


async def _locate(mm: FakeMM, turn: Turn, rest: str, until: str | None = None) -> None:
    specs = rest.split()
    call_id = f"call_{next(mm.call_ids)}"
    first = _location(turn, specs[0])
    call = {
        "toolCallId": call_id,
        "title": f"Read {specs[0]}",
        "kind": "read",
        "status": "pending",
        "locations": [first],
    }
    await mm.report_call(turn, call)
    for spec in specs[1:]:
        await mm.update(
            turn.session.id,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "in_progress",
                "locations": [_location(turn, spec)],
            },
        )
    if until is not None:
        while not os.path.exists(os.path.join(turn.session.cwd, until)):
            await asyncio.sleep(0.02)
    await mm.report_end(turn, call_id, "read", False)
    await mm.say(turn, "locate -> done")


async def _locate_wait(mm: FakeMM, turn: Turn, rest: str) -> None:
    until, _, specs = rest.partition(" ")
    await _locate(mm, turn, specs, until)


LOCATIONS: dict[str, Command] = {
    "/located-write": _located_write,
    "/locate": _locate,
    "/locate-wait": _locate_wait,
}
