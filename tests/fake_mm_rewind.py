"""The fake mm's commands for the rewind's tests: a write through the client's file system.

Added to the script by tests/fake_mm.py beside fake_mm_faults' commands; same signature.

==============================  ================================================================
``/fs-write PATH TEXT``         ``fs/write_text_file`` of TEXT (and a newline; ``\\n`` a line
                                break) to PATH (relative to the session's cwd), shown as an
                                ``edit: PATH`` call naming the file: ``fs -> <the answer>``.
==============================  ================================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fake_mm_faults import write_args
from scripted_mm.agent import Turn
from scripted_mm.script import Command

if TYPE_CHECKING:
    from fake_mm import FakeMM


async def _fs_write(mm: FakeMM, turn: Turn, rest: str) -> None:
    path, full, text = write_args(turn, rest)
    call_id = f"call_{next(mm.call_ids)}"
    call = {
        "toolCallId": call_id,
        "title": f"edit: {path}",
        "kind": "edit",
        "status": "pending",
        "locations": [{"path": full}],
    }
    await mm.report_call(turn, call)
    params = {"sessionId": turn.session.id, "path": full, "content": text}
    read, failed = await mm.invoke("fs/write_text_file", params)
    await mm.report_end(turn, call_id, read, failed)
    await mm.say(turn, f"fs -> {read}")


REWIND: dict[str, Command] = {"/fs-write": _fs_write}
