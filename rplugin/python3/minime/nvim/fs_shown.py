"""A ``fs/write_text_file`` the editor made, shown in the conversation by the host.

Lua writes (lua/minime/editor/fs.lua) and answers what it changed; the host, the one writer of
the conversation, turns that into the turn's events and queues them behind what the agent said
before the write (the renderer's stream order), unless the agent's own tool call already shows
that very change (qwen-code's write_file carries the diff of the write it then makes).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable
from typing import Any

import msgspec

from ..model import ToolCall
from . import events
from .events import LuaEvent
from .wire_text import clean

# A write over unsaved edits goes through (the agent may well have read that text: a read
# answers a loaded buffer's, unsaved edits included), as one undo step, and is said.
UNSAVED_NOTE = (
    "your unsaved changes in this buffer were replaced and the file saved:"
    " u in the buffer brings them back"
)


class FsWrite(msgspec.Struct, frozen=True):
    """What a write changed, as lua/minime/editor/fs.lua answers it."""

    path: str  # relative to the session's cwd
    real: str
    new: str
    old: str | None = None  # None: a new file
    unread: str | None = None  # the text before was not read: the diff's header and why
    unsaved: bool = False  # the buffer's unsaved edits were replaced


_numbers = itertools.count(1)  # each write gets its own tool line


def _same_text(a: Any, b: str | None) -> bool:
    """Texts before equal, a new file and an empty text alike (qwen sends ``oldText: ""``)."""
    return (a if isinstance(a, str) else "") == (b or "")


def already_shown(write: FsWrite, calls: Iterable[ToolCall], cwd: str) -> bool:
    """Whether a tool call of the running turn shows ``write``'s very change: its diff names
    the same file, from the same text to the same text. A diff the agent made from other text
    (the disk, while the buffer had unsaved edits) is not the change, and the write is shown."""
    if write.unread is not None or write.old == write.new:
        return False
    for call in calls:
        for item in call.content:
            if not (isinstance(item, dict) and item.get("type") == "diff"):
                continue
            path = item.get("path")
            if not isinstance(path, str) or item.get("newText") != write.new:
                continue
            if os.path.realpath(os.path.join(cwd, path)) != write.real:
                continue
            if _same_text(item.get("oldText"), write.old):
                return True
    return False


def shown(write: FsWrite) -> list[LuaEvent]:
    """The tool line of ``write`` with its diff folded under it, drawn like an agent's edit."""
    call_id = f"fs/write_text_file {next(_numbers)}"
    rel = clean(write.path)
    changed = write.old != write.new
    title = f"the agent wrote {rel}" + ("" if changed else " (no changes)")
    if write.unsaved and changed:
        title = f"the agent wrote {rel} over your unsaved changes"
    diffs = None
    if write.unread is None:
        diff = {"path": rel, "newText": clean(write.new)}
        if write.old is not None:
            diff["oldText"] = clean(write.old)
        diffs = [diff]
    line = events.ToolCallShown(
        id=call_id, title=title, tool_kind="edit", status="completed", diffs=diffs
    )
    said: list[LuaEvent] = [line]
    output = clean(write.unread) if write.unread is not None else None
    if write.unsaved and changed:
        output = (output + "\n" if output is not None else "") + UNSAVED_NOTE
        said.append(events.ToolResultShown(id=call_id, output=output, diffs=diffs))
    elif output is not None:
        said.append(events.ToolResultShown(id=call_id, output=output))
    return said
