"""Every thread the host knows, by the id Lua gave it, by its session's id and by its cwd (the
cwd only indexes threads), and what Lua is told of each (``rpc.thread_update``).

A thread is made the first time an operation names it (Lua mints the ids: `:MiniMeNew` then
`:MiniMeAsk` at once must reach the new thread). Its state goes to Lua at the loop's next turn
after it changed — once however many changes that turn made, after the conversation's own
batch of that turn (render.py flushes a turn's end with call_soon too), and only when what Lua
would be told differs from what it was told last: four threads streaming send nothing.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

from .bridge import NvimBridge
from .events import ThreadState
from .thread import Thread
from .wire_text import clean


class Threads:
    def __init__(self, bridge: NvimBridge) -> None:
        self._bridge = bridge
        self._by_id: dict[str, Thread] = {}
        self._told: dict[str, ThreadState] = {}
        self._due: dict[str, Thread] = {}

    def get(self, thread_id: str, cwd: str) -> Thread:
        """Thread ``thread_id``, made (working in ``cwd``, its real path) if it is new."""
        found = self._by_id.get(thread_id)
        if found is None:
            found = self._by_id[thread_id] = Thread(thread_id, os.path.realpath(cwd), self)
        return found

    def find(self, thread_id: str) -> Thread | None:
        return self._by_id.get(thread_id)

    def __iter__(self) -> Iterator[Thread]:
        return iter(list(self._by_id.values()))

    def __len__(self) -> int:
        return len(self._by_id)

    def of_session(self, session_id: str) -> Thread | None:
        """The thread whose session is ``session_id``."""
        for found in self._by_id.values():
            if found.session is not None and found.session.session_id == session_id:
                return found
        return None

    def in_cwd(self, cwd: str) -> list[Thread]:
        """The threads working in ``cwd`` (a real path), oldest first."""
        return [found for found in self._by_id.values() if found.cwd == cwd]

    def with_sessions(self) -> list[Thread]:
        return [found for found in self._by_id.values() if found.session is not None]

    def forget(self, thread: Thread) -> None:
        """The thread is closed: Lua is told, and nothing names it any more."""
        self._by_id.pop(thread.id, None)
        self._due.pop(thread.id, None)
        self._told.pop(thread.id, None)
        gone = ThreadState(id=thread.id, cwd=clean(thread.cwd), closed=True)
        self._bridge.rpc("thread_update", gone)

    # -- what Lua is told (thread.StateWatcher) -----------------------------------------------

    def changed(self, thread: Thread) -> None:
        if self._by_id.get(thread.id) is not thread:  # closed: Lua was told it is gone
            return
        if not self._due:
            asyncio.get_running_loop().call_soon(self._publish)
        self._due[thread.id] = thread

    def _publish(self) -> None:
        due, self._due = self._due, {}
        for thread in due.values():
            state = state_of(thread)
            told = self._told.get(thread.id)
            if told is not None and _same(told, state):
                continue
            self._told[thread.id] = state
            self._bridge.rpc("thread_update", state)


def state_of(thread: Thread) -> ThreadState:
    session = thread.session
    return ThreadState(
        id=thread.id,
        cwd=clean(thread.cwd),
        agent=clean(thread.agent),
        label=clean(thread.label),
        title=clean(thread.title),
        state=thread.state,
        waiting=thread.waits_for if thread.state == "waiting" else None,
        session_id=clean(session.session_id) if session is not None else None,
        last_activity=thread.last_activity,
    )


def _same(a: ThreadState, b: ThreadState) -> bool:
    """Equal but for the time: a change of nothing else is not worth a call."""
    return (a.agent, a.label, a.title, a.state, a.waiting, a.session_id, a.cwd) == (
        b.agent,
        b.label,
        b.title,
        b.state,
        b.waiting,
        b.session_id,
        b.cwd,
    )
