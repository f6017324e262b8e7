"""Client tools: their declaration, the checks mm applies to a list, and the call itself."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec

from . import tool_arguments
from .errors import Error
from .model import TextBlock, ToolDescription, ToolRequest, ToolResult
from .threads import as_failure, tool_pool

log = logging.getLogger("minime")

DEFAULT_METHOD_PREFIX = "_minime.py/tools/"
SESSION_META_KEY = "org.mini-me/sessionId"
# mm's Go SDK reads lines of at most 10 MiB (bufio.Scanner) and ends the connection on a longer
# one: an answer's JSON line is kept under this many bytes, its text cut in the middle.
MAX_ANSWER_BYTES = 8 * 1024 * 1024


class Tool(msgspec.Struct, frozen=True):
    """A function of this program offered to the agent; the model sees ``client_<name>``.

    ``handle(request)`` may be sync (run on the library's own daemon threads) or async and
    returns the text the model reads; an exception (even SystemExit) becomes a failed call
    (``isError``) carrying its message.
    """

    name: str
    handle: Any
    description: str | None = None
    input_schema: dict[str, Any] | None = None
    method: str | None = None

    @property
    def wire_method(self) -> str:
        return self.method or f"{DEFAULT_METHOD_PREFIX}{self.name}"

    def _describe(self) -> ToolDescription:
        return ToolDescription(
            name=self.name,
            method=self.wire_method,
            description=self.description,
            inputSchema=self.input_schema,
        )


ToolSource = Sequence[Tool] | Callable[[str, str], Iterable[Tool]]


def model_name(name: str) -> str:
    """The name the model sees, as mm makes it: ``client_<name>`` with every run outside
    [A-Za-z0-9] made one ``_`` and the ends trimmed (``open buffers`` → ``client_open_buffers``,
    ``???`` → ``client``)."""
    return re.sub(r"[^A-Za-z0-9]+", "_", f"client_{name}").strip("_")


def problem(tool: Any, seen_names: set[str], seen_methods: set[str]) -> str | None:
    """Why mm would skip this entry (or the client could not serve it), else None.

    A method shared by two tools is refused: mm's call carries the method and the arguments,
    nothing else, so the client could not tell which of the two the model called.
    """
    if not isinstance(tool, Tool):
        return f"not a minime.Tool: {tool!r}"
    if not isinstance(tool.name, str) or not tool.name.strip():
        return "no name"
    if tool.handle is None or not callable(tool.handle):
        return "no handle"
    for field, value in (("description", tool.description), ("method", tool.wire_method)):
        if value is not None and not isinstance(value, str):
            return f"{field} must be a string, got {type(value).__name__}"
    method = tool.wire_method
    if not method.startswith("_"):
        return f'method "{method}" must start with "_" (an ACP extension method)'
    schema = tool.input_schema
    if schema is not None:
        if not isinstance(schema, dict):
            return f"inputSchema must be an object, got {type(schema).__name__}"
        if schema.get("type", "object") != "object":
            return f'inputSchema.type must be "object", got {schema["type"]!r}'
    visible = model_name(tool.name)
    if visible in seen_names:
        return f'duplicate tool name "{visible}"'
    if method in seen_methods:
        return (
            f'method "{method}" is already another tool\'s: a call names only its method, '
            "so each tool needs its own"
        )
    seen_names.add(visible)
    seen_methods.add(method)
    return None


def _where(index: int, tool: Any) -> str:
    name = getattr(tool, "name", None)
    return f"tool {index} ({name!r})" if isinstance(name, str) and name.strip() else f"tool {index}"


def validate(tools: Iterable[Tool]) -> list[Tool]:
    """Refuse what mm would skip, so that what the client accepts mm accepts."""
    tools = list(tools)
    seen_names: set[str] = set()
    seen_methods: set[str] = set()
    for index, tool in enumerate(tools):
        reason = problem(tool, seen_names, seen_methods)
        if reason is not None:
            raise Error(f"{_where(index, tool)}: {reason}")
    return tools


def keep_valid(tools: Iterable[Any], where: str) -> list[Tool]:
    """What a tool source answered, each entry checked on its own as mm does: a bad entry is
    skipped with a warning naming it and why; the others are kept."""
    kept: list[Tool] = []
    seen_names: set[str] = set()
    seen_methods: set[str] = set()
    for index, tool in enumerate(tools):
        reason = problem(tool, seen_names, seen_methods)
        if reason is None:
            kept.append(tool)
        else:
            log.warning("%s: %s skipped: %s", where, _where(index, tool), reason)
    return kept


def descriptions(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(tool._describe()) for tool in tools]


def split_params(params: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """Separate the session id mm puts in ``_meta`` from the model's arguments."""
    arguments = dict(params)
    meta = arguments.pop("_meta", None)
    session_id = meta.get(SESSION_META_KEY) if isinstance(meta, dict) else None
    return (session_id if isinstance(session_id, str) else None), arguments


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    return msgspec.to_builtins(ToolResult(content=[TextBlock(text=text)], isError=is_error))


async def run(tool: Tool, request: ToolRequest) -> dict[str, Any]:
    """Run one handler on arguments its input schema accepts (tool_arguments.py: else the
    model reads what is wrong, and the handler is not run); its text or its failure becomes
    the answer mm expects."""
    request.arguments, wrong = tool_arguments.check(tool.input_schema, request.arguments)
    if wrong is not None:
        return text_result(wrong, is_error=True)
    try:
        if inspect.iscoroutinefunction(tool.handle):
            value = await tool.handle(request)
        else:
            value = await tool_pool.run(tool.handle, request)
            if inspect.isawaitable(value):
                value = await value
    except asyncio.CancelledError:
        request.cancelled.set()  # a sync handler sees it; an async one got the CancelledError
        raise
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # the model's to read, not an exit
        failure = as_failure(exc)
        return text_result(str(failure) or type(failure).__name__, is_error=True)
    return capped(answer(value))


def _json_len(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")))  # as the transport writes it


def capped(result: dict[str, Any], limit: int = MAX_ANSWER_BYTES) -> dict[str, Any]:
    """``result`` with its text cut (head and tail kept, a note between) so that its JSON
    stays under ``limit`` bytes: a longer line would end mm's connection, and the model would
    read nothing at all."""
    if sum(len(b.get("text", "")) for b in result["content"]) * 6 + 1024 <= limit:
        return result  # even all escaped (6 bytes a character) it fits: not encoded to check
    size = _json_len(result)
    if size <= limit:
        return result
    for block in sorted(result["content"], key=lambda b: -len(b.get("text", ""))):
        text = block.get("text", "")
        for _ in range(4):  # the escaping ratio of the kept part may differ from the whole's
            other = size - _json_len(text)
            ratio = _json_len(text) / max(len(text), 1)
            keep = max(int((limit - other - 200) / ratio), 0)
            cut = len(text) - keep
            if cut <= 0:
                break
            half = keep // 2
            text = (
                f"{text[:half]}\n… [minime: {cut} characters cut here: the answer was too long "
                f"for the agent's connection] …\n{text[len(text) - (keep - half) :]}"
            )
            block["text"] = text
            size = _json_len(result)
            if size <= limit:
                log.info("a tool's answer was cut by %d characters to fit the agent's line", cut)
                return result
    return result


def answer(value: Any) -> dict[str, Any]:
    """A handler's return value as the model reads it: a string as is, ``None`` as empty text,
    anything else as its JSON; a value JSON cannot carry is a failed call naming its type."""
    if value is None:
        return text_result("")
    if isinstance(value, str):
        return text_result(value)
    try:
        return text_result(msgspec.json.encode(value).decode())
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        kind = type(value).__name__
        return text_result(
            f"the handler returned a value of type {kind}, which cannot be sent as JSON ({exc})",
            is_error=True,
        )
