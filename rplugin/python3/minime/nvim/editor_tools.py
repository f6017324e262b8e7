"""The editor's state lent to the agent as client tools (``client_open_buffers`` ...).

The declarations (name, description for a small model, input schema) live here; the reading
and the scoping live in Lua (``lua/minime/tools``), reached through ``call_lua``, which the host
provides: it runs ``require('minime.tools').call(name, args, ctx)`` in Neovim and returns the
``{ok, value | error}`` table. This module imports neither pynvim nor any thread machinery.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import msgspec

from ..tools import Tool

log = logging.getLogger(__name__)

METHOD_PREFIX = "_minime.nvim/tools/"

# call_lua(name, arguments, ctx) -> {"ok": True, "value": ...} or {"ok": False, "error": str}
CallLua = Callable[[str, dict[str, Any], dict[str, Any]], Awaitable[Mapping[str, Any]]]


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool as declared to the agent, before it is bound to a session."""

    name: str
    description: str | None = None
    input_schema: dict[str, Any] | None = None


class ToolError(Exception):
    """A tool's answer the model should read as a failed call (isError)."""


_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

BUILTIN: tuple[ToolSpec, ...] = (
    ToolSpec(
        "open_buffers",
        "List the files open in the user's editor. Call it first to see what the user is"
        " working on. Returns JSON {cwd, buffers: [{path, filetype, lines, modified, current,"
        " visible}]}: path is relative to the working directory, modified means unsaved edits,"
        " current is the file the user is in.",
        _NO_ARGS,
    ),
    ToolSpec(
        "read_buffer",
        "Read a file open in the editor, with the user's unsaved edits (read open files with"
        " this, not from disk). Pass a path from client_open_buffers, and optionally"
        " start_line/end_line (1-based, inclusive). Returns JSON {path, start_line, end_line,"
        " total_lines, modified, text}. Long files come in parts: when the text ends with a"
        " [cut: ...] line, call again with the start_line it gives.",
        {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Path of an open file, as client_open_buffers lists it.",
                },
                "start_line": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "First line to read (1-based). Default: 1.",
                },
                "end_line": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Last line to read (inclusive). Default: the last line.",
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "selection",
        "Get the text the user selected in the editor: call it when the user says 'this',"
        " 'the selection' or 'the selected code'. Returns JSON {path, start: {line, col},"
        ' end: {line, col}, mode, text}; mode is "char", "line" or "block", or "none" (path'
        " null) when nothing is selected.",
        _NO_ARGS,
    ),
    ToolSpec(
        "diagnostics",
        "Get the errors and warnings that language servers and linters report in the open"
        " files. Returns JSON {diagnostics: [{path, line, col, end_line, end_col, severity,"
        " source, code, message}]}, positions 1-based. Long lists are cut, most severe kept;"
        " narrow with path or severity.",
        {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Only this open file (a path from client_open_buffers).",
                },
                "severity": {
                    "type": "string",
                    "enum": ["error", "warn", "info", "hint"],
                    "description": "Only this level.",
                },
            },
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "quickfix",
        "Get the editor's quickfix list: compiler errors, search hits or test failures the"
        " user collected. Returns JSON {title, items: [{path, line, col, type, text}]}.",
        _NO_ARGS,
    ),
)

BUILTIN_NAMES = frozenset(spec.name for spec in BUILTIN)

# Lua tables carry no key order; the model reads the fields in the order of the declarations
# above (one ranking fits every tool's objects). lua/minime/tools/json.lua writes the same
# order when it hands over JSON text (ctx.json); a test checks the two lists agree.
_FIELD_ORDER = (
    *("title", "cwd", "path", "filetype", "start_line", "start", "line", "col", "end_line"),
    *("end", "end_col", "total_lines", "lines", "modified", "current", "visible", "severity"),
    *("source", "code", "type", "mode", "message", "text", "buffers", "diagnostics", "items"),
)
_RANK = {name: i for i, name in enumerate(_FIELD_ORDER)}


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: _RANK.get(k, len(_RANK)))
        return {k: _ordered(value[k]) for k in keys}
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def encode(value: Any) -> str:
    """Compact JSON text of a tool's value; a string is the answer as it is."""
    if isinstance(value, str):
        return _clean(value)
    try:
        return msgspec.json.encode(value).decode()
    except UnicodeEncodeError:
        # pynvim decodes bytes that are not UTF-8 as lone surrogates; the Lua side already
        # replaces them, this covers user tools and anything that slips through.
        return msgspec.json.encode(_clean_all(value)).decode()


