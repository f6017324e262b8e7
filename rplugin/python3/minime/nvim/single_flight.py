"""Start once: who asks while a start runs awaits the same outcome.

Two guards are built on it: a cwd's session made ready (workspace.py: two asks, or a warm-up
and an ask, share one ``session/new``), and an agent started (agent_pool.py: asks in several
cwds share one process). The start runs in its own task and every caller (the first too) only
waits for it, so cancelling a caller (an ask dropped by :MiniMeCancel) leaves the start running
for the others and the next ask. ``cancel`` (:MiniMeStop) ends the start itself: its callers
get :class:`StartCancelled`. A failure reaches each caller, which reports it itself.

``cancel`` is not a coroutine: the start is let go of when it is called, before its caller's
next await, and only its clean-up is awaited. An ask that arrives while :MiniMeStop waits for
that clean-up starts anew; it once joined the start being ended (or the session being closed),
and about one run in three lost what the stop was for (setup's new options: no editor tools).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from ..errors import Error

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class StartCancelled(Error):
    """The start a caller waited for was ended (``cancel``), not failed."""

    def __init__(self) -> None:
        super().__init__("the agent was stopped while it started (:MiniMeStop)")


class Once(Generic[V]):
    """One start at a time; the next ``run`` after it ended starts again."""

    def __init__(self, on_end: Callable[[], object] = lambda: None) -> None:
        self._task: asyncio.Task[V] | None = None
        self._on_end = on_end

    def running(self) -> bool:
        return self._task is not None

    async def run(self, start: Callable[[], Awaitable[V]]) -> V:
        task = self._task
        if task is None:
            task = self._task = asyncio.ensure_future(start())
            task.add_done_callback(self._ended)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled() and not _cancelling():
                raise StartCancelled() from None  # the start was ended, not this caller
            raise

    def _ended(self, task: asyncio.Task[V]) -> None:
        if self._task is task:
            self._task = None
            self._on_end()
        if not task.cancelled():
            task.exception()  # retrieved: each caller reports it itself (or nobody waits)

    def cancel(self) -> Awaitable[object]:
        """End the start now: the next ``run`` starts anew at once. Returns what to await for
        its clean-up (its process ended)."""
        task, self._task = self._task, None
        if task is None:
            return asyncio.gather()  # nothing to wait for
        self._on_end()
        task.cancel()
        return asyncio.gather(task, return_exceptions=True)


class SingleFlight(Generic[K, V]):
    """A :class:`Once` per key (the agents: one per argv, env and discovery)."""

    def __init__(self) -> None:
        self._running: dict[K, Once[V]] = {}

    def running(self, key: K) -> bool:
        return key in self._running

    async def run(self, key: K, start: Callable[[], Awaitable[V]]) -> V:
        once = self._running.get(key)
        if once is None:
            once = self._running[key] = Once(lambda: self._running.pop(key, None))
        return await once.run(start)

    def cancel_all(self) -> Awaitable[object]:
        """End every start now (see Once.cancel); what to await for their clean-ups."""
        return asyncio.gather(*(once.cancel() for once in list(self._running.values())))


def _cancelling() -> bool:
    """Whether the current task itself is being cancelled (not only what it awaited)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
