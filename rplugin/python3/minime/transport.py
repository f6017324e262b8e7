"""The agent's stdio as JSON-RPC messages: the SDK's public ``Transport`` seam, made strict.

``acp.connect_to_agent(client, transport)`` takes any object with ``send``, ``receive`` and
``close``. This one reads the agent's stdout a line at a time and hands the SDK only
well-formed JSON-RPC objects: a line that is not JSON, not an object, a request whose ``id``
is not a number or string, a response the SDK could not file… is logged and dropped, so one
odd line cannot end the connection. It also answers ``$/cancel_request`` (which the SDK does
not route): each incoming request's id is put in :data:`REQUEST_ID` just before the message
goes to the SDK, whose handler task copies that context; :func:`cancellable` then files the
task under the id, and a cancel notification cancels it, answered -32800 by the SDK itself.
A notification that is neither ACP's ``session/update`` nor an extension (``_``-prefixed:
those go on to ``ext_notification``) is a debug line here: the SDK would log a vendor's own
(qwen-code's ``qwen/notify/...``) as an error with a traceback.
A ``stopReason`` the SDK's schema does not know (a newer agent's) would fail its validation and
lose the turn's answer: it travels under ``_meta`` (:data:`STOP_REASON_META`) instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeGuard, TypeVar

import msgspec

log = logging.getLogger("minime")

CANCEL_METHOD = "$/cancel_request"
REQUEST_CANCELLED = -32800
LOG_EXCERPT = 200

PROMPT_METHOD = "session/prompt"
LOAD_METHOD = "session/load"
CLIENT_NOTIFICATIONS = frozenset({"session/update"})  # the ones ACP sends a client
STOP_REASON_META = "minime.py/stopReason"  # where an unknown stopReason is passed through
KNOWN_STOP_REASONS = frozenset(
    {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}
)

REQUEST_ID: ContextVar[int | str | None] = ContextVar("minime_request_id", default=None)
T = TypeVar("T")


def _valid_id(value: Any) -> TypeGuard[int | str]:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _excerpt(line: bytes) -> str:
    text = line[:LOG_EXCERPT].decode("utf-8", "replace")
    return text + ("…" if len(line) > LOG_EXCERPT else "")


class LineTransport:
    """Newline-delimited JSON over the agent's stdin/stdout, checked message by message."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_end: Callable[[], None] | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_end = on_end
        self._write_lock = asyncio.Lock()
        self.running: dict[int | str, asyncio.Task[Any]] = {}
        self._cancelled: set[asyncio.Task[Any]] = set()
        self.ended = False
        self.dropped = 0  # lines ignored as not JSON-RPC (for tests and diagnostics)
        self._prompts: set[int | str] = set()  # ids of our session/prompt requests in flight
        self._loads: dict[int | str, Any] = {}  # ids of our session/load requests: session ids
        # Called with the session id once a session/load is answered, in order with the
        # updates around the answer (a replay update before it, a new one after it).
        self.on_load_answered: Callable[[Any], None] | None = None
        # Requests the SDK has no method for (session/delete in 0.12.1), sent by request():
        # their ids are strings of our own, the SDK's are numbers.
        self._own: dict[str, asyncio.Future[Any]] = {}
        self._own_ids = 0

    # -- outgoing -------------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        error = message.get("error")
        if isinstance(error, dict) and "data" in error and error["data"] is None:
            message = {**message, "error": {k: v for k, v in error.items() if k != "data"}}
        if message.get("method") == PROMPT_METHOD and _valid_id(message.get("id")):
            self._prompts.add(message["id"])
        if message.get("method") == LOAD_METHOD and _valid_id(message.get("id")):
            self._loads[message["id"]] = (message.get("params") or {}).get("sessionId")
        data = _encode(message) + b"\n"
        async with self._write_lock:
            self._writer.write(data)
            await self._writer.drain()

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request the SDK offers no method for and wait for its answer: its result, or
        a ``RequestError`` with the agent's error (``ConnectionError`` if the agent ends)."""
        from acp import RequestError

        self._own_ids += 1
        request_id = f"minime-{self._own_ids}"
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._own[request_id] = answer
        try:
            await self.send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            message = await answer
        finally:
            self._own.pop(request_id, None)
        if "error" in message:
            error = message["error"]
            raise RequestError(error.get("code", -32603), error.get("message"), error.get("data"))
        return message.get("result")

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()

    # -- incoming -------------------------------------------------------------------------

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if not line:
                self._end()
                return None
            line = line.strip()
            if not line:
                continue
            message = self._decode(line)
            if message is None:
                self.dropped += 1
                continue
            method = message.get("method")
            if method == CANCEL_METHOD:
                self._cancel(message.get("params"))
                continue
            if _unknown_notification(message, method):
                log.debug("ignored the agent's notification %s", method)
                continue
            is_request = "method" in message and "id" in message
            own = None if is_request else self._own.get(message.get("id"))  # type: ignore[arg-type]
            if own is not None:
                if not own.done():
                    own.set_result(message)
                continue
            if not is_request and message.get("id") in self._prompts:
                self._prompts.discard(message["id"])
                _pass_stop_reason(message)
            if not is_request and message.get("id") in self._loads:
                self._answered_load(self._loads.pop(message["id"]))
            REQUEST_ID.set(message["id"] if is_request else None)
            return message

    def _answered_load(self, session_id: Any) -> None:
        """Run ``on_load_answered`` after the updates handed to the SDK so far and before
        those after: the SDK runs each in a task of its own, started in order."""
        if self.on_load_answered is not None:
            asyncio.get_running_loop().call_soon(self.on_load_answered, session_id)

    def _end(self) -> None:
        if self.ended:
            return
        self.ended = True
        for answer in self._own.values():
            if not answer.done():
                answer.set_exception(ConnectionError("the agent's output ended"))
        if self._on_end is not None:
            self._on_end()

    async def _read_line(self) -> bytes:
        """One line however long (the SDK's own way); a broken pipe reads as the end."""
        chunks: list[bytes] = []
        try:
            while True:
                try:
                    chunks.append(await self._reader.readuntil(b"\n"))
                    return b"".join(chunks)
                except asyncio.LimitOverrunError as exc:
                    chunks.append(await self._reader.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
        except (ConnectionError, OSError) as exc:
            log.info("agent stdout: %s", exc)
            return b""
        return b"".join(chunks)

    def _decode(self, line: bytes) -> dict[str, Any] | None:
        """The message, or None (logged) when it is nothing the SDK may be handed."""
        try:
            message = _decode_json(line)
        except (ValueError, RecursionError):
            log.warning("ignored a line from the agent that is not JSON: %s", _excerpt(line))
            return None
        problem = _problem(message)
        if problem is not None:
            log.warning("ignored a message from the agent (%s): %s", problem, _excerpt(line))
            return None
        error = message.get("error")
        if "method" not in message and "error" in message and not _valid_error(error):
            # Keep the response (its request would wait for ever) with an error we can read.
            message["error"] = {
                "code": -32603,
                "message": "malformed error from the agent",
                "data": json.dumps(error, separators=(",", ":"))[:LOG_EXCERPT],
            }
        return message

    # -- $/cancel_request -----------------------------------------------------------------

    def _cancel(self, params: Any) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if not _valid_id(request_id):
            log.warning("ignored %s without a valid requestId: %r", CANCEL_METHOD, params)
            return
        task = self.running.get(request_id)
        if task is None or task.done():
            log.info("%s for no running request (%r)", CANCEL_METHOD, request_id)
            return
        self._cancelled.add(task)
        task.cancel()

    async def cancellable(self, work: Awaitable[T]) -> T:
        """Run a request's handler so that ``$/cancel_request`` for its id answers -32800."""
        from acp import RequestError

        request_id = REQUEST_ID.get()
        task = asyncio.current_task()
        if request_id is None or task is None:
            return await work
        self.running[request_id] = task
        try:
            return await work
        except asyncio.CancelledError:
            if task not in self._cancelled or task.uncancel() > 0:
                raise  # the connection is closing, or someone else cancelled it too
            raise RequestError(REQUEST_CANCELLED, "Request cancelled") from None
        finally:
            self._cancelled.discard(task)
            if self.running.get(request_id) is task:
                del self.running[request_id]


def _unknown_notification(message: dict[str, Any], method: Any) -> bool:
    return (
        method is not None
        and "id" not in message
        and method not in CLIENT_NOTIFICATIONS
        and not method.startswith("_")
    )


def _pass_stop_reason(response: dict[str, Any]) -> None:
    """Keep a prompt's unknown ``stopReason`` (a string) under ``_meta``; the schema gets one
    it knows. The key is always ours: an agent's own value under it is dropped."""
    result = response.get("result")
    if not isinstance(result, dict):
        return
    meta = result.get("_meta")
    if isinstance(meta, dict) and STOP_REASON_META in meta:
        meta = {k: v for k, v in meta.items() if k != STOP_REASON_META}
        result["_meta"] = meta
    reason = result.get("stopReason")
    if isinstance(reason, str) and reason not in KNOWN_STOP_REASONS:
        result["_meta"] = {**(meta if isinstance(meta, dict) else {}), STOP_REASON_META: reason}
        result["stopReason"] = "end_turn"


def _problem(message: Any) -> str | None:
    """Why ``message`` is not a JSON-RPC message the SDK can take, or None."""
    if not isinstance(message, dict):
        return f"not an object but {type(message).__name__}"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "method is not a string"
        if "id" in message and not _valid_id(message["id"]) and message["id"] is not None:
            return "request id is neither a number nor a string"
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return "params are neither an object nor an array"
        return None
    if "id" not in message:
        return "neither a request, a notification nor a response"
    if not _valid_id(message["id"]):
        return "response id is neither a number nor a string"
    return None


def _valid_error(error: Any) -> bool:
    return (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and isinstance(error.get("message", ""), str)
    )


# A tool's answer and the completed tool_call_update after it (the answer's text twice) are
# the big lines of a turn, and the next call's request waits behind them on this loop: msgspec
# reads and writes them 3-4 times faster than the json module (250 KB: 0.5 ms against 1.7 ms).


def _decode_json(line: bytes) -> Any:
    """``json.loads``, faster: what msgspec refuses (NaN, a lone surrogate's escape, a number
    beyond a float) goes to json, which decides as before."""
    try:
        return msgspec.json.decode(line)
    except msgspec.DecodeError:
        return json.loads(line)


def _encode(message: dict[str, Any]) -> bytes:
    """Compact JSON of a message. enc_hook/default=str: the SDK's invalid-params answer carries
    pydantic's error list, whose ``ctx`` can hold an exception object; unsent, the agent would
    wait for ever. A lone surrogate (or NaN) goes through json, escaped as before."""
    try:
        return msgspec.json.encode(message, enc_hook=str)
    except (TypeError, ValueError, OverflowError):
        return json.dumps(message, separators=(",", ":"), default=str).encode("utf-8")
