"""Permission requests answered in the editor: rules first, then what the user remembered,
then a float. Answers arrive from Lua on pynvim's thread; the request waits on the ACP loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
from collections.abc import Callable
from typing import Any

import msgspec

from .. import permission_rules, permissions
from ..model import PermissionRequest, ToolCall
from .ops import PermissionAnswer
from .render import clean, clean_all

log = logging.getLogger("minime")


class Prompts:
    def __init__(
        self,
        lua: Callable[..., None],
        options: Callable[[], dict[str, Any]],
        before_prompt: Callable[[], None],
        call_soon: Callable[..., None],
        note: Callable[[str, str], None] = lambda cwd, text: None,
    ) -> None:
        self._lua = lua
        self._note = note  # a line in the cwd's turn: who answered, when it was not the user
        self._options = options
        self._before_prompt = before_prompt
        self._call_soon = call_soon
        self._pending: dict[int, concurrent.futures.Future[Any]] = {}
        self._ids = itertools.count(1)
        # `a` in the float, kept on the client side: the exact request (exact_request) → the
        # agent's allow-once option id.
        self._remembered: dict[tuple[str, str, str, bytes], str] = {}

    async def ask(
        self, request: PermissionRequest, cwd: str, agent: tuple[str, str] = ("", "")
    ) -> permissions.Decision:
        """``agent``: (definition name, label) of the agent asking: the float's words for what
        each of its options reaches come from its definition (lua/minime/agents/)."""
        call = request.tool_call
        rules = self._options().get("permission_rules") or []
        match, skipped = permission_rules.first_match(rules, call.title, call.kind)
        if match is not None:
            verb = "allowed" if match.decision == "allow" else "rejected"
            log.info("permission rule %r answered %s for %r", match.pattern, verb, call.title)
            self._note(cwd, f"permission {call.title!r}: {verb} by rule {match.pattern!r}")
            return permissions.ALLOW if match.decision == "allow" else permissions.REJECT
        key = exact_request(request.session_id, call)
        remembered = self._remembered.get(key)
        if remembered is not None:
            self._note(cwd, f"permission {call.title!r}: allowed again (you pressed `a` for it)")
            return permissions.choose(remembered)
        prompt_id = next(self._ids)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._pending[prompt_id] = future
        self._before_prompt()  # the turn so far (the call asked about) shows first
        self._lua(
            "require('minime.rpc').permission(...)",
            {
                "id": prompt_id,
                "cwd": cwd,
                "agent": agent[0],
                "agent_label": clean(agent[1]),
                "session_id": request.session_id,
                "call_id": clean(call.id),
                "title": clean(call.title),
                "tool_kind": call.kind,
                "input": clean_all(call.input),
                "content": clean_all(call.content),
                "locations": [clean(location.path) for location in call.locations or ()],
                "options": [
                    {"option_id": o.option_id, "name": clean(o.name), "kind": o.kind}
                    for o in request.options
                ],
                "timeout": self._options().get("permission_timeout"),
                "skipped": [
                    f"rule {s.pattern!r} not applied: the text its wildcard matched holds "
                    "shell control characters (; & | < > ` $( or a newline)"
                    for s in skipped
                ],
            },
        )
        try:
            answer = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self._lua("require('minime.rpc').permission_close(...)", prompt_id)
            raise
        finally:
            self._pending.pop(prompt_id, None)
        if answer.get("reason") == "timeout":
            seconds = self._options().get("permission_timeout")
            self._note(
                cwd,
                f"permission {call.title!r}: rejected, no answer within {float(seconds or 0):g} s",
            )
        option_id = answer.get("option_id")
        if not isinstance(option_id, str):
            return permissions.REJECT
        if answer.get("remember"):
            self._remembered[key] = option_id
        return permissions.choose(option_id)

    def answer(self, payload: PermissionAnswer) -> None:
        """Lua's answer (pynvim's thread): hand it to the waiting request on the ACP loop."""
        future = self._pending.get(payload.id)
        if future is None or future.done():
            return
        answer = {
            "option_id": payload.option_id,
            "remember": payload.remember,
            "reason": payload.reason,
        }
        self._call_soon(_settle, future, answer)


def exact_request(session_id: str, call: ToolCall) -> tuple[str, str, str, bytes]:
    """What `a` remembers: the session, the tool kind, the title and the input with the
    request's content (diffs), serialised canonically (keys sorted), so that `a` on
    ``client: read_buffer {"path": "README.md"}`` allows no other file, and `a` on "Run tests"
    with ``command: pytest`` does not allow the same title running something else."""
    try:
        what = msgspec.json.encode({"input": call.input, "content": call.content}, order="sorted")
    except (TypeError, ValueError, OverflowError, RecursionError):
        what = repr((call.input, call.content)).encode()  # e.g. an integer beyond 64 bits
    return (session_id, call.kind or "", call.title, what)


def _settle(future: concurrent.futures.Future[Any], answer: Any) -> None:
    if not future.done():
        future.set_result(answer)
