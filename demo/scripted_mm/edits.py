"""Edits and reads that name files, each the way an agent makes it, so that :MiniMeReview, accept,
reject and follow have something to show. mm's spec names one way an agent of mm's changes a
file (its built-in bash); the others are how other ACP agents do it, and say so.

==============================  ================================================================
``/shell-write PATH TEXT``      mm's way: the built-in bash, ``bash: sh -c …``, a permission
                                request naming no file, then TEXT (and a newline) written to
                                PATH (missing: created; TEXT ``-``: PATH deleted). No shell
                                runs: the agent writes what the command would.
``/ask-write PATH TEXT``        claude-agent-acp's Write (not mm's): a tool_call with PATH in
                                its locations and a diff, a permission request, then TEXT (and
                                a newline) written to PATH on disk by the agent itself.
``/fs-write PATH TEXT``         an edit through the client's file system (``fs/read_text_file``
                                then ``fs/write_text_file``: qwen-code's way, not mm's), after a
                                permission request with the diff; the editor writes the buffer.
``/locate PATH[:LINE]...``      a read whose ``tool_call`` has the first PATH (and LINE) in its
                                ``locations``, each next one in a ``tool_call_update``
                                (in_progress), then completed: ``locate -> done``. mm sends no
                                locations; claude-agent-acp does, for its reads and edits.
==============================  ================================================================

PATH is relative to the session's cwd unless absolute; ``\\n`` in TEXT is a line break.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import wire

if TYPE_CHECKING:
    from .agent import ScriptedMM, Turn
    from .script import Command


def write_args(turn: Turn, rest: str) -> tuple[str, str, str]:
    """PATH TEXT (``\\n`` a line break): the path, its full path, the text with its newline."""
    path, _, text = rest.partition(" ")
    return path, os.path.join(turn.session.cwd, path), text.replace("\\n", "\n") + "\n"


def write_file(full: str, text: str) -> Callable[[], None]:
    def write() -> None:
        Path(full).parent.mkdir(parents=True, exist_ok=True)
        Path(full).write_text(text)

    return write


async def write_if_allowed(
    mm: ScriptedMM,
    turn: Turn,
    key: str,
    call: dict[str, Any],
    write: Callable[[], None] | Callable[[], Awaitable[None]],
    asked: dict[str, Any] | None = None,
) -> bool:
    """Report ``call``, ask permission for it (as ``asked`` names it, else as it is), then
    ``write`` (what the tool does)."""
    await mm.report_call(turn, call)
    if not await mm.allowed(turn, key, call if asked is None else asked):
        await mm.report_end(turn, call["toolCallId"], f"[{key} rejected by user]", True)
        return False
    done = write()
    if done is not None:
        await done
    await mm.report_end(turn, call["toolCallId"], f"done: {call['title']}", False)
    return True


def edit_call(mm: ScriptedMM, title: str, full: str, **fields: Any) -> dict[str, Any]:
    """An agent's own edit tool's ``tool_call``, its file (``full``) in its locations."""
    return mm.new_call(title, "edit", locations=[{"path": full}], **fields)


def _old_text(full: str) -> str | None:
    with contextlib.suppress(OSError), open(full) as f:
        return f.read()
    return None


async def ask_write(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    path, full, text = write_args(turn, rest)
    call = edit_call(
        mm,
        f"Write {path}",
        full,
        content=[{"type": "diff", "path": full, "oldText": _old_text(full), "newText": text}],
        rawInput={"file_path": full, "content": text},
    )
    if await write_if_allowed(mm, turn, "write", call, write_file(full, text)):
        await mm.say(turn, f"write -> wrote {path}")


async def shell_write(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    path, full, text = write_args(turn, rest)
    command = f"sh -c 'printf %s {text!r} > {path}'"
    call = mm.new_call(f"bash: {command}", "execute", rawInput={"command": command})
    write = (lambda: os.remove(full)) if text == "-\n" else write_file(full, text)
    if await write_if_allowed(mm, turn, "bash", call, write):
        await mm.say(turn, "bash -> ran")


async def fs_write(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    path, full, text = write_args(turn, rest)
    if not mm.lends("fs", "writeTextFile"):
        await mm.say(turn, "fs-write -> [the client lends no file system (fs)]")
        return
    sid = turn.session.id
    try:
        read = await mm.wire.request("fs/read_text_file", {"sessionId": sid, "path": full})
        old = read.get("content") if isinstance(read, dict) else None
    except wire.RpcError:
        old = None  # a new file
    call = edit_call(
        mm,
        f"edit: {path}",
        full,
        content=[{"type": "diff", "path": full, "oldText": old, "newText": text}],
        rawInput={"path": path},
    )
    failed: list[str] = []

    async def write() -> None:
        try:
            params = {"sessionId": sid, "path": full, "content": text}
            await mm.wire.request("fs/write_text_file", params)
        except wire.RpcError as exc:
            failed.append(str(exc))

    if await write_if_allowed(mm, turn, "edit", call, write):
        await mm.say(turn, f"fs-write -> {failed[0] if failed else 'wrote ' + path}")


def location(turn: Turn, spec: str) -> dict[str, Any]:
    """PATH[:LINE] as an ACP location (PATH made absolute from the session's cwd)."""
    head, _, tail = spec.rpartition(":")
    path, line = (head, tail) if head and tail.isdigit() else (spec, "")
    where: dict[str, Any] = {"path": os.path.join(turn.session.cwd, path)}
    if line:
        where["line"] = int(line)
    return where


async def locate(
    mm: ScriptedMM, turn: Turn, rest: str, until: Callable[[], Awaitable[None]] | None = None
) -> None:
    specs = rest.split()
    call = mm.new_call(f"Read {specs[0]}", "read", locations=[location(turn, specs[0])])
    call_id = call["toolCallId"]
    await mm.report_call(turn, call)
    for spec in specs[1:]:
        await mm.pause(turn)
        await mm.update(
            turn.session.id,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "in_progress",
                "locations": [location(turn, spec)],
            },
        )
    if until is not None:
        await until()
    await mm.report_end(turn, call_id, "read", False)
    await mm.say(turn, "locate -> done")


EDITS: dict[str, Command] = {
    "/shell-write": shell_write,
    "/ask-write": ask_write,
    "/fs-write": fs_write,
    "/locate": locate,
}
