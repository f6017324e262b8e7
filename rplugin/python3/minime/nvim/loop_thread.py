"""The ACP side runs on its own asyncio loop in a second thread.

Only pynvim's thread may touch the ``nvim`` object, and it must never wait on ACP: in request
mode mm asks ``_org.mini-me/tools/list`` before it answers ``session/new``, and that answer
needs the pynvim thread (design.md, "Threads").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any


class LoopThread:
    def __init__(self, name: str = "minime-acp") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        """Schedule ``coro`` on the ACP loop; never wait on the result from pynvim's thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call_soon(self, fn: Any, *args: Any) -> None:
        self.loop.call_soon_threadsafe(fn, *args)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
