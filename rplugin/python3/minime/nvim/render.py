"""Streamed events, batched per turn float and flushed to Lua about once a frame."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..model import Event

FLUSH_SECONDS = 0.016


def clean(text: str) -> str:
    """msgpack refuses lone surrogates (JSON escapes can carry them); Neovim gets U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def to_lua(event: Event) -> dict[str, Any]:
    """The table ``require('minime.ui.turn').apply`` receives for one library event."""
    if event.kind in ("text", "thinking", "user"):
        return {"kind": event.kind, "text": clean(event.text)}
    if event.kind == "tool_call" and event.call is not None:
        call = event.call
        return {
            "kind": "tool_call",
            "id": call.id,
            "title": clean(call.title),
            "tool_kind": call.kind,
            "status": call.status,
            "input": call.input,
        }
    if event.kind == "tool_result" and event.call is not None:
        return {
            "kind": "tool_result",
            "id": event.call.id,
            "status": event.status,
            "output": clean(event.output or ""),
        }
    if event.kind == "plan":
        return {"kind": "plan", "entries": event.entries}
    if event.kind == "done":
        return {"kind": "done", "stop_reason": event.stop_reason, "usage": event.usage}
    return {"kind": "notice", "text": f"(unknown event {event.kind})"}


class Renderer:
    """Queues events per key (the cwd) on the ACP loop; one Lua call per key per flush."""

    def __init__(self, send: Callable[[str, list[dict[str, Any]]], None]) -> None:
        self._send = send
        self._pending: dict[str, list[dict[str, Any]]] = {}
        self._scheduled = False

    def push(self, key: str, item: dict[str, Any]) -> None:
        batch = self._pending.setdefault(key, [])
        last = batch[-1] if batch else None
        if (
            last is not None
            and item["kind"] in ("text", "thinking")
            and last["kind"] == item["kind"]
        ):
            last["text"] += item["text"]
        else:
            batch.append(item)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_later(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        self._scheduled = False
        pending, self._pending = self._pending, {}
        for key, batch in pending.items():
            self._send(key, batch)
