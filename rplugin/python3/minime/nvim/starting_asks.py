"""Asks accepted while their agent or session still starts (spawn, ``initialize``,
``session/new``, the session's mode): at most one per cwd, until its prompt goes.

Why: between the ask and its first prompt nothing is "busy" in the session yet, so without this
a :MiniMeStop missed an agent still starting, a :MiniMeCancel waited for the whole start, and a
second ask in the cwd ran beside the first. Each waiting ask can be ended at once — cancelled
or stopped — and says so itself; the start it waited for is the pool's business
(single_flight.py: a cancel leaves it running for the next ask, a stop ends it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Generic, TypeVar

from ..errors import Error

V = TypeVar("V")


class Waiting(Generic[V]):
    """One ask waiting for its session. ``ended``: None, or why it was given up."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.ended: str | None = None
        self._task: asyncio.Future[V] | None = None

    async def wait(self, work: Awaitable[V]) -> V | None:
        """What ``work`` gives, or None once the ask was ended (whatever the start did then).
        A start's failure is raised only while the ask still waits for it."""
        self._task = asyncio.ensure_future(work)
        try:
            value = await self._task
        except asyncio.CancelledError:
            if self.ended is None:  # this ask's own task is being cancelled
                raise
            return None
        except Error:
            if self.ended is not None:
                return None
            raise
        return None if self.ended is not None else value

    def end(self, why: str) -> bool:
        """Give the ask up now (``cancelled``, ``stopped``); False if it already ended."""
        if self.ended is not None:
            return False
        self.ended = why
        if self._task is not None:
            self._task.cancel()
        return True


class StartingAsks(Generic[V]):
    """The waiting ask of each cwd."""

    def __init__(self) -> None:
        self._by_cwd: dict[str, Waiting[V]] = {}

    def get(self, cwd: str) -> Waiting[V] | None:
        return self._by_cwd.get(cwd)

    def all(self) -> list[Waiting[V]]:
        return list(self._by_cwd.values())

    def begin(self, cwd: str) -> Waiting[V]:
        waiting: Waiting[V] = Waiting(cwd)
        self._by_cwd[cwd] = waiting
        return waiting

    def finish(self, waiting: Waiting[V]) -> None:
        if self._by_cwd.get(waiting.cwd) is waiting:
            del self._by_cwd[waiting.cwd]
