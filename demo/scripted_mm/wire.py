"""JSON-RPC over JSON lines the way mm's Go ACP SDK speaks it (github.com/coder/acp-go-sdk v0.13.5).

Written here rather than borrowed from the Python ACP SDK on purpose: the client under test is
built on that SDK, and an agent built on it too would agree with it by construction. What mm's
SDK does, and this module does with it (connection.go, errors.go):

- its own requests are numbered from 1 (``nextID.Add(1)``); the Python SDK starts at 0;
- a plain Go error returned by a handler answers ``{"code":-32603,"message":"Internal error",
  "data":{"error":"<text>"}}``; an unknown method ``-32601`` with ``data: {"method": …}``; params
  that do not decode ``-32602`` with ``data: {"error": …}``; a cancelled request ``-32800``;
- an error answer it receives reads, as text, ``{"code":…,"message":…,"data":…}`` (``data`` left
  out only when absent): ``RequestError.Error()``;
- JSON is written as ``encoding/json`` writes it: ``<``, ``>``, ``&``, U+2028 and U+2029 escaped,
  invalid UTF-8 replaced by U+FFFD, map keys sorted;
- incoming requests each run concurrently, notifications one at a time in order, and
  ``$/cancel_request`` at once; a line that does not parse is logged and skipped; a line longer
  than 10 MiB ends the connection (``bufio.Scanner: token too long``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

CANCEL_REQUEST = "$/cancel_request"
MAX_LINE = 10 * 1024 * 1024  # bufio.Scanner's buffer in Connection.receive
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads pairs the valid ones
_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}

Handler = Callable[[str, Any], Awaitable[Any]]
Notified = Callable[[str, Any], Awaitable[None]]


def go_json(value: Any, sort_keys: bool = False) -> str:
    """``json.Marshal``'s text: compact, UTF-8, HTML characters escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys)
    if any(c in text for c in _GO_ESCAPES):
        text = "".join(_GO_ESCAPES.get(c, c) for c in text)
    return text


def go_bytes(text: str) -> bytes:
    """UTF-8, with what Go cannot hold in a string (a lone surrogate) as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


def go_value(value: Any) -> Any:
    """What Go's decoder makes of a JSON value: a lone surrogate escape (``"\\ud800"``) is U+FFFD,
    so two keys that differ only there become one (the last wins)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [go_value(v) for v in value]
    if isinstance(value, dict):
        return {go_value(k): go_value(v) for k, v in value.items()}
    return value


class RpcError(Exception):
    """A JSON-RPC error (Go's ``*acp.RequestError``); ``str()`` is its ``Error()`` text."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def obj(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:  # `json:"data,omitempty"`
            body["data"] = self.data
        return body

    def __str__(self) -> str:
        text = go_json({"code": self.code, "message": self.message})
        if self.data is None:
            return text
        return text[:-1] + ',"data":' + go_json(self.data, sort_keys=True) + "}"


class GoError(Exception):
    """A plain Go ``error`` returned by a handler: it travels as ``Internal error``, its text in
    ``data.error``."""


def internal_error(text: str) -> RpcError:
    """What a plain Go ``error`` returned by a handler becomes (``toReqErr``)."""
    return RpcError(-32603, "Internal error", {"error": text})


def method_not_found(method: str) -> RpcError:
    return RpcError(-32601, "Method not found", {"method": method})


def invalid_params(text: str) -> RpcError:
    return RpcError(-32602, "Invalid params", {"error": text})


def request_cancelled() -> RpcError:
    return RpcError(-32800, "Request cancelled", {"error": "context canceled"})


def deadline_exceeded() -> RpcError:
    """A request whose context timed out: ``toReqErr(context.DeadlineExceeded)``."""
    return internal_error("context deadline exceeded")


def _slog(level: str, message: str, attrs: dict[str, Any]) -> None:
    shown = " ".join(f"{k}={json.dumps(str(v), ensure_ascii=False)}" for k, v in attrs.items())
    sys.stderr.write(f"{time.strftime('%Y/%m/%d %H:%M:%S')} {level} {message} {shown}\n")
    sys.stderr.flush()


def slog_error(message: str, **attrs: Any) -> None:
    """A line of Go's default logger on stderr, as the SDK logs what it drops."""
    _slog("ERROR", message, attrs)


def slog_info(message: str, **attrs: Any) -> None:
    _slog("INFO", message, attrs)


def id_key(raw: Any) -> str:
    """``canonicalJSONRPCIDKey``: 1, 1.0 and 1e0 are one id; "1" is another."""
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    return json.dumps(raw)


