"""The fake mm's commands that work the repository the way an agent with a shell can: what the
review's git snapshot must not be fooled by.

Added to the script by tests/fake_mm.py beside fake_mm_faults' commands; same signature.

==============================  ================================================================
``/stage-rewrite PATH TEXT``    ``git add PATH`` with PATH's times made new (the index's entry
                                then holds them), then TEXT — as many bytes as PATH held —
                                written to PATH in the same second, reported as a completed
                                ``bash: git add PATH && …`` call: the index's entry matches the
                                new file's stat, size and second, not its text.
==============================  ================================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from helpers.git_race import stage_then_rewrite
from scripted_mm.agent import Turn
from scripted_mm.edits import write_args
from scripted_mm.script import Command

if TYPE_CHECKING:
    from fake_mm import FakeMM


async def _stage_rewrite(mm: FakeMM, turn: Turn, rest: str) -> None:
    path, _, text = write_args(turn, rest)
    call_id = f"call_{next(mm.call_ids)}"
    title = f"bash: git add {path} && printf … > {path}"
    call = {"toolCallId": call_id, "title": title, "kind": "execute", "status": "pending"}
    await mm.report_call(turn, call)
    stage_then_rewrite(turn.session.cwd, path, text)
    await mm.report_end(turn, call_id, "ran", False)
    await mm.say(turn, "bash -> ran")


GIT: dict[str, Command] = {"/stage-rewrite": _stage_rewrite}
