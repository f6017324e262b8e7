"""Questions from the agent (elicitation/create) answered in the editor: a float
(lua/minime/ui/elicitation.lua) per question. Answers arrive from Lua on pynvim's thread; the
request waits on the ACP loop. A withdrawn question (the turn cancelled) closes its float.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
from collections.abc import Callable
from typing import Any

from ..elicitations import DECLINE, ElicitationAnswer, ElicitationRequest
from .ops import ElicitationReply
from .wire_text import clean, clean_all


class Questions:
    def __init__(
        self,
        lua: Callable[..., None],
        before_question: Callable[[], None],
        call_soon: Callable[..., None],
    ) -> None:
        self._lua = lua
        self._before_question = before_question
        self._call_soon = call_soon
        self._pending: dict[int, concurrent.futures.Future[Any]] = {}
        self._ids = itertools.count(1)

    async def ask(self, request: ElicitationRequest, cwd: str) -> ElicitationAnswer:
        question_id = next(self._ids)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._pending[question_id] = future
        self._before_question()  # the turn so far (the call that asks) shows first
        self._lua(
            "require('minime.rpc').elicitation(...)",
            {
                "id": question_id,
                "cwd": cwd,
                "session_id": request.session_id,
                "message": clean(request.message),
                "fields": _fields(request.schema),
            },
        )
        try:
            reply: ElicitationReply = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self._lua("require('minime.rpc').elicitation_close(...)", question_id)
            raise
        finally:
            self._pending.pop(question_id, None)
        if reply.action == "accept":
            return ElicitationAnswer(action="accept", content=reply.content or {})
        if reply.action == "cancel":
            return ElicitationAnswer(action="cancel")
        return DECLINE

    def answer(self, reply: ElicitationReply) -> None:
        """Lua's answer (pynvim's thread): hand it to the waiting request on the ACP loop."""
        future = self._pending.get(reply.id)
        if future is not None and not future.done():
            self._call_soon(_settle, future, reply)


def _fields(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The form's properties in the agent's order (a Lua table would lose it), each with its
    name and whether it is required."""
    required = schema.get("required") or []
    properties = schema.get("properties") or {}
    return [
        {**clean_all(prop, 1), "name": clean(name), "required": name in required}
        for name, prop in properties.items()
        if isinstance(prop, dict)
    ]


def _settle(future: concurrent.futures.Future[Any], reply: Any) -> None:
    if not future.done():
        future.set_result(reply)
