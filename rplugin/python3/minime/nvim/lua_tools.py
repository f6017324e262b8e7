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

import msgspec

from . import ops
from .editor_tools import editor_tools
from .workspace import Workspaces

# A tool that answers later (bounded at 10 s in Lua for a file read) gets this long before the
# call fails; only a bug in a tool would need it.
ANSWER_TIMEOUT = 60.0

CALL = "return require('minime.rpc').tool(...)"
FS_CALL = "return require('minime.rpc').fs(...)"


class LuaTools:
    """``lua_call`` runs Lua on pynvim's thread and awaits it; ``setup`` gives what Lua sent
    with setup (the tools' declarations); ``workspaces`` gives each cwd's tool filter (its last
    accepted ask's). ``began`` / ``ended`` are told of each call (on the ACP loop):
    the conversation's drawing waits while one is in flight (render.py)."""

    def __init__(
        self,
        lua_call: Callable[..., Awaitable[Any]],
        setup: Callable[[], ops.Setup],
        workspaces: Workspaces,
        began: Callable[[], None] = lambda: None,
        ended: Callable[[], None] = lambda: None,
    ) -> None:
        self._lua_call = lua_call
        self._setup = setup
        self._workspaces = workspaces
        self._began, self._ended = began, ended
        self._waiting: dict[int, concurrent.futures.Future[Any]] = {}
        self._ids = itertools.count(1)

    def source(self, discovery: str) -> Any:
        """The tool source for the library (request mode: per session, for its cwd; meta: one
        list, each call's cwd taken from its request)."""

        def enabled(_session_id: str, cwd: str | None) -> Any:
            disabled = self._workspaces[os.path.realpath(cwd)].disabled_tools if cwd else None
            if not disabled:
                return None
            setup = self._setup()
            specs = [*setup.builtin_tools, *setup.user_tools]
            return [spec.name for spec in specs if spec.name not in disabled]

        source = editor_tools(
            self.call,
            enabled,
            user_tools=lambda: _mappings(self._setup().user_tools),
            builtin_tools=lambda: _mappings(self._setup().builtin_tools),
        )
        return source if discovery == "request" else source(None, None)

    async def call(self, name: str, args: dict[str, Any], cwd: str, *, lua: str = CALL) -> Any:
        """Run tool ``name`` for the session in ``cwd`` (Lua builds its context: options,
        selection): its answer, at once or from a later ``tool_result``."""
        call_id = next(self._ids)
        later: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._waiting[call_id] = later
        self._began()
        try:
            answer = await self._lua_call(lua, name, args, os.path.realpath(cwd), call_id)
            if isinstance(answer, dict) and answer.get("pending"):
                try:
                    answer = await asyncio.wait_for(asyncio.wrap_future(later), ANSWER_TIMEOUT)
                except TimeoutError:
                    return {"ok": False, "error": f"{name} got no answer from the editor in time"}
            return answer
        finally:
            del self._waiting[call_id]
            self._ended()

    def file_system(
        self, cwd_of: Callable[[str], str], flush: Callable[[], None] = lambda: None
    ) -> BufferFileSystem:
        """The ACP fs handlers for the library, answered by lua/minime/editor/fs.lua; ``flush``
        sends the conversation's pending events first (see BufferFileSystem.write)."""
        return BufferFileSystem(self, cwd_of, flush)

    def answer(self, result: ops.ToolResult) -> None:
        """A later answer from Lua (on pynvim's thread)."""
        waiting = self._waiting.get(result.id)
        if waiting is not None and not waiting.done():
            waiting.set_result(result.answer)


def _mappings(decls: list[ops.ToolDecl]) -> list[dict[str, Any]]:
    return [msgspec.structs.asdict(decl) for decl in decls]


class BufferFileSystem:
    """``fs/read_text_file`` / ``fs/write_text_file`` through the buffers: Lua answers (in the
    session's cwd, which ``cwd_of`` gives for a session id); its refusal is the agent's error."""

    def __init__(
        self, tools: LuaTools, cwd_of: Callable[[str], str], flush: Callable[[], None]
    ) -> None:
        self._tools = tools
        self._cwd_of = cwd_of
        self._flush = flush

    async def read(self, session_id: str, path: str, line: int | None, limit: int | None) -> str:
        params = {"path": path, "line": line, "limit": limit}
        return await self._ask("fs/read_text_file", session_id, params)

    async def write(self, session_id: str, path: str, content: str) -> None:
        # Lua shows the write in the conversation at once, so what the agent said before it goes
        # out first: one turn of the loop lets the turn's stream take the updates already routed,
        # then the host's batch is sent (same queue to pynvim's thread as Lua's call: in order).
        await asyncio.sleep(0)
        self._flush()
        await self._ask("fs/write_text_file", session_id, {"path": path, "content": content})

    async def _ask(self, method: str, session_id: str, params: dict[str, Any]) -> Any:
        from acp import RequestError

        cwd = self._cwd_of(session_id)
        if not cwd:
            raise RequestError.invalid_params({"details": "the session is not open in the editor"})
        answer = await self._tools.call(method, params, cwd, lua=FS_CALL)
        if not isinstance(answer, dict) or not answer.get("ok"):
            error = answer.get("error") if isinstance(answer, dict) else None
            if isinstance(answer, dict) and answer.get("missing"):
                raise FileNotFoundError(2, str(error or "no such file"), params["path"])
            raise RequestError.invalid_params({"details": str(error or "the editor failed")})
        value = answer.get("value")
        return value if isinstance(value, str) else ""
