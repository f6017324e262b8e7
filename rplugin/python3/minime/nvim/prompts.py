"""Permission requests answered in the editor: rules first, then what the user remembered,
then a float. Answers arrive from Lua on pynvim's thread; the request waits on the ACP loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import fnmatch
import itertools
import logging
from collections.abc import Callable
from typing import Any

from .. import permissions
from ..model import PermissionRequest
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
    ) -> None:
        self._lua = lua
        self._options = options
        self._before_prompt = before_prompt
        self._call_soon = call_soon
        self._pending: dict[int, concurrent.futures.Future[Any]] = {}
        self._ids = itertools.count(1)
        # "Always for this session", kept on the client side: (session id, title) → option id.
        self._remembered: dict[tuple[str, str], str] = {}

    async def ask(self, request: PermissionRequest, cwd: str) -> permissions.Decision:
        rule = self._rule_for(request)
        if rule is not None:
            return rule
        call = request.tool_call
        remembered = self._remembered.get((request.session_id, call.title))
        if remembered is not None:
            return permissions.choose(remembered)
        prompt_id = next(self._ids)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._pending[prompt_id] = future
        self._before_prompt()  # the turn so far (the call asked about) shows first
        self._lua(
            "require('minime').permission(...)",
            {
                "id": prompt_id,
                "cwd": cwd,
                "session_id": request.session_id,
                "title": clean(call.title),
                "tool_kind": call.kind,
                "input": clean_all(call.input),
                "content": clean_all(call.content),
                "options": [
                    {"option_id": o.option_id, "name": clean(o.name), "kind": o.kind}
                    for o in request.options
                ],
                "timeout": self._options().get("permission_timeout"),
            },
        )
        try:
            answer = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self._lua("require('minime.ui.permission').close(...)", prompt_id)
            raise
        finally:
            self._pending.pop(prompt_id, None)
        if isinstance(answer, dict) and answer.get("remember"):
            self._remembered[(request.session_id, call.title)] = answer["option_id"]
            return permissions.choose(answer["option_id"])
        if isinstance(answer, str):
            return permissions.choose(answer)
        return permissions.REJECT

    def answer(self, payload: PermissionAnswer) -> None:
        """Lua's answer (pynvim's thread): hand it to the waiting request on the ACP loop."""
        future = self._pending.get(payload.id)
        if future is None or future.done():
            return
        option_id = payload.option_id
        remember = payload.remember and option_id is not None
        answer = {"option_id": option_id, "remember": True} if remember else option_id
        self._call_soon(_settle, future, answer)

    def _rule_for(self, request: PermissionRequest) -> permissions.Decision | None:
        title = request.tool_call.title
        for rule in self._options().get("permission_rules") or []:
            pattern = rule.get("pattern") if isinstance(rule, dict) else None
            if isinstance(pattern, str) and fnmatch.fnmatchcase(title, pattern):
                decision = rule.get("decision")
                log.info("permission rule %r answered %s for %r", pattern, decision, title)
                return permissions.ALLOW if decision == "allow" else permissions.REJECT
        return None


def _settle(future: concurrent.futures.Future[Any], answer: Any) -> None:
    if not future.done():
        future.set_result(answer)
