"""Closing a thread (:MiniMeThreads' ``x``) or deleting its session for good (``d``): what
runs or waits in it ends first (its queued asks dropped, an ask waiting for the agent ended,
the running turn cancelled and its end drawn), then ``session/close`` where the agent offers
it (else the session is only forgotten here) or ``session/delete``; the thread is forgotten,
and its agent ends when no other thread uses it. Another thread's turn is never touched.
"""

from __future__ import annotations

import logging

from ..errors import Error
from . import ops
from .agent_pool import AgentPool
from .bridge import NvimBridge
from .session_modes import SessionModes
from .thread import Thread
from .thread_registry import Threads
from .turns import Turns

log = logging.getLogger("minime")


class ThreadCloser:
    def __init__(
        self,
        bridge: NvimBridge,
        threads: Threads,
        turns: Turns,
        pool: AgentPool,
        modes: SessionModes,
    ) -> None:
        self._bridge = bridge
        self._threads = threads
        self._turns = turns
        self._pool = pool
        self._modes = modes

    async def close(self, payload: ops.CloseThread) -> None:
        thread = self._threads.get(payload.thread, payload.cwd)
        name = describe(thread)
        session, client = thread.session, thread.client
        offered = (client.agent_capabilities.get("sessionCapabilities") or {}) if client else {}
        if payload.action == "delete" and session is not None and "delete" not in offered:
            self._bridge.notify(
                f"minime: {thread.label or 'the agent'} cannot delete sessions (session/delete);"
                " x closes the thread",
                "warn",
            )
            return
        thread.queue.clear()  # the thread goes: its waiting asks with it
        self._turns.end_waiting(thread, "cancelled")
        await thread.ready.cancel()
        await self._turns.end_turn(thread)
        session, client = thread.session, thread.client
        done = "closed"
        if session is not None and client is not None:
            done = await self._end_session(thread, payload.action, "close" in offered)
            self._modes.publish(thread, None)
        thread.lost_session()
        self._threads.forget(thread)
        self._pool.end_unused()
        self._bridge.notify(f"minime: thread {name} {done}", "info")

    async def _end_session(self, thread: Thread, action: str, can_close: bool) -> str:
        """``session/delete`` or ``session/close`` (else forgotten here); how it went, in
        words for the message."""
        session, client = thread.session, thread.client
        assert session is not None and client is not None
        try:
            if action == "delete":
                await client.delete_session(session.session_id)
                return "closed, its session deleted"
            if can_close:
                await client.close_session(session.session_id)
                return "closed"
        except Error as exc:
            log.warning("session/%s of thread %s failed: %s", action, thread.id, exc)
            client.forget(session)
            return f"closed (the agent did not {action} its session: {exc})"
        client.forget(session)
        return "closed"


def describe(thread: Thread) -> str:
    """How messages name a thread: its agent and title (``claude · refactor parser``)."""
    parts = [thread.label or thread.agent or "agent"]
    if thread.title:
        parts.append(thread.title)
    return " · ".join(parts)
