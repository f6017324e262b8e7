"""A request the agent waits on, answered by the user in a float: permission prompts
(prompts.py) and questions (questions.py) both go this way.

Each gets an id; the turn so far is flushed first (the call that asks shows above the float);
one rpc call opens the float; the answer arrives from Lua on pynvim's thread (``answer``) and is
handed to the request waiting on the ACP loop; a request withdrawn (its turn cancelled) closes
its float.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from .bridge import NvimBridge
from .conversation import Conversation

A = TypeVar("A")


class LuaAsks(Generic[A]):
    """``show`` and ``close`` name the functions of lua/minime/rpc.lua that open a float for a
    payload and close the float of an id."""

    def __init__(
        self,
        bridge: NvimBridge,
        conversation: Conversation,
        call_soon: Callable[..., None],
        show: str,
        close: str,
    ) -> None:
        self._bridge = bridge
        self._conversation = conversation
        self._call_soon = call_soon
        self._show, self._close = show, close
        self._pending: dict[int, concurrent.futures.Future[A]] = {}
        self._ids = itertools.count(1)

    async def ask(self, payload: Callable[[int], Any]) -> A:
        """Open the float for ``payload(id)`` and wait for the user's answer."""
        ask_id = next(self._ids)
        future: concurrent.futures.Future[A] = concurrent.futures.Future()
        self._pending[ask_id] = future
        self._conversation.flush()  # the turn so far (the call that asks) shows first
        self._bridge.rpc(self._show, payload(ask_id))
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self._bridge.rpc(self._close, ask_id)
            raise
        finally:
            self._pending.pop(ask_id, None)

    def answer(self, ask_id: int, answer: A) -> None:
        """Lua's answer (pynvim's thread): handed to the waiting request on the ACP loop."""
        future = self._pending.get(ask_id)
        if future is not None and not future.done():
            self._call_soon(_settle, future, answer)


def _settle(future: concurrent.futures.Future[Any], answer: Any) -> None:
    if not future.done():
        future.set_result(answer)
