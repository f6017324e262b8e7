"""Questions from the agent (ACP ``elicitation/create``, form mode): the request the caller's
``on_elicitation`` receives and the answer it gives.

Claude's adapter offers its AskUserQuestion tool only to a client that advertises
``elicitation.form``; the question is one enum field (``question_0``) and an optional "Other"
text (``question_0_custom``).
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from typing import Any

import msgspec

log = logging.getLogger("minime")

ACTIONS = ("accept", "decline", "cancel")


class ElicitationRequest(msgspec.Struct, kw_only=True):
    """What ``on_elicitation`` receives: the agent's message and the JSON schema of the form
    (``{"type": "object", "properties": {...}, "required": [...]}``, each property a string,
    number, integer, boolean, enum or multi-select). ``cancelled`` is set when the question
    is withdrawn (the turn cancelled, the connection closed)."""

    session_id: str
    message: str
    schema: dict[str, Any]
    tool_call_id: str | None = None
    cancelled: threading.Event = msgspec.field(default_factory=threading.Event)


class ElicitationAnswer(msgspec.Struct, kw_only=True):
    """``accept`` with ``content`` ({field: value}), ``decline`` or ``cancel``."""

    action: str
    content: dict[str, Any] | None = None


DECLINE = ElicitationAnswer(action="decline")
CANCEL = ElicitationAnswer(action="cancel")

ElicitationCallback = Callable[[ElicitationRequest], Any]


async def ask(callback: ElicitationCallback | None, request: ElicitationRequest) -> Any:
    """The SDK response for the callback's answer; a callback that raises or answers something
    else declines (the agent's tool goes on without an answer, as when the user says no)."""
    from acp.schema import (
        AcceptElicitationResponse,
        CancelElicitationResponse,
        DeclineElicitationResponse,
    )

    answer: Any = DECLINE
    if callback is not None:
        try:
            answer = callback(request)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception:
            log.exception("on_elicitation failed: declined")
            answer = DECLINE
    if not isinstance(answer, ElicitationAnswer) or answer.action not in ACTIONS:
        log.warning("on_elicitation answered %r: declined", answer)
        answer = DECLINE
    if answer.action == "accept":
        return AcceptElicitationResponse(action="accept", content=answer.content or {})
    if answer.action == "cancel":
        return CancelElicitationResponse(action="cancel")
    return DeclineElicitationResponse(action="decline")
