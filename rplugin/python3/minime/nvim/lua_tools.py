"""The editor tools as the host runs them: Lua declares them (with ``setup``), Lua runs each
call, and a call that waits (a file read off Neovim's main loop) answers later through the
notification ``tool_result``. Kept apart from host.py: one job, the tool-call path.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
from collections.abc import Awaitable, Callable
from typing import Any

from .editor_tools import editor_tools

# A tool that answers later (bounded at 10 s in Lua for a file read) gets this long before the
# call fails; only a bug in a tool would need it.
ANSWER_TIMEOUT = 60.0

CALL = "return require('minime.tools').call(...)"


class LuaTools:
    """``lua_call`` runs Lua on pynvim's thread and awaits it; ``options`` gives what Lua sent
    with setup; ``tool_ctx`` maps a cwd to its last accepted ask's tool context (which tools)."""

    def __init__(
        self,
        lua_call: Callable[..., Awaitable[Any]],
        options: Callable[[], dict[str, Any]],
        tool_ctx: dict[str, dict[str, Any]],
    ) -> None:
        self._lua_call = lua_call
        self._options = options
        self._tool_ctx = tool_ctx
        self._waiting: dict[int, concurrent.futures.Future[Any]] = {}
        self._ids = itertools.count(1)

    def source(self, discovery: str) -> Any:
        """The tool source for the library (request mode: per session, for its cwd; meta: one
        list, each call's cwd taken from its request)."""

        def enabled(_session_id: str, cwd: str | None) -> Any:
            key = os.path.realpath(cwd) if cwd else ""
            disabled = set((self._tool_ctx.get(key) or {}).get("disabled") or ())
            if not disabled:
                return None
            specs = [*self._specs("builtin_tools"), *self._specs("user_tools")]
            return [spec.get("name") for spec in specs if spec.get("name") not in disabled]

        source = editor_tools(
            self.call,
            enabled,
            user_tools=lambda: self._specs("user_tools"),
            builtin_tools=lambda: self._specs("builtin_tools"),
        )
        return source if discovery == "request" else source(None, None)

    def _specs(self, key: str) -> list[dict[str, Any]]:
        return [spec for spec in self._options().get(key) or [] if isinstance(spec, dict)]

    async def call(self, name: str, args: dict[str, Any], cwd: str) -> Any:
        """Run tool ``name`` for the session in ``cwd`` (Lua builds its context: options,
        selection): its answer, at once or from a later ``tool_result``."""
        call_id = next(self._ids)
        later: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._waiting[call_id] = later
        try:
            answer = await self._lua_call(CALL, name, args, os.path.realpath(cwd), call_id)
            if isinstance(answer, dict) and answer.get("pending"):
                try:
                    answer = await asyncio.wait_for(asyncio.wrap_future(later), ANSWER_TIMEOUT)
                except TimeoutError:
                    return {"ok": False, "error": f"{name} got no answer from the editor in time"}
            return answer
        finally:
            del self._waiting[call_id]

    def answer(self, payload: dict[str, Any]) -> None:
        """A later answer from Lua (on pynvim's thread): {id, answer}."""
        waiting = self._waiting.get(payload.get("id"))  # type: ignore[arg-type]
        if waiting is not None and not waiting.done():
            waiting.set_result(payload.get("answer"))
