"""Client tools: their declaration, the checks mm applies to a list, and the call itself."""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec

from .errors import Error
from .model import TextBlock, ToolDescription, ToolRequest, ToolResult
from .threads import as_failure, tool_pool

DEFAULT_METHOD_PREFIX = "_minime.py/tools/"
SESSION_META_KEY = "org.mini-me/sessionId"


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

    def describe(self) -> ToolDescription:
        return ToolDescription(
            name=self.name,
            method=self.wire_method,
            description=self.description,
            inputSchema=self.input_schema,
        )


ToolSource = Sequence[Tool] | Callable[[str, str], Iterable[Tool]]


def model_name(name: str) -> str:
    """The name the model sees: ``open buffers`` → ``client_open_buffers``."""
    return "client_" + re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")


def validate(tools: Iterable[Tool]) -> list[Tool]:
    """Refuse what mm would skip, so that what the client accepts mm accepts."""
    checked: list[Tool] = []
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        if not isinstance(tool, Tool):
            raise Error(f"tool {index}: not a minime.Tool: {tool!r}")
        where = f"tool {index} ({tool.name!r})"
        if not isinstance(tool.name, str) or not tool.name.strip():
            raise Error(f"tool {index}: no name")
        if tool.handle is None or not callable(tool.handle):
            raise Error(f"{where}: no handle")
        for field, value in (("description", tool.description), ("method", tool.wire_method)):
            if value is not None and not isinstance(value, str):
                raise Error(f"{where}: {field} must be a string, got {type(value).__name__}")
        if not tool.wire_method.startswith("_"):
            method = tool.wire_method
            raise Error(f'{where}: method "{method}" must start with "_" (an ACP extension method)')
        schema = tool.input_schema
        if schema is not None:
            if not isinstance(schema, dict):
                raise Error(f"{where}: inputSchema must be an object, got {type(schema).__name__}")
            if schema.get("type", "object") != "object":
                raise Error(f'{where}: inputSchema.type must be "object", got {schema["type"]!r}')
        visible = model_name(tool.name)
        if visible in seen:
            raise Error(f'{where}: duplicate tool name "{visible}"')
        seen.add(visible)
        checked.append(tool)
    return checked


def descriptions(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(tool.describe()) for tool in tools]


def split_params(params: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """Separate the session id mm puts in ``_meta`` from the model's arguments."""
    arguments = dict(params)
    meta = arguments.pop("_meta", None)
    session_id = meta.get(SESSION_META_KEY) if isinstance(meta, dict) else None
    return (session_id if isinstance(session_id, str) else None), arguments


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    return msgspec.to_builtins(ToolResult(content=[TextBlock(text=text)], isError=is_error))


async def run(tool: Tool, request: ToolRequest) -> dict[str, Any]:
    """Run one handler; its text or its failure becomes the answer mm expects."""
    try:
        if inspect.iscoroutinefunction(tool.handle):
            value = await tool.handle(request)
        else:
            value = await tool_pool.run(tool.handle, request)
            if inspect.isawaitable(value):
                value = await value
    except asyncio.CancelledError:
        raise
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # the model's to read, not an exit
        failure = as_failure(exc)
        return text_result(str(failure) or type(failure).__name__, is_error=True)
    if not isinstance(value, str):
        value = msgspec.json.encode(value).decode()
    return text_result(value)
