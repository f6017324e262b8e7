"""``$/cancel_request`` for incoming requests — the one place that reaches into the ACP SDK.

mm sends ``$/cancel_request {requestId}`` when a client-tool call times out or its turn is
cancelled. agent-client-protocol 0.12.1 routes only ``_``-prefixed extension methods, so it
logs this notification as unknown and lets the handler run on. Here each incoming request's
task is remembered by its id; a cancel notification cancels that task and the request is
answered -32800 (Request cancelled), as JSON-RPC/LSP and ACP specify.

Checked against agent-client-protocol==0.12.1 (pinned in pyproject.toml): it relies on
``ClientSideConnection._conn`` and, on that ``Connection``, ``_process_message``,
``_execute_request``, ``_transport``, ``_tasks``, ``_notify_observers`` and ``_closed``.
tests/test_cancel_request.py fails loudly if an upgrade moves any of them.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger("minime")

METHOD = "$/cancel_request"
REQUEST_CANCELLED = -32800
_REQUIRED = (
    "_process_message",
    "_execute_request",
    "_transport",
    "_tasks",
    "_notify_observers",
    "_closed",
)


class SdkChanged(RuntimeError):
    """The SDK no longer has the internals this module was written against."""


def install(client_connection: Any) -> dict[Any, asyncio.Task[Any]]:
    """Teach one ``acp.ClientSideConnection`` to honour ``$/cancel_request``.

    Returns the live map of request id → handler task (for tests and diagnostics).
    """
    from acp.connection import StreamDirection

    inner = getattr(client_connection, "_conn", None)
    missing = [name for name in _REQUIRED if not hasattr(inner, name)]
    if inner is None or missing:
        raise SdkChanged(
            "agent-client-protocol changed its Connection internals "
            f"(missing: {', '.join(missing) or '_conn'}); minime.cancel_request needs updating"
        )
    running: dict[Any, asyncio.Task[Any]] = {}
    original = inner._process_message

    async def answer(message: dict[str, Any]) -> None:
        try:
            payload = await inner._execute_request(message)
        except asyncio.CancelledError:
            if inner._closed:
                raise
            payload = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": REQUEST_CANCELLED, "message": "Request cancelled"},
            }
        await inner._transport.send(payload)
        inner._notify_observers(StreamDirection.OUTGOING, payload)

    def process(message: dict[str, Any]) -> None:
        method = message.get("method")
        if method == METHOD:
            params = message.get("params")
            request_id = params.get("requestId") if isinstance(params, dict) else None
            task = running.get(request_id)
            if task is None:
                log.info("$/cancel_request for no running request (%r)", request_id)
            else:
                task.cancel()
            return
        if method is not None and "id" in message:
            request_id = message["id"]
            task = inner._tasks.create(answer(message), name="minime.request")
            running[request_id] = task
            task.add_done_callback(lambda _t, rid=request_id: running.pop(rid, None))
            return
        original(message)

    inner._process_message = process
    return running
