"""The fake mm's fault commands: what only a test makes mm (or another agent) do.

Added to demo/scripted_mm's script by tests/fake_mm.py; same signature as its commands.

==============================  ================================================================
``/bigline BYTES``              one text chunk of that many characters (``<xxx…>``).
``/deaf``                       says ``deaf``, then ignores session/cancel forever.
``/tool-as SID NAME [JSON]``    ``/tool``, with ``SID`` as ``org.mini-me/sessionId``.
``/call METHOD [JSON]``         a request to any method, read as a tool call's answer.
``/cancel-request ID``          a ``$/cancel_request`` for request ID (JSON), then ``sent``.
``/permission-first CMD``       bash, with request_permission sent before its tool_call.
``/permission-only CMD``        bash known only by its request_permission, then a final
                                tool_call_update without a title (qwen-code's shape).
``/reject-cancels CMD``         bash; a rejection ends the turn with stopReason cancelled.
``/dup-toolcall``               the same tool_call id sent twice, then completed.
``/empty-input``                a tool_call without rawInput, then completed.
``/deep-input N``               a tool_call whose rawInput nests N levels (``{"a": {"a": …}}``,
                                ``"bottom"`` at the end), then completed: ``deep -> done``.
``/terminal``                   a tool_call with terminal content (no terminal capability).
``/client-terminal LINE``       LINE run in the client's terminal (``terminal/create``, sh -c),
                                shown by an in_progress tool_call whose content is that
                                terminal; after ``wait_for_exit`` a ``completed`` update with no
                                content, then ``terminal/release``: ``terminal -> released``.
``/client-terminal-released L``  the same, released first, then ``completed`` naming the
                                terminal again (a released terminal's output is still shown).
``/garbage``                    raw lines: not JSON, an unknown notification, an unknown
                                request, an unknown session/update kind, a response to no
                                request, vendor updates (session_info, usage, commands).
``/badutf8``                    a session/update line that is not UTF-8.
``/big-update BYTES``           an ``available_commands_update`` line of about BYTES bytes.
``/commands [NAME...]``         an ``available_commands_update`` that replaces the list with
                                these (none: an empty list), then ``commands sent``.
``/stderr LINE``                one stderr line.
``/crash [STATUS]``             says ``crashing``, a stderr line, exit STATUS (2).
``/close-stdout``               says ``closing``, closes stdout and lives on (never answers).
``/pid``                        says ``pid <pid> pgid <pgid>``.
``/spawn-child``                starts ``sleep 1000`` in mm's process group: ``child <pid>``.
``/disk-write PATH TEXT``       an edit tool of its own: writes TEXT (and a newline) to PATH
                                (relative to the session's cwd) on disk, reported as a
                                completed ``edit: PATH`` call.
``/ask-write PATH TEXT``        claude-agent-acp's Write: a tool_call with PATH in its
                                locations and a diff, a permission request, then TEXT (and a
                                newline) written to PATH on disk by the agent itself.
``/shell-write PATH TEXT``      a shell command that writes: ``bash: sh -c …``, a permission
                                request naming no file, then TEXT (and a newline) written to
                                PATH on disk (missing: created; TEXT ``-``: PATH deleted).
                                In both, ``\\n`` in TEXT is a line break.
==============================  ================================================================
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scripted_mm.agent import Turn
from scripted_mm.client_tools import SESSION_META, json_text, truncate
from scripted_mm.config import log
from scripted_mm.script import Command, commands_update, split_args, tool_line
from scripted_mm.wire import CANCEL_REQUEST

if TYPE_CHECKING:
    from fake_mm import FakeMM


def bigline_text(size: int) -> str:
    if size <= 2:
        return "x" * size
    return "<" + "x" * (size - 2) + ">"


async def _bigline(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, bigline_text(int(rest)))


async def _deaf(mm: FakeMM, turn: Turn, rest: str) -> None:
    turn.session.deaf = True
    await mm.say(turn, "deaf")
    await asyncio.Event().wait()


async def _tool_as(mm: FakeMM, turn: Turn, rest: str) -> None:
    session_id, _, rest = rest.partition(" ")
    await tool_line(mm, turn, rest, session_id)


async def _call(mm: FakeMM, turn: Turn, rest: str) -> None:
    method, args = split_args(rest)
    params = {**(args if isinstance(args, dict) else {}), "_meta": {SESSION_META: turn.session.id}}
    read, _failed = await mm.invoke(method, params)
    await mm.say(turn, f"{method} -> {truncate(read, mm.config.max_output)}")


async def _cancel_request(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.wire.notify(CANCEL_REQUEST, {"requestId": json.loads(rest)})
    await mm.say(turn, "sent")


async def _permission_first(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.bash(turn, rest or "ls", permission_first=True)


async def _permission_only(mm: FakeMM, turn: Turn, rest: str) -> None:
    command = rest or "ls"
    call_id = f"call_{next(mm.call_ids)}"
    call = {"toolCallId": call_id, "title": f"bash: {command}", "kind": "execute"}
    ok = await mm.allowed(turn, "bash", {**call, "status": "pending"})
    await mm.report_end(
        turn, call_id, f"ran: {command}" if ok else "[bash rejected by user]", not ok
    )
    await mm.say(turn, "bash -> " + ("ran" if ok else "rejected"))


async def _reject_cancels(mm: FakeMM, turn: Turn, rest: str) -> str | None:
    return None if await mm.bash(turn, rest or "rm -rf build") else "cancelled"


async def _dup_toolcall(mm: FakeMM, turn: Turn, rest: str) -> None:
    call_id = f"call_{next(mm.call_ids)}"
    first = {"toolCallId": call_id, "title": "bash: first", "kind": "execute", "status": "pending"}
    await mm.report_call(turn, {**first, "rawInput": {"command": "first"}})
    second = {**first, "title": "bash: second", "status": "in_progress"}
    await mm.report_call(turn, {**second, "rawInput": {"command": "second"}})
    await mm.report_end(turn, call_id, "dup done", False)
    await mm.say(turn, "dup -> dup done")


async def _empty_input(mm: FakeMM, turn: Turn, rest: str) -> None:
    call_id = f"call_{next(mm.call_ids)}"
    call = {"toolCallId": call_id, "title": "read: somewhere", "kind": "read", "status": "pending"}
    await mm.report_call(turn, call)
    await mm.report_end(turn, call_id, "read nothing", False)
    await mm.say(turn, "empty -> read nothing")


async def _deep_input(mm: FakeMM, turn: Turn, rest: str) -> None:
    call_id = f"call_{next(mm.call_ids)}"
    nested: Any = "bottom"
    for _ in range(int(rest)):
        nested = {"a": nested}
    call = {"toolCallId": call_id, "title": "deep: input", "kind": "other", "status": "pending"}
    await mm.report_call(turn, {**call, "rawInput": nested})
    await mm.report_end(turn, call_id, "done", False)
    await mm.say(turn, "deep -> done")


async def _terminal(mm: FakeMM, turn: Turn, rest: str) -> None:
    call_id = f"call_{next(mm.call_ids)}"
    call = {
        "toolCallId": call_id,
        "title": "bash: make",
        "kind": "execute",
        "status": "in_progress",
        "rawInput": {"command": "make"},
        "content": [{"type": "terminal", "terminalId": "term-1"}],
    }
    await mm.report_call(turn, call)
    await mm.report_end(turn, call_id, "made", False)
    await mm.say(turn, "terminal -> made")


async def _client_terminal(mm: FakeMM, turn: Turn, rest: str, release_first: bool = False) -> None:
    sid = turn.session.id
    created = await mm.wire.request(
        "terminal/create", {"sessionId": sid, "command": "/bin/sh", "args": ["-c", rest]}
    )
    terminal = {"sessionId": sid, "terminalId": created["terminalId"]}
    call_id = f"call_{next(mm.call_ids)}"
    call = {"toolCallId": call_id, "title": f"bash: {rest}", "kind": "execute"}
    content = [{"type": "terminal", "terminalId": created["terminalId"]}]
    await mm.report_call(turn, {**call, "status": "in_progress", "content": content})
    await mm.wire.request("terminal/wait_for_exit", terminal)
    done = {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "completed"}
    if release_first:
        await mm.wire.request("terminal/release", terminal)
        await mm.update(sid, {**done, "content": content})
    else:
        await mm.update(sid, done)
        await mm.wire.request("terminal/release", terminal)
    await mm.say(turn, "terminal -> released")


async def _client_terminal_released(mm: FakeMM, turn: Turn, rest: str) -> None:
    await _client_terminal(mm, turn, rest, release_first=True)


async def _garbage(mm: FakeMM, turn: Turn, rest: str) -> None:
    sid = turn.session.id

    def update(body: dict[str, Any]) -> bytes:
        message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid}}
        message["params"]["update"] = body
        return json_text(message).encode()

    lines = [
        b"this is not JSON {",
        json_text({"jsonrpc": "2.0", "method": "qwen/notify/x", "params": {"a": 1}}).encode(),
        json_text({"jsonrpc": "2.0", "id": "odd-1", "method": "qwen/ask", "params": {}}).encode(),
        json_text({"jsonrpc": "2.0", "id": 987654321, "result": {"late": True}}).encode(),
        update({"sessionUpdate": "weird_kind", "payload": [1, 2, 3]}),
        update({"sessionUpdate": "session_info_update", "title": "A title"}),
        update({"sessionUpdate": "usage_update", "used": 1200, "size": 32000}),
        update(
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [{"name": "init", "description": "x" * 1000}] * 50,
            }
        ),
    ]
    for line in lines:
        await mm.wire.raw(line)
    await mm.say(turn, "after garbage")


async def _badutf8(mm: FakeMM, turn: Turn, rest: str) -> None:
    head = json_text(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": turn.session.id,
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "@BAD@"},
                },
            },
        }
    ).encode()
    await mm.wire.raw(head.replace(b"@BAD@", b"bad \xff\xfe bytes"))
    await mm.say(turn, "after badutf8")


async def _big_update(mm: FakeMM, turn: Turn, rest: str) -> None:
    count = max(1, int(rest) // 1024)
    commands = [{"name": f"cmd{i}", "description": "d" * 1000} for i in range(count)]
    body = {"sessionUpdate": "available_commands_update", "availableCommands": commands}
    await mm.update(turn.session.id, body)
    await mm.say(turn, "after big-update")


async def _commands(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.update(turn.session.id, commands_update(rest.split()))
    await mm.say(turn, "commands sent")


async def _stderr(mm: FakeMM, turn: Turn, rest: str) -> None:
    log(rest)


async def _crash(mm: FakeMM, turn: Turn, rest: str) -> None:
    status = int(rest or 2)
    await mm.say(turn, "crashing")
    log(f"panic: fake crash (exit status {status})")
    os._exit(status)


async def _close_stdout(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, "closing")
    mm.wire.writer.close()
    with contextlib.suppress(OSError):
        os.close(1)
    await asyncio.Event().wait()


async def _pid(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, f"pid {os.getpid()} pgid {os.getpgid(0)}")


async def _spawn_child(mm: FakeMM, turn: Turn, rest: str) -> None:
    child = subprocess.Popen(
        ["sleep", "1000"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    mm.children.append(child)
    await mm.say(turn, f"child {child.pid}")


async def _disk_write(mm: FakeMM, turn: Turn, rest: str) -> None:
    path, _, text = rest.partition(" ")
    call_id = f"call_{next(mm.call_ids)}"
    call = {"toolCallId": call_id, "title": f"edit: {path}", "kind": "edit", "status": "pending"}
    await mm.report_call(turn, call)
    with open(os.path.join(turn.session.cwd, path), "w") as out:
        out.write(text + "\n")
    await mm.report_end(turn, call_id, f"wrote {path}", False)
    await mm.say(turn, f"edit -> wrote {path}")


def write_args(turn: Turn, rest: str) -> tuple[str, str, str]:
    """PATH TEXT (``\\n`` a line break): the path, its full path, the text with its newline."""
    path, _, text = rest.partition(" ")
    return path, os.path.join(turn.session.cwd, path), text.replace("\\n", "\n") + "\n"


async def write_if_allowed(
    mm: FakeMM,
    turn: Turn,
    key: str,
    call: dict[str, Any],
    write: Callable[[], None],
    asked: dict[str, Any] | None = None,
) -> bool:
    """Report ``call``, ask permission for it (as ``asked`` names it, else as it is), then
    ``write`` (what the tool does on disk)."""
    await mm.report_call(turn, call)
    if not await mm.allowed(turn, key, call if asked is None else asked):
        await mm.report_end(turn, call["toolCallId"], f"[{key} rejected by user]", True)
        return False
    write()
    await mm.report_end(turn, call["toolCallId"], f"done: {call['title']}", False)
    return True


def write_file(full: str, text: str) -> Callable[[], None]:
    return lambda: Path(full).write_text(text)


def edit_call(mm: FakeMM, title: str, full: str, **fields: Any) -> dict[str, Any]:
    """An agent's own edit tool's ``tool_call``, its file (``full``) in its locations."""
    return {
        "toolCallId": f"call_{next(mm.call_ids)}",
        "title": title,
        "kind": "edit",
        "status": "pending",
        "locations": [{"path": full}],
        **fields,
    }


async def _ask_write(mm: FakeMM, turn: Turn, rest: str) -> None:
    path, full, text = write_args(turn, rest)
    old = None
    with contextlib.suppress(OSError), open(full) as f:
        old = f.read()
    call = edit_call(
        mm,
        f"Write {path}",
        full,
        content=[{"type": "diff", "path": full, "oldText": old, "newText": text}],
        rawInput={"file_path": full, "content": text},
    )
    if await write_if_allowed(mm, turn, "write", call, write_file(full, text)):
        await mm.say(turn, f"write -> wrote {path}")


async def _shell_write(mm: FakeMM, turn: Turn, rest: str) -> None:
    path, full, text = write_args(turn, rest)
    command = f"sh -c 'printf %s {text!r} > {path}'"
    call = {
        "toolCallId": f"call_{next(mm.call_ids)}",
        "title": f"bash: {command}",
        "kind": "execute",
        "status": "pending",
        "rawInput": {"command": command},
    }
    write = (lambda: os.remove(full)) if text == "-\n" else write_file(full, text)
    if await write_if_allowed(mm, turn, "bash", call, write):
        await mm.say(turn, "bash -> ran")


FAULTS: dict[str, Command] = {
    "/bigline": _bigline,
    "/deaf": _deaf,
    "/tool-as": _tool_as,
    "/call": _call,
    "/cancel-request": _cancel_request,
    "/permission-first": _permission_first,
    "/permission-only": _permission_only,
    "/reject-cancels": _reject_cancels,
    "/dup-toolcall": _dup_toolcall,
    "/empty-input": _empty_input,
    "/deep-input": _deep_input,
    "/terminal": _terminal,
    "/client-terminal": _client_terminal,
    "/client-terminal-released": _client_terminal_released,
    "/garbage": _garbage,
    "/badutf8": _badutf8,
    "/big-update": _big_update,
    "/commands": _commands,
    "/stderr": _stderr,
    "/crash": _crash,
    "/close-stdout": _close_stdout,
    "/pid": _pid,
    "/spawn-child": _spawn_child,
    "/disk-write": _disk_write,
    "/ask-write": _ask_write,
    "/shell-write": _shell_write,
}
