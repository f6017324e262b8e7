"""The library's own threads for sync handlers: bounded, daemon, never waited for.

asyncio's default executor is shared with everything else in the program and is joined when
``asyncio.run`` ends, so one hung sync tool handler delayed a permission prompt and held the
program's exit. Here each kind of handler has its own small pool of daemon threads: a hung
handler holds one of its own threads only, and exit never waits for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any

TOOL_THREADS = 16
PERMISSION_THREADS = 4


class HandlerAborted(Exception):
    """A sync handler raised SystemExit or KeyboardInterrupt: a failed call, not an exit."""


def as_failure(exc: BaseException) -> Exception:
    """Any handler's failure as an Exception (SystemExit must not end the program)."""
    if isinstance(exc, Exception):
        return exc
    text = f"{type(exc).__name__}" + (f": {exc}" if str(exc) else "")
    return HandlerAborted(f"the handler raised {text}")


class DaemonPool:
    """At most ``size`` daemon threads, started on demand, serving one queue."""

    def __init__(self, name: str, size: int) -> None:
        self.name = name
        self.size = size
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        context = contextvars.copy_context()
        self._queue.put((future, context, fn, args))
        with self._lock:
            if self._idle == 0 and self._threads < self.size:
                self._threads += 1
                worker = threading.Thread(
                    target=self._work, name=f"{self.name}-{self._threads}", daemon=True
                )
                worker.start()
            elif self._idle:
                self._idle -= 1  # that waiting thread takes this item
        return future

    def _work(self) -> None:
        while True:
            future, context, fn, args = self._queue.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(context.run(fn, *args))
                except BaseException as exc:  # a handler's SystemExit is its failure
                    future.set_exception(as_failure(exc))
            # An idle thread holds nothing: the last call's arguments may be megabytes.
            del future, context, fn, args
            with self._lock:
                self._idle += 1

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.wrap_future(self.submit(fn, *args))


tool_pool = DaemonPool("minime-tool", TOOL_THREADS)
permission_pool = DaemonPool("minime-permission", PERMISSION_THREADS)
