"""The editor tools as the host runs them: Lua declares them (with ``setup``), Lua runs each
call, and a call that waits (a file read off Neovim's main loop) answers later through the
notification ``tool_result``. Kept apart from host.py: one job, the tool-call path.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from . import ops
from .editor_tools import editor_tools
from .fs_shown import FsWrite

log = logging.getLogger(__name__)

# A tool that answers later (bounded at 10 s in Lua for a file read) gets this long before the
# call fails; only a bug in a tool would need it.
ANSWER_TIMEOUT = 60.0

CALL = "return require('minime.rpc').tool(...)"
FS_CALL = "return require('minime.rpc').fs(...)"


class LuaTools:
    """``lua_call`` runs Lua on pynvim's thread and awaits it; ``setup`` gives what Lua sent
    with setup (the tools' declarations); ``tool_ctx`` maps a cwd to its last accepted ask's
    tool context (which tools). ``began`` / ``ended`` are told of each call (on the ACP loop):
    the conversation's drawing waits while one is in flight (render.py)."""

    def __init__(
        self,
        lua_call: Callable[..., Awaitable[Any]],
        setup: Callable[[], ops.Setup],
        tool_ctx: dict[str, dict[str, Any]],
        began: Callable[[], None] = lambda: None,
        ended: Callable[[], None] = lambda: None,
    ) -> None:
        self._lua_call = lua_call
        self._setup = setup
        self._tool_ctx = tool_ctx
        self._began, self._ended = began, ended
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
        self, cwd_of: Callable[[str], str], wrote: WroteFn = lambda _cwd, _write: None
    ) -> BufferFileSystem:
        """The ACP fs handlers for the library, answered by lua/minime/editor/fs.lua; ``wrote``
        gets each write's change, for the conversation (see BufferFileSystem.write)."""
        return BufferFileSystem(self, cwd_of, wrote)

    def answer(self, result: ops.ToolResult) -> None:
        """A later answer from Lua (on pynvim's thread)."""
        waiting = self._waiting.get(result.id)
        if waiting is not None and not waiting.done():
            waiting.set_result(result.answer)


def _mappings(decls: list[ops.ToolDecl]) -> list[dict[str, Any]]:
    return [msgspec.structs.asdict(decl) for decl in decls]


# wrote(cwd, change): a write Lua made in the session of that (real) cwd, to be shown.
WroteFn = Callable[[str, FsWrite], None]


class BufferFileSystem:
    """``fs/read_text_file`` / ``fs/write_text_file`` through the buffers: Lua answers (in the
    session's cwd, which ``cwd_of`` gives for a session id); its refusal is the agent's error."""

    def __init__(self, tools: LuaTools, cwd_of: Callable[[str], str], wrote: WroteFn) -> None:
        self._tools = tools
        self._cwd_of = cwd_of
        self._wrote = wrote

    async def read(self, session_id: str, path: str, line: int | None, limit: int | None) -> str:
        params = {"path": path, "line": line, "limit": limit}
        return await self._ask("fs/read_text_file", session_id, params)

    async def write(self, session_id: str, path: str, content: str) -> None:
        # Lua answers what it changed; the conversation shows it behind what the agent said
        # before the write (the turn's stream has taken those updates while Lua wrote).
        params = {"path": path, "content": content}
        change = await self._ask("fs/write_text_file", session_id, params, text=False)
        try:
            write = msgspec.convert(change, FsWrite)
        except msgspec.ValidationError:
            log.warning("fs/write_text_file: an answer from Lua not understood: %r", change)
            return
        self._wrote(os.path.realpath(self._cwd_of(session_id)), write)

    async def _ask(
        self, method: str, session_id: str, params: dict[str, Any], text: bool = True
    ) -> Any:
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
        if not text:
            return value
        return value if isinstance(value, str) else ""
