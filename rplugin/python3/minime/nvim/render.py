"""Streamed events, batched per turn float and flushed to Lua about once a frame."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from ..model import Event

log = logging.getLogger("minime")

FLUSH_SECONDS = 0.016
# Nesting kept as Lua tables inside an event (its rawInput, plan entries…); deeper parts go as
# JSON text. Neovim's msgpack-RPC drops the channel beyond about 32 levels, and the event
# itself sits 4 levels down (the call's arguments, the batch, the event, its field).
MAX_DEPTH = 16
TOO_DEEP_TEXT = 100_000


def clean(text: str) -> str:
    """msgpack refuses lone surrogates (JSON escapes can carry them); Neovim gets U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def clean_all(value: Any, depth: int = 0) -> Any:
    """``clean`` through JSON-like data (an agent's rawInput, plan entries, usage…); what is
    nested deeper than MAX_DEPTH becomes its JSON text."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict | list | tuple) and depth >= MAX_DEPTH:
        return clean(_json_text(value))
    if isinstance(value, dict):
        return {clean(str(k)): clean_all(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_all(v, depth + 1) for v in value]
    return value


def _json_text(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (RecursionError, ValueError, TypeError):
        return "(nested too deeply to show)"
    if len(text) > TOO_DEEP_TEXT:
        return text[:TOO_DEEP_TEXT] + "…"
    return text


def to_lua(event: Event) -> dict[str, Any]:
    """The table ``require('minime.ui.turn').apply`` receives for one library event. Never
    raises: an event that cannot be shown becomes a notice, and the turn goes on."""
    if event.kind in ("text", "thinking", "user"):  # the stream's bulk: nothing else to clean
        return {"kind": event.kind, "text": clean(event.text)}
    try:
        return clean_all(_to_lua(event))
    except Exception as exc:  # a bug here must not leave the turn running for ever
        log.exception("cannot show a %s event", event.kind)
        if event.kind == "done":
            return {"kind": "done", "stop_reason": event.stop_reason, "usage": None}
        return {
            "kind": "notice",
            "text": clean(f"(a {event.kind} event could not be shown: {exc})"),
        }


def _to_lua(event: Event) -> dict[str, Any]:
    if event.kind in ("text", "thinking", "user"):
        return {"kind": event.kind, "text": clean(event.text)}
    if event.kind in ("tool_call", "tool_update") and event.call is not None:  # Lua upserts
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
    """Queues events per key (the cwd) on the ACP loop; one Lua call per key per flush.

    A flush goes out at the loop's next turn after an event, but no sooner than FLUSH_SECONDS
    after the previous one, unless the event ends a turn (nothing more to batch it with). So a
    lone chunk is shown at once, and a burst (the agent's pipe holds ~90 chunks, handled in one
    turn of the loop) leaves in one call. A flush on a timer only (16 ms after the first event)
    held the last chunk of the 10,000-chunk stream back by that much, and more while a burst
    kept the loop from running timers.
    """

    def __init__(self, send: Callable[[str, list[dict[str, Any]]], None]) -> None:
        self._send = send
        self._pending: dict[str, list[dict[str, Any]]] = {}
        self._handle: asyncio.Handle | None = None
        self._soon = False  # the pending flush runs at the loop's next turn
        self._last_flush = float("-inf")

    def push(self, key: str, item: dict[str, Any]) -> None:
        batch = self._pending.setdefault(key, [])
        last = batch[-1] if batch else None
        if (
            last is not None
            and item["kind"] in ("text", "thinking")
            and last["kind"] == item["kind"]
        ):
            # Parts joined at the flush: `+=` on each chunk copies the batch so far (quadratic).
            parts = last["text"]
            if isinstance(parts, str):
                last["text"] = parts = [parts]
            parts.append(item["text"])
        else:
            batch.append(item)
        ends_turn = item["kind"] == "done"
        if self._handle is not None and (self._soon or not ends_turn):
            return
        if self._handle is not None:
            self._handle.cancel()
        loop = asyncio.get_running_loop()
        wait = 0.0 if ends_turn else self._last_flush + FLUSH_SECONDS - loop.time()
        self._soon = wait <= 0
        if self._soon:
            self._handle = loop.call_soon(self.flush)
        else:
            self._handle = loop.call_later(wait, self.flush)

    def flush(self) -> None:
        self._handle = None
        self._last_flush = asyncio.get_running_loop().time()
        pending, self._pending = self._pending, {}
        for key, batch in pending.items():
            for item in batch:
                if isinstance(item.get("text"), list):
                    item["text"] = "".join(item["text"])
            self._send(key, batch)
