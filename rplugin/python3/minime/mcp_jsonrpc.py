"""JSON-RPC 2.0 as MCP's revisions frame it, for the editor's MCP server: what one decoded
message is (a request, a notification, an answer to us, or invalid and why), and the error
line that answers it.

A bad message costs that message, never the connection: it is answered as JSON-RPC says
(-32700 not JSON, -32600 not a request, -32602 bad params) and the next line is read. MCP
narrows JSON-RPC: a request's id is a string or an integer, never null (a float, a bool, an
object or a list is no id either). The id of an error that answers a message whose id cannot
be read: ``null`` up to 2025-06-18 (JSON-RPC's rule; those MCP schemas have no way to say it),
left out from 2025-11-25 on (its schema makes the id optional for this case).
"""

from __future__ import annotations

from typing import Any, Literal, TypeGuard

import msgspec

# The revisions reached through the ``initialize`` handshake, oldest first.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# The one revision that requires JSON-RPC batches (2025-06-18 took them out again).
BATCH_VERSION = "2025-03-26"
# From this revision on, an error whose request id cannot be read carries no id.
ID_OPTIONAL_FROM = "2025-11-25"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestId = str | int


def readable_id(value: Any) -> TypeGuard[RequestId]:
    """A request id MCP allows: a string or an integer (a bool is not one, nor is 1.0)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class Message(msgspec.Struct, frozen=True):
    """One decoded message, sorted: ``kind`` says what to do with it.

    ``invalid`` carries the code and the words of its error and the id to answer with (None:
    unreadable); ``answer`` (a response to a request of ours: we send none) is ignored.
    """

    kind: Literal["request", "notification", "answer", "invalid"]
    id: RequestId | None = None
    method: str = ""
    params: dict[str, Any] = msgspec.field(default_factory=dict)
    code: int = 0
    problem: str = ""


def sort(message: Any) -> Message:
    """What one element of the stream (or of a batch) is."""
    if not isinstance(message, dict):
        return Message("invalid", code=INVALID_REQUEST, problem="not a JSON-RPC message")
    has_id = "id" in message
    method = message.get("method")
    request_id = message.get("id")
    known_id = request_id if readable_id(request_id) else None
    if "method" not in message:
        if "result" in message or "error" in message:
            return Message("answer", id=known_id)
        return Message(
            "invalid", id=known_id, code=INVALID_REQUEST, problem="a request needs a method"
        )
    if has_id and known_id is None:
        return Message(
            "invalid",
            code=INVALID_REQUEST,
            problem=f"a request id must be a string or an integer, got {_kind(request_id)}",
        )
    if message.get("jsonrpc") != "2.0":
        return Message(
            "invalid", id=known_id, code=INVALID_REQUEST, problem='jsonrpc must be "2.0"'
        )
    if not isinstance(method, str):
        return Message(
            "invalid", id=known_id, code=INVALID_REQUEST, problem="method must be a string"
        )
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        if not has_id:  # a notification is never answered: read as one without params
            return Message("notification", method=method)
        return Message(
            "invalid", id=known_id, code=INVALID_PARAMS, problem="params must be an object"
        )
    return Message(
        "request" if has_id else "notification",
        id=known_id,
        method=method,
        params=params or {},
    )


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return f"the number {value!r}"
    return "an object" if isinstance(value, dict) else "a list"


def error(request_id: RequestId | None, code: int, words: str, version: str | None) -> dict:
    """An error response; without a readable id, as the agreed ``version`` frames it."""
    body: dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not None:
        body["id"] = request_id
    elif version is None or _before(version, ID_OPTIONAL_FROM):
        body["id"] = None
    body["error"] = {"code": code, "message": words}
    return body


def result(request_id: RequestId, value: Any) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def _before(version: str, other: str) -> bool:
    known = PROTOCOL_VERSIONS
    return version in known and known.index(version) < known.index(other)


def encode(body: Any) -> bytes:
    return msgspec.json.encode(body)
