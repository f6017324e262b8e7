"""Client tools as mm keeps them: the list validated, the model's view, what it reads back.

Pure functions (shared/spec/acp-client-tools.md to the letter); the tests import them.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from .wire import RpcError

META_TOOLS = "org.mini-me/tools"
LIST_METHOD = "_org.mini-me/tools/list"
SESSION_META = "org.mini-me/sessionId"
NOT_A_LIST = (
    '"org.mini-me/tools" is not a list of tools; a client that answers '
    "_org.mini-me/tools/list needs acp.clientTools.discovery: request"
)


def json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def model_name(name: str) -> str:
    """``client_`` + the name with every run outside [A-Za-z0-9] made one ``_``, ends trimmed."""
    return "client_" + re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")


@dataclass
class ClientTool:
    """A client tool as mm keeps it: the model's name, description and schema, and the method."""

    name: str
    model_name: str
    method: str
    description: str
    schema: dict[str, Any]
    required: list[str]

    def as_model_sees_it(self) -> dict[str, Any]:
        return {
            "name": self.model_name,
            "description": self.description,
            "inputSchema": self.schema,
            "method": self.method,
        }


def model_tool(entry: dict[str, Any]) -> ClientTool:
    """The schema as the model sees it (spec: "Schema as the model sees it")."""
    name, method = entry["name"], entry["method"]
    schema = copy.deepcopy(entry.get("inputSchema") or {})
    schema.pop("$schema", None)
    if schema.get("additionalProperties") is False:
        del schema["additionalProperties"]
    required = schema.pop("required", None)
    required = [str(r) for r in required] if isinstance(required, list) else []
    schema["type"] = "object"
    if not isinstance(schema.get("properties"), dict):
        schema["properties"] = {}
    for prop in schema["properties"].values():
        if isinstance(prop, dict) and isinstance(prop.get("enum"), list):
            values = prop.pop("enum")
            shown = (v if isinstance(v, str) else json_text(v) for v in values)
            one_of = "One of: " + ", ".join(shown)
            described = prop.get("description")
            prop["description"] = f"{described} {one_of}." if described else f"{one_of}."
    description = entry.get("description") or f"Tool provided by the editor ({method})."
    if required:
        description = f"{description} Required parameters: {', '.join(required)}"
    return ClientTool(name, model_name(name), method, description, schema, required)


def _shape_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return f"expected a JSON object, got {json_kind(entry)}"
    for key in ("name", "description", "method"):
        if key in entry and entry[key] is not None and not isinstance(entry[key], str):
            return f'"{key}" is a {json_kind(entry[key])}, not a string'
    schema = entry.get("inputSchema")
    if schema is not None and not isinstance(schema, dict):
        return f'"inputSchema" is a {json_kind(schema)}, not an object'
    return None


def validate_tools(entries: list[Any]) -> tuple[list[ClientTool], list[str]]:
    """The valid tools sorted by model name, and the stderr line of every skipped entry."""
    tools: dict[str, ClientTool] = {}
    lines = []
    for index, entry in enumerate(entries):
        reason = _shape_problem(entry)
        if reason is not None:
            reason = f"not a tool description: {reason}"
        elif not (entry.get("name") or "").strip():
            reason = "no name"
        elif not (entry.get("method") or "").startswith("_"):
            method = json_text(entry.get("method") or "")
            reason = f'method {method} must start with "_" (an ACP extension method)'
        elif (entry.get("inputSchema") or {}).get("type", "object") != "object":
            got = json_text(entry["inputSchema"]["type"])
            reason = f'inputSchema.type must be "object", got {got}'
        elif model_name(entry["name"]) in tools:
            reason = f'duplicate tool name "{model_name(entry["name"])}"'
        if reason is not None:
            lines.append(f"[acp] client tools: entry {index} skipped: {reason}")
            continue
        tool = model_tool(entry)
        tools[tool.model_name] = tool
    return [tools[name] for name in sorted(tools)], lines


def error_text(error: RpcError) -> str:
    """A JSON-RPC error answer as the model reads it: Go's ``RequestError.Error()``, with data."""
    return f"[client tool error: {error}]"


def render_result(result: Any) -> tuple[str, bool]:
    """What the model reads from a tool's answer, and whether the call failed."""
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        parts = []
        for block in result["content"]:
            kind = block.get("type") if isinstance(block, dict) else json_kind(block)
            if kind == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(f"[client tool: non-text content of type {kind} skipped]")
        text = "".join(parts)
        if result.get("isError") is True:
            return f"[client tool error: {text}]", True
        return text, False
    if isinstance(result, str):
        return result, False
    return json_text(result), False


def truncate(text: str, limit: int) -> str:
    """Exactly ``limit`` characters when longer: head and tail kept, the cut marked between.

    The marker counts the characters it replaces, so its own length is part of the sum.
    """
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    for _ in range(4):  # the count's digits settle within a step or two
        marker = f"\n[… {cut} characters cut …]\n"
        cut = len(text) - (limit - len(marker))
    marker = f"\n[… {cut} characters cut …]\n"
    room = limit - len(marker)
    if room < 0:
        return text[:limit]
    head = room - room // 2
    tail = room - head
    return text[:head] + marker + (text[-tail:] if tail else "")