class Connection:
    """One JSON-lines peer: requests in and out, notifications, and a trace of every line."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        handle: Handler,
        notified: Notified,
        trace: TextIO | None = None,
    ) -> None:
        self.reader, self.writer = reader, writer
        self.handle, self.notified = handle, notified
        self.trace = trace
        self.ids = itertools.count(1)
        self.pending: dict[str, asyncio.Future[Any]] = {}
        self.inflight: dict[str, asyncio.Task[None]] = {}
        self.notifications: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()

    # --- writing

    async def _write(self, message: dict[str, Any]) -> None:
        line = go_json(message)
        self._trace("out", line)
        self.writer.write(go_bytes(line) + b"\n")  # one write: lines never interleave
        await self.writer.drain()

    async def raw(self, line: bytes) -> None:
        """A line straight onto stdout, as is (not JSON, not UTF-8: whatever a test needs)."""
        if self.trace is not None:
            self.trace.write(go_json({"dir": "raw", "msg": line.decode("utf-8", "replace")}))
            self.trace.write("\n")
        self.writer.write(line if line.endswith(b"\n") else line + b"\n")
        await self.writer.drain()

    def _trace(self, direction: str, line: str) -> None:
        """The line itself is the trace's ``msg``: the bytes that crossed, not a re-encoding."""
        if self.trace is not None:
            self.trace.write(f'{{"dir":"{direction}","msg":{line}}}\n')

    async def notify(self, method: str, params: Any) -> None:
        await self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        """mm's request; on timeout or cancellation, ``$/cancel_request`` for it (Go's way)."""
        request_id = next(self.ids)
        key = id_key(request_id)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[key] = future
        try:
            await self._write(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            await self.notify(CANCEL_REQUEST, {"requestId": request_id})
            raise deadline_exceeded() from None
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await self.notify(CANCEL_REQUEST, {"requestId": request_id})
            raise
        finally:
            self.pending.pop(key, None)

    # --- reading

    async def run(self) -> str:
        """Read until the peer closes its side; returns why the connection ended."""
        notifier = asyncio.ensure_future(self._notifications())
        try:
            while True:
                try:
                    line = await self.reader.readuntil(b"\n")
                except asyncio.IncompleteReadError as end:
                    if end.partial.strip():
                        self._line(end.partial)
                    return "peer connection closed"
                except asyncio.LimitOverrunError:
                    return "bufio.Scanner: token too long"
                self._line(line)
        finally:
            await self.notifications.put(None)
            with contextlib.suppress(asyncio.CancelledError):
                await notifier
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(internal_error("peer disconnected before response"))

    def _line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            return
        try:
            message = json.loads(text)
            if "\\u" in text:  # only an escape can make a lone surrogate
                message = go_value(message)
            if not isinstance(message, dict):
                raise ValueError(f"cannot unmarshal {type(message).__name__} into anyMessage")
            error = message.get("error")
            if error is not None and not _is_error_object(error):
                raise ValueError("cannot unmarshal error into acp.RequestError")
        except ValueError as exc:
            self._trace("bad", json.dumps(text))
            slog_error("failed to parse incoming message", err=exc, raw=text)
            return
        self._trace("in", text)
        has_id, method = message.get("id") is not None, message.get("method")
        if method == CANCEL_REQUEST and not has_id:
            self._cancel_request(message.get("params"))
        elif has_id and not method:
            self._response(message)
        elif method and isinstance(method, str):
            if has_id:
                key = id_key(message["id"])
                self.inflight[key] = asyncio.ensure_future(self._serve(key, message))
            else:
                self.notifications.put_nowait((method, message.get("params")))
        else:
            slog_error("received message with neither id nor method", raw=text)

    def _response(self, message: dict[str, Any]) -> None:
        future = self.pending.pop(id_key(message["id"]), None)
        if future is None or future.done():
            return
        error = message.get("error")
        if error is not None:
            future.set_exception(RpcError(error["code"], error["message"], error.get("data")))
        else:
            future.set_result(message.get("result"))

    def _cancel_request(self, params: Any) -> None:
        raw = params.get("requestId") if isinstance(params, dict) else None
        task = self.inflight.get(id_key(raw)) if raw is not None else None
        if task is not None:
            task.cancel()

    async def _serve(self, key: str, message: dict[str, Any]) -> None:
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            answer["result"] = await self.handle(message["method"], message.get("params"))
        except RpcError as exc:
            answer["error"] = exc.obj()
        except asyncio.CancelledError:
            answer["error"] = request_cancelled().obj()
        except Exception as exc:  # a plain Go error
            answer["error"] = internal_error(str(exc)).obj()
        finally:
            self.inflight.pop(key, None)
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self._write(answer)

    async def _notifications(self) -> None:
        while (item := await self.notifications.get()) is not None:
            method, params = item
            try:
                await self.notified(method, params)
            except RpcError as exc:
                if not (exc.code == -32601 and method.startswith("_")):
                    slog_error("failed to handle notification", method=method, err=exc)


def _is_error_object(error: Any) -> bool:
    return (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and not isinstance(error.get("code"), bool)
        and isinstance(error.get("message", ""), str)
    )


async def stdio(limit: int = MAX_LINE) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Non-blocking stdin and stdout as asyncio streams."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer
