"""Questions from the agent (elicitation/create) answered in the editor: a float
(lua/minime/ui/elicitation.lua) per question. Answers arrive from Lua on pynvim's thread; the
request waits on the ACP loop. A withdrawn question (the turn cancelled) closes its float.
"""

from __future__ import annotations

from typing import Any

from ..elicitations import DECLINE, ElicitationAnswer, ElicitationRequest
from .conversation import Conversation
from .events import Question
from .ops import ElicitationReply
from .thread import Thread
from .user_asks import UserAsks
from .wire_text import clean, clean_all


class Questions:
    def __init__(self, asks: UserAsks, conversation: Conversation) -> None:
        self._asks = asks
        self._conversation = conversation  # a line keeps the question and its answer

    async def ask(self, request: ElicitationRequest, thread: Thread) -> ElicitationAnswer:
        def question(question_id: int) -> Question:
            return Question(
                id=question_id,
                thread=thread.id,
                cwd=thread.cwd,
                session_id=request.session_id,
                message=clean(request.message),
                fields=_fields(request.schema),
            )

        reply: ElicitationReply = await self._asks.ask(thread, "question", question)
        # A line of the conversation keeps the question and its answer (the float goes).
        self._conversation.notice(thread, f"question: {request.message} — {_answered(reply)}")
        if reply.action == "accept":
            return ElicitationAnswer(action="accept", content=reply.content or {})
        if reply.action == "cancel":
            return ElicitationAnswer(action="cancel")
        return DECLINE


def _answered(reply: ElicitationReply) -> str:
    """The answer in words: the values given, or that there was none."""
    if reply.action != "accept":
        return "declined" if reply.action == "decline" else "no answer (cancelled)"
    values = [v for v in (reply.content or {}).values() if v not in (None, "", [])]
    shown = ", ".join(", ".join(map(str, v)) if isinstance(v, list) else str(v) for v in values)
    return "you answered: " + (clean(shown)[:200] if shown else "(nothing)")


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
