"""The editor's state lent to the agent as client tools (``client_open_buffers`` ...).

Each tool lives in Lua, one file each (``lua/minime/tools/<name>.lua``: its description for a
small model, its input schema, its handler); the host hands their declarations in
(``require('minime.tools').builtin_specs()`` and ``user_tool_specs()``) and provides
``call_lua``, which runs ``require('minime.tools').call(name, args, cwd, id, thread)`` in Neovim
(Lua reads its own options and the selection of the thread's running ask) and returns the
``{ok, value | error}`` table.
This module binds them to sessions, encodes the answers and turns failures into isError
results (``editor_tools``, which imports neither pynvim nor any thread machinery), and runs them
for the host (``LuaTools``): a call that waits (a file read off Neovim's main loop) answers later
through the notification ``tool_result``; the ACP file system goes the same way
(``BufferFileSystem``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import msgspec

from ..tools import Tool
from . import ops
from .bridge import NvimBridge
from .conversation import Conversation
from .fs_shown import FsWrite, already_shown, shown
from .thread import Thread
from .thread_registry import Threads
from .tool_names import MM_NAMES, Rename, renamed_schema, renamer
from .wire_text import clean, clean_all

log = logging.getLogger(__name__)

METHOD_PREFIX = "_minime.nvim/tools/"

# call_lua(name, arguments, cwd, session_id, names) -> {"ok": True, "value": ...} or
# {"ok": False, "error": str}; the session id (None: not known) names the thread calling;
# ``names``: how the agent's model names the tools (tool_names.py), for Lua's notes.
CallLua = Callable[[str, dict[str, Any], str, str | None, str], Awaitable[Mapping[str, Any]]]


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool as declared to the agent, before it is bound to a session."""

    name: str
    description: str | None = None
    input_schema: dict[str, Any] | None = None


class ToolError(Exception):
    """A tool's answer the model should read as a failed call (isError)."""


def encode(value: Any) -> str:
    """Compact JSON text of a tool's value; a string is the answer as it is (a built-in tool's
    JSON text, written in Lua with its fields in the order its file declares)."""
    if isinstance(value, str):
        return clean(value)
    try:
        return msgspec.json.encode(value).decode()
    except UnicodeEncodeError:
        # pynvim decodes bytes that are not UTF-8 as lone surrogates; the Lua side already
        # replaces them, this covers user tools and anything that slips through.
        return msgspec.json.encode(clean_all(value, limit=sys.maxsize)).decode()


Specs = Iterable[ToolSpec | Mapping[str, Any]]


def _spec(entry: ToolSpec | Mapping[str, Any]) -> ToolSpec:
    if isinstance(entry, ToolSpec):
        return entry
    schema = entry.get("input_schema")
    if isinstance(schema, str):
        # A built-in's schema comes as JSON text: Lua tables lose the order of its fields.
        # (Empty tables that JSON Schema wants as objects were fixed in Lua: fix_schema.)
        schema = msgspec.json.decode(schema)
    return ToolSpec(
        name=entry["name"],
        description=entry.get("description") or None,
        input_schema=schema or None,
    )


def editor_tools(
    call_lua: CallLua,
    enabled: Callable[[str, str | None], Iterable[str] | None] | None = None,
    user_tools: Specs | Callable[[], Specs] = (),
    builtin_tools: Specs | Callable[[], Specs] = (),
    names: str = MM_NAMES,
) -> Callable[[str | None, str | None], list[Tool]]:
    """The tool source for the library: ``tools_for(session_id, cwd) -> list[minime.Tool]``.

    ``call_lua`` gets each call's cwd: the request's, else the session's.
    ``enabled(session_id, cwd)`` names the tools to
    offer (None: all). ``builtin_tools`` and ``user_tools`` are the declarations of the Lua
    tools (``require('minime.tools').builtin_specs()``, ``user_tool_specs()``) or functions
    returning them; a user tool named like a built-in is left out. Called with ``(None, None)``
    it builds a list for discovery ``meta``, where each call's cwd comes from its request.
    ``names``: how the receiving agent's model names the tools (tool_names.py): their texts
    (descriptions, errors) name each other so.
    """

    def tools_for(session_id: str | None, cwd: str | None) -> list[Tool]:
        wanted = enabled(session_id or "", cwd) if enabled else None
        wanted = None if wanted is None else set(wanted)
        built = builtin_tools() if callable(builtin_tools) else builtin_tools
        extra = user_tools() if callable(user_tools) else user_tools
        specs = [_spec(s) for s in built]
        taken = {s.name for s in specs}
        specs += [s for s in map(_spec, extra) if s.name not in taken]
        rename = renamer(names, [s.name for s in specs])
        return [
            _bind(spec, call_lua, cwd, names, rename)
            for spec in specs
            if wanted is None or spec.name in wanted
        ]

    return tools_for


