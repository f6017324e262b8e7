"""The one owner of "the agent waits on a keystroke": permission prompts (prompts.py) and the
agent's questions (questions.py) go the same way, and each is one of its thread's ``asks``, so
the thread's state (its title, the statusline, the overview) knows both.

Each gets an id (one counter for both kinds); the thread's turn so far is flushed first (the
call that asks shows above the float); one rpc call opens the float; the answer arrives from
Lua on pynvim's thread (``answer``) and is handed to the request waiting on the ACP loop; a
request withdrawn (its turn cancelled) closes its float.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
from collections.abc import Callable
from typing import Any

from .bridge import NvimBridge
from .conversation import Conversation
from .ops import ElicitationReply, PermissionAnswer
from .thread import AskKind, PendingAsk, Thread

# The functions of lua/minime/rpc.lua that open a float of each kind, and close one.
_FLOATS: dict[AskKind, tuple[str, str]] = {
    "permission": ("permission", "permission_close"),
    "question": ("elicitation", "elicitation_close"),
}


class UserAsks:
    def __init__(
        self, bridge: NvimBridge, conversation: Conversation, call_soon: Callable[..., None]
    ) -> None:
        self._bridge = bridge
        self._conversation = conversation
        self._call_soon = call_soon
        # Which thread holds each pending ask: the answer names only the id.
        self._threads: dict[int, Thread] = {}
        self._ids = itertools.count(1)

    async def ask(self, thread: Thread, kind: AskKind, payload: Callable[[int], Any]) -> Any:
        """Open the float for ``payload(id)`` and wait for the user's answer."""
        ask_id = next(self._ids)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        thread.asks[ask_id] = PendingAsk(kind, future)
        self._threads[ask_id] = thread
        thread.changed()
        self._conversation.flush()  # the turn so far (the call that asks) shows first
        show, close = _FLOATS[kind]
        self._bridge.rpc(show, payload(ask_id))
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self._bridge.rpc(close, ask_id)
            raise
        finally:
            thread.asks.pop(ask_id, None)
            self._threads.pop(ask_id, None)
            thread.changed()

    def answer(self, reply: PermissionAnswer | ElicitationReply) -> None:
        """Lua's answer to ask ``reply.id`` (pynvim's thread): handed to the request waiting on
        the ACP loop."""
        self._call_soon(self._settle, reply.id, reply)

    def _settle(self, ask_id: int, answer: Any) -> None:
        thread = self._threads.get(ask_id)
        pending = thread.asks.get(ask_id) if thread is not None else None
        if pending is not None and not pending.future.done():
            pending.future.set_result(answer)
