"""One start per key at a time: who asks while it runs awaits the same outcome.

Asks in several cwds at once share one agent (the first starts it), and two asks in one cwd
share one ``session/new``. The start runs in its own task and every caller (the first too) only
waits for it, so cancelling a caller (an ask dropped by :MiniMeCancel) leaves the start running
for the others and the next ask. ``cancel_all`` (:MiniMeStop) ends the starts themselves: their
callers get :class:`StartCancelled`. A failure reaches each caller, which reports it itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from ..errors import Error

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class StartCancelled(Error):
    """The start a caller waited for was ended (``cancel_all``), not failed."""

    def __init__(self) -> None:
        super().__init__("the agent was stopped while it started (:MiniMeStop)")


class SingleFlight(Generic[K, V]):
    def __init__(self) -> None:
        self._running: dict[K, asyncio.Task[V]] = {}

    def running(self, key: K) -> bool:
        return key in self._running

    async def run(self, key: K, start: Callable[[], Awaitable[V]]) -> V:
        task = self._running.get(key)
        if task is None:
            task = asyncio.ensure_future(start())
            self._running[key] = task
            task.add_done_callback(lambda done: self._ended(key, done))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled() and not _cancelling():
                raise StartCancelled() from None  # the start was ended, not this caller
            raise

    def _ended(self, key: K, task: asyncio.Task[V]) -> None:
        if self._running.get(key) is task:
            del self._running[key]
        if not task.cancelled():
            task.exception()  # retrieved: each caller reports it itself (or nobody waits)

    async def cancel_all(self) -> None:
        """End every start now and wait until each has cleaned up (its process ended)."""
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _cancelling() -> bool:
    """Whether the current task itself is being cancelled (not only what it awaited)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