def _bind(
    spec: ToolSpec, call_lua: CallLua, session_cwd: str | None, names: str, rename: Rename
) -> Tool:
    name = spec.name

    async def handle(request: Any) -> str:
        arguments = request.arguments if isinstance(request.arguments, dict) else {}
        # Lone surrogates and integers beyond 64 bits are valid JSON but cannot cross msgpack.
        arguments = clean_all({k: v for k, v in arguments.items() if k != "_meta"})
        cwd = getattr(request, "cwd", None) or session_cwd
        if not cwd:
            raise ToolError("the session's working directory is not known to the editor")
        try:
            answer = await call_lua(name, arguments, cwd, request.session_id, names)
        except Exception as exc:
            # The host's or Neovim's message may carry a Lua traceback: for the log, not the model.
            log.warning("editor tool %s: the call into Neovim failed", name, exc_info=True)
            raise ToolError(f"the editor could not run {name}") from exc
        if not isinstance(answer, Mapping) or "ok" not in answer:
            raise ToolError(f"the editor gave no answer for {name}")
        if not answer["ok"]:
            raise ToolError(rename(clean(str(answer.get("error") or f"{name} failed"))))
        value = answer.get("value")
        return encode(value)

    description = spec.description
    return Tool(
        name,
        handle,
        description=rename(description) if description is not None else None,
        input_schema=renamed_schema(spec.input_schema, rename),
        method=METHOD_PREFIX + name,
    )


# A tool that answers later (bounded at 10 s in Lua for a file read) gets this long before the
# call fails; only a bug in a tool would need it.
ANSWER_TIMEOUT = 60.0


