"""The fake mm's parts for the rewind's tests: a write through the client's file system, and
(``fake: fork: true``) sessions it forks at a message, as claude-agent-acp and codex-acp do.

Added to the script by tests/fake_mm.py beside fake_mm_faults' commands; same signature.

==============================  ================================================================
``/fs-write PATH TEXT``         ``fs/write_text_file`` of TEXT (and a newline; ``\\n`` a line
                                break) to PATH (relative to the session's cwd), shown as an
                                ``edit: PATH`` call naming the file: ``fs -> <the answer>``.
``/history``                    ``history: <ask> | <ask> …``: the asks this session holds
                                before this one (a fork's: those up to its fork point), each
                                cut to 40 characters. With ``fork`` only.
==============================  ================================================================

With ``fake: fork: true`` it advertises ``sessionCapabilities.fork``; each turn's chunks carry
a ``messageId`` (``m<turn>``); ``session/fork`` reads the fork point from
``_meta.jetbrains.air.fork.messageId`` and the new session holds the asks up to and with the
turn of that message (an unknown id: ``Invalid params``; no fork point: all of them).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from scripted_mm import wire
from scripted_mm.agent import Turn, new_session_id
from scripted_mm.edits import write_args
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


class Forks:
    """What a forking fake keeps: each session's asks and the message id of each turn."""

    def __init__(self) -> None:
        self.asks: dict[str, list[tuple[str, str]]] = {}  # session -> [(ask, message id)]
        self.current: dict[str, str] = {}  # session -> the running turn's message id
        self._ids = itertools.count(1)

    def begin(self, session_id: str, ask: str) -> None:
        message_id = f"m{next(self._ids)}"
        self.current[session_id] = message_id
        self.asks.setdefault(session_id, []).append((ask, message_id))

    def tag(self, session_id: str, update: dict[str, Any]) -> dict[str, Any]:
        if update.get("sessionUpdate") == "agent_message_chunk" and session_id in self.current:
            return {**update, "messageId": self.current[session_id]}
        return update

    async def fork(self, mm: FakeMM, params: dict[str, Any]) -> dict[str, Any]:
        source = params.get("sessionId")
        if source not in mm.sessions:
            raise wire.GoError(f"unknown session {source}")
        asks = list(self.asks.get(source, []))
        point = (((params.get("_meta") or {}).get("jetbrains") or {}).get("air") or {}).get("fork")
        if isinstance(point, dict):
            ids = [message_id for _, message_id in asks]
            if point.get("messageId") not in ids:
                raise wire.RpcError(-32602, "Invalid params", {"messageId": point.get("messageId")})
            asks = asks[: ids.index(point["messageId"]) + 1]
        session_id = new_session_id()
        await mm._open(session_id, params["cwd"])
        self.asks[session_id] = list(asks)
        return {"sessionId": session_id}


async def _history(mm: FakeMM, turn: Turn, rest: str) -> None:
    asks = mm.forks.asks.get(turn.session.id, [])[:-1]
    await mm.say(turn, "history: " + " | ".join(ask[:40] for ask, _ in asks))


REWIND: dict[str, Command] = {"/fs-write": _fs_write, "/history": _history}
