"""The editor's state lent to the agent as client tools (``client_open_buffers`` ...).

Each tool lives in Lua, one file each (``lua/minime/tools/<name>.lua``: its description for a
small model, its input schema, its handler); the host hands their declarations in
(``require('minime.tools').builtin_specs()`` and ``user_tool_specs()``) and provides
``call_lua``, which runs ``require('minime.tools').call(name, args, cwd)`` in Neovim (Lua
reads its own options and the ask's selection) and returns the ``{ok, value | error}`` table.
This module binds them to sessions, encodes the answers and turns failures into isError
results; it imports neither pynvim nor any thread machinery.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import msgspec

from ..tools import Tool
from .wire_text import clean, clean_all

log = logging.getLogger(__name__)

METHOD_PREFIX = "_minime.nvim/tools/"

# call_lua(name, arguments, cwd) -> {"ok": True, "value": ...} or {"ok": False, "error": str}
CallLua = Callable[[str, dict[str, Any], str], Awaitable[Mapping[str, Any]]]


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
) -> Callable[[str | None, str | None], list[Tool]]:
    """The tool source for the library: ``tools_for(session_id, cwd) -> list[minime.Tool]``.

    ``call_lua`` gets each call's cwd: the request's, else the session's.
    ``enabled(session_id, cwd)`` names the tools to
    offer (None: all). ``builtin_tools`` and ``user_tools`` are the declarations of the Lua
    tools (``require('minime.tools').builtin_specs()``, ``user_tool_specs()``) or functions
    returning them; a user tool named like a built-in is left out. Called with ``(None, None)``
    it builds a list for discovery ``meta``, where each call's cwd comes from its request.
    """

    def tools_for(session_id: str | None, cwd: str | None) -> list[Tool]:
        wanted = enabled(session_id or "", cwd) if enabled else None
        wanted = None if wanted is None else set(wanted)
        built = builtin_tools() if callable(builtin_tools) else builtin_tools
        extra = user_tools() if callable(user_tools) else user_tools
        specs = [_spec(s) for s in built]
        taken = {s.name for s in specs}
        specs += [s for s in map(_spec, extra) if s.name not in taken]
        return [
            _bind(spec, call_lua, cwd) for spec in specs if wanted is None or spec.name in wanted
        ]

    return tools_for


def _bind(spec: ToolSpec, call_lua: CallLua, session_cwd: str | None) -> Tool:
    name = spec.name

    async def handle(request: Any) -> str:
        arguments = request.arguments if isinstance(request.arguments, dict) else {}
        # Lone surrogates and integers beyond 64 bits are valid JSON but cannot cross msgpack.
        arguments = clean_all({k: v for k, v in arguments.items() if k != "_meta"})
        cwd = getattr(request, "cwd", None) or session_cwd
        if not cwd:
            raise ToolError("the session's working directory is not known to the editor")
        try:
            answer = await call_lua(name, arguments, cwd)
        except Exception as exc:
            # The host's or Neovim's message may carry a Lua traceback: for the log, not the model.
            log.warning("editor tool %s: the call into Neovim failed", name, exc_info=True)
            raise ToolError(f"the editor could not run {name}") from exc
        if not isinstance(answer, Mapping) or "ok" not in answer:
            raise ToolError(f"the editor gave no answer for {name}")
        if not answer["ok"]:
            raise ToolError(clean(str(answer.get("error") or f"{name} failed")))
        value = answer.get("value")
        return encode(value)

    return Tool(
        name,
        handle,
        description=spec.description,
        input_schema=spec.input_schema,
        method=METHOD_PREFIX + name,
    )
