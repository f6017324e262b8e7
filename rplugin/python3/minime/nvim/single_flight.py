"""One start per key at a time: who asks while it runs awaits the same outcome.

Asks in several cwds at once share one agent (the first starts it), and two asks in one cwd
share one ``session/new``. A waiter is shielded, so cancelling it leaves the start running for
the others; a failure reaches each waiter, which reports it itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SingleFlight(Generic[K, V]):
    def __init__(self) -> None:
        self._running: dict[K, asyncio.Future[V]] = {}

    def running(self, key: K) -> bool:
        return key in self._running

    async def run(self, key: K, start: Callable[[], Awaitable[V]]) -> V:
        pending = self._running.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        self._running[key] = future
        try:
            value = await start()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: each waiter reports it itself
            raise
        finally:
            del self._running[key]
        future.set_result(value)
        return value