def _clean(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def _clean_all(value: Any) -> Any:
    if isinstance(value, str):
        return _clean(value)
    if isinstance(value, dict):
        return {_clean(str(k)): _clean_all(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_all(v) for v in value]
    return value


def _wire_safe(value: Any) -> Any:
    """The model's arguments in a form msgpack carries to Neovim (what cannot, replaced)."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        try:
            return float(value)
        except OverflowError:
            return str(value)
    if isinstance(value, dict):
        return {_clean(str(k)): _wire_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_wire_safe(v) for v in value]
    return _clean(value) if isinstance(value, str) else value


def _spec(entry: ToolSpec | Mapping[str, Any]) -> ToolSpec:
    if isinstance(entry, ToolSpec):
        return entry
    schema = entry.get("input_schema")
    if isinstance(schema, dict) and schema.get("properties") == []:
        # An empty Lua table crosses msgpack as an array.
        schema = {**schema, "properties": {}}
    return ToolSpec(
        name=entry["name"],
        description=entry.get("description") or None,
        input_schema=schema or None,
    )


def editor_tools(
    call_lua: CallLua,
    ctx_for: Callable[[str, str | None], Mapping[str, Any] | None],
    enabled: Callable[[str, str | None], Iterable[str] | None] | None = None,
    user_tools: Iterable[ToolSpec | Mapping[str, Any]]
    | Callable[[], Iterable[ToolSpec | Mapping[str, Any]]] = (),
) -> Callable[[str | None, str | None], list[Tool]]:
    """The tool source for the library: ``tools_for(session_id, cwd) -> list[minime.Tool]``.

    ``ctx_for(session_id, cwd)`` gives the Lua ctx of a call (deny, limits, selection; ``cwd``
    is filled in from the session when absent). ``enabled(session_id, cwd)`` names the tools to
    offer (None: all). ``user_tools`` are the declarations of the Lua user tools
    (``require('minime.tools').user_tool_specs()``) or a function returning them. Called with
    ``(None, None)`` it builds a list for discovery ``meta``, where each call's cwd comes from
    its request.
    """

    def tools_for(session_id: str | None, cwd: str | None) -> list[Tool]:
        wanted = enabled(session_id or "", cwd) if enabled else None
        wanted = None if wanted is None else set(wanted)
        extra = user_tools() if callable(user_tools) else user_tools
        specs = [*BUILTIN, *(s for s in map(_spec, extra) if s.name not in BUILTIN_NAMES)]
        return [
            _bind(spec, call_lua, ctx_for, cwd)
            for spec in specs
            if wanted is None or spec.name in wanted
        ]

    return tools_for


def _bind(
    spec: ToolSpec,
    call_lua: CallLua,
    ctx_for: Callable[[str, str | None], Mapping[str, Any] | None],
    session_cwd: str | None,
) -> Tool:
    name = spec.name

    async def handle(request: Any) -> str:
        arguments = request.arguments if isinstance(request.arguments, dict) else {}
        # Lone surrogates and integers beyond 64 bits are valid JSON but cannot cross msgpack.
        arguments = _wire_safe({k: v for k, v in arguments.items() if k != "_meta"})
        cwd = getattr(request, "cwd", None) or session_cwd
        ctx = dict(ctx_for(request.session_id, cwd) or {})
        if not ctx.get("cwd"):
            if not cwd:
                raise ToolError("the session's working directory is not known to the editor")
            ctx["cwd"] = cwd
        try:
            answer = await call_lua(name, arguments, ctx)
        except Exception as exc:
            # The host's or Neovim's message may carry a Lua traceback: for the log, not the model.
            log.warning("editor tool %s: the call into Neovim failed", name, exc_info=True)
            raise ToolError(f"the editor could not run {name}") from exc
        if not isinstance(answer, Mapping) or "ok" not in answer:
            raise ToolError(f"the editor gave no answer for {name}")
        if not answer["ok"]:
            raise ToolError(_clean(str(answer.get("error") or f"{name} failed")))
        value = answer.get("value")
        return encode(_ordered(value) if name in BUILTIN_NAMES else value)

    return Tool(
        name,
        handle,
        description=spec.description,
        input_schema=spec.input_schema,
        method=METHOD_PREFIX + name,
    )
