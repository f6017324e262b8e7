"""The thread bridge: the only place the ACP loop touches the ``nvim`` object.

pynvim's object belongs to pynvim's thread; the ACP loop runs in another (loop_thread.py). So
every call goes to pynvim's thread (``_on_pynvim_thread``): fire-and-forget Lua (``lua``), or
Lua whose answer the loop awaits without ever blocking pynvim's thread (``lua_call``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable
from typing import Any

import msgspec

from .wire_text import clean

log = logging.getLogger("minime")


class NvimBridge:
    def __init__(self, nvim: Any) -> None:
        self.nvim = nvim

    def _exec_lua(self, code: str, args: tuple[Any, ...], **kwargs: Any) -> Any:
        """``nvim_exec_lua`` straight on pynvim's Session: ``Nvim.exec_lua`` walks every
        argument and every answer item by item in Python (pynvim.api.common.walk, to swap
        Buffer/Window objects for their msgpack form and back), and what crosses here is plain
        data (msgspec.to_builtins; Lua's values): per element of a batch of events or of a
        tool's answer, a Python call for nothing, on the path of every call.
        tests/test_bridge.py fails if a pynvim lacks it."""
        return self.nvim._session.request("nvim_exec_lua", code, list(args), **kwargs)

    def lua(self, code: str, *args: Any) -> None:
        """Fire-and-forget Lua on pynvim's thread."""
        self._on_pynvim_thread(lambda: self._exec_lua(code, args, async_=True))

    async def lua_call(self, code: str, *args: Any) -> Any:
        """Lua whose answer the ACP loop needs (editor tools): awaited, never blocking pynvim."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            if future.cancelled():
                return
            try:
                future.set_result(self._exec_lua(code, args))
            except Exception as exc:  # surfaced to the tool call as its error
                future.set_exception(exc)

        self._on_pynvim_thread(run)
        return await asyncio.wrap_future(future)

    def _on_pynvim_thread(self, fn: Callable[[], Any]) -> None:
        """``fn`` on pynvim's thread, in a greenlet (it may make requests): what
        ``nvim.async_call`` does, but that one formats the caller's stack at every call for
        an error message (traceback.format_stack: 50-190 µs, on the path of every editor tool
        call and every flush; pynvim 0.6). Its Session's public ``threadsafe_call`` is reached
        through ``Nvim._session``: tests/test_bridge.py fails if a pynvim lacks it."""
        self.nvim._session.threadsafe_call(self._logged, fn)

    @staticmethod
    def _logged(fn: Callable[[], Any]) -> None:
        try:
            fn()
        except Exception:  # pynvim's threadsafe_call drops it silently
            log.exception("a call on pynvim's thread failed")

    def rpc(self, name: str, *args: Any) -> None:
        """``require('minime.rpc')[name](...)``, fire-and-forget."""
        self.lua(f"require('minime.rpc').{name}(...)", *msgspec.to_builtins(args))

    async def rpc_call(self, name: str, *args: Any) -> Any:
        """``return require('minime.rpc')[name](...)``, its answer awaited."""
        return await self.lua_call(f"return require('minime.rpc').{name}(...)", *args)

    def notify(self, message: str, level: str = "error") -> None:
        """A message for the user (``vim.notify`` through the Lua layer)."""
        self.rpc("notify", clean(message), level)