class LuaTools:
    """``settings`` gives what Lua sent with setup (the tools' declarations); ``threads`` each
    thread's tool filter (its last accepted ask's) and session; the ``conversation`` is told
    of each call (on the ACP loop): its drawing waits while one is in flight (render.py)."""

    def __init__(
        self,
        bridge: NvimBridge,
        settings: ops.Settings,
        threads: Threads,
        conversation: Conversation,
    ) -> None:
        self._bridge = bridge
        self._settings = settings
        self._threads = threads
        self._conversation = conversation
        self._waiting: dict[int, concurrent.futures.Future[Any]] = {}
        self._ids = itertools.count(1)

    def source(self, discovery: str, names: str = MM_NAMES) -> Any:
        """The tool source for the library (request mode: per session, for its cwd; meta: one
        list, each call's cwd taken from its request); ``names``: how the agent's model names
        the tools (tool_names.py)."""

        def enabled(session_id: str, cwd: str | None) -> Any:
            disabled = self._disabled(session_id, cwd)
            if not disabled:
                return None
            setup = self._settings.setup
            specs = [*setup.builtin_tools, *setup.user_tools]
            return [spec.name for spec in specs if spec.name not in disabled]

        source = editor_tools(
            self.call,
            enabled,
            user_tools=lambda: _mappings(self._settings.setup.user_tools),
            builtin_tools=lambda: _mappings(self._settings.setup.builtin_tools),
            names=names,
        )
        return source if discovery == "request" else source(None, None)

    def _disabled(self, session_id: str, cwd: str | None) -> frozenset[str] | None:
        """The tools turned off for the thread of ``session_id``; while its session opens (mm
        lists the tools before it answers session/new) that of a thread opening in ``cwd``."""
        thread = self._threads.of_session(session_id) if session_id else None
        if thread is None and cwd:
            real = os.path.realpath(cwd)
            opening = [t for t in self._threads.in_cwd(real) if t.disabled_tools is not None]
            starting = [t for t in opening if t.session is None]
            thread = (starting or opening or [None])[-1]
        return thread.disabled_tools if thread is not None else None

    async def call(
        self,
        name: str,
        args: dict[str, Any],
        cwd: str,
        session_id: str | None = None,
        names: str = MM_NAMES,
        *,
        lua: str = "tool",
    ) -> Any:
        """Run tool ``name`` for session ``session_id`` in ``cwd`` (Lua builds its context:
        options, the selection of its thread's ask; ``names`` for its notes): its answer, at
        once or from a later ``tool_result``."""
        call_id = next(self._ids)
        later: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._waiting[call_id] = later
        thread = self._threads.of_session(session_id) if session_id else None
        self._conversation.tool_began()
        try:
            where = os.path.realpath(cwd)
            thread_id = thread.id if thread else None
            answer = await self._bridge.rpc_call(lua, name, args, where, call_id, thread_id, names)
            if isinstance(answer, dict) and answer.get("pending"):
                try:
                    answer = await asyncio.wait_for(asyncio.wrap_future(later), ANSWER_TIMEOUT)
                except TimeoutError:
                    return {"ok": False, "error": f"{name} got no answer from the editor in time"}
            return answer
        finally:
            del self._waiting[call_id]
            self._conversation.tool_ended()

    def file_system(self) -> BufferFileSystem | None:
        """The ACP fs handlers for the library, answered by lua/minime/editor/fs.lua (None:
        setup's ``fs = false``)."""
        if not self._settings.setup.fs:
            return None
        return BufferFileSystem(self, self._threads, self._conversation)

    def answer(self, result: ops.ToolResult) -> None:
        """A later answer from Lua (on pynvim's thread)."""
        waiting = self._waiting.get(result.id)
        if waiting is not None and not waiting.done():
            waiting.set_result(result.answer)


def _mappings(decls: list[ops.ToolDecl]) -> list[dict[str, Any]]:
    return [msgspec.structs.asdict(decl) for decl in decls]


class BufferFileSystem:
    """``fs/read_text_file`` / ``fs/write_text_file`` through the buffers: Lua answers (in the
    session's cwd); its refusal is the agent's error. The conversation's pending events go first
    (see write)."""

    def __init__(self, tools: LuaTools, threads: Threads, conversation: Conversation) -> None:
        self._tools = tools
        self._threads = threads
        self._conversation = conversation

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
        thread = self._threads.of_session(session_id)
        if thread is not None:
            self._show(thread, write)

    def _show(self, thread: Thread, write: FsWrite) -> None:
        """A write through the fs, in the conversation's stream (unless a tool shows it)."""
        calls = thread.session.running_calls if thread.session is not None else []
        if not already_shown(write, calls, thread.cwd):
            for item in shown(write):
                self._conversation.render(thread, item)

    async def _ask(
        self, method: str, session_id: str, params: dict[str, Any], text: bool = True
    ) -> Any:
        from acp import RequestError

        thread = self._threads.of_session(session_id)
        if thread is None:
            raise RequestError.invalid_params({"details": "the session is not open in the editor"})
        answer = await self._tools.call(method, params, thread.cwd, session_id, lua="fs")
        if not isinstance(answer, dict) or not answer.get("ok"):
            error = answer.get("error") if isinstance(answer, dict) else None
            if isinstance(answer, dict) and answer.get("missing"):
                raise FileNotFoundError(2, str(error or "no such file"), params["path"])
            raise RequestError.invalid_params({"details": str(error or "the editor failed")})
        value = answer.get("value")
        if not text:
            return value
        return value if isinstance(value, str) else ""
