"""Streamed events, batched per turn float and flushed to Lua about once a frame."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ..model import Event, ToolCallLocation
from . import events
from .events import STREAMED, LuaEvent
from .wire_text import MAX_DEPTH, clean, clean_all

__all__ = ["FLUSH_SECONDS", "MAX_DEPTH", "Renderer", "clean", "clean_all", "to_lua"]

log = logging.getLogger("minime")

FLUSH_SECONDS = 0.016
# Drawing shares Neovim's main loop with the editor tools' Lua: a batch drawn just before a
# tool's request arrives delays that answer by the drawing (and, with a UI, the redraw). So
# while an editor tool call is in flight, and for QUIET_SECONDS after one (mm sends the next
# call's tool_call, its request, right after the answer) or after a tool event, a batch waits,
# but never longer than MAX_HOLD_SECONDS: in a burst of calls the float still moves.
QUIET_SECONDS = 0.008
MAX_HOLD_SECONDS = 0.2
# What one batch may hold (events, and bytes of text, output and diffs). In a burst of calls
# that never pauses the batch held MAX_HOLD_SECONDS grew to ~130 calls' updates at 100
# buffers, and the call that came while Neovim drew them waited 20-40 ms (issue 34). Now the
# float moves by a slice at a time: during a burst a slice per MAX_HOLD_SECONDS, else a slice
# a frame (FLUSH_SECONDS) until nothing is left.
SLICE_EVENTS = 12
SLICE_BYTES = 32 * 1024

_TOOL_EVENTS = (events.ToolCallShown, events.ToolResultShown)

# What the float shows of a tool's output: its first SHOWN_LINES lines, each clipped past
# SHOWN_LINE_BYTES bytes (lua/minime/ui/turn/tools.lua's MAX_OUTPUT_LINES, text.lua's
# CLIP_BYTES). A result is cut to that here: an agent file's maxOutput may let 400,000
# characters through in each completed update, and every byte sent would cross msgpack and be
# split in Lua on the main loop that answers the next tool call.
SHOWN_LINES = 2000
SHOWN_LINE_BYTES = 12000

_CHUNKS: dict[str, type[events.Text | events.Thinking | events.User]] = {
    "text": events.Text,
    "thinking": events.Thinking,
    "user": events.User,
}


def to_lua(event: Event) -> LuaEvent:
    """The event ``require('minime.ui.turn').apply`` receives for one library event. Never
    raises: an event that cannot be shown becomes a notice, and the turn goes on."""
    chunk = _CHUNKS.get(event.kind)
    if chunk is not None:  # the stream's bulk: nothing else to clean
        mid = event.message_id
        return chunk(clean(event.text), None if mid is None else clean(mid))
    try:
        return _to_lua(event)
    except Exception as exc:  # a bug here must not leave the turn running for ever
        log.exception("cannot show a %s event", event.kind)
        if event.kind == "done":
            return events.Done(stop_reason=_text_or_none(event.stop_reason))
        return events.Notice(clean(f"(a {event.kind} event could not be shown: {exc})"))


def _to_lua(event: Event) -> LuaEvent:
    if event.kind in ("tool_call", "tool_update") and event.call is not None:
        call = event.call  # as the turn merged its updates: Lua shows it as it is
        return events.ToolCallShown(
            id=clean(call.id),
            title=_text_or_none(call.title),
            tool_kind=clean(call.acp_kind),
            status=_text_or_none(call.status),
            input=clean_all(call.input, 1),  # depth: the event's own field
            diffs=_diffs(call.content),
            locations=_locations(call.locations),
        )
    if event.kind == "tool_result" and event.call is not None:
        output, more = shown_output(event.output or "")
        return events.ToolResultShown(
            id=clean(event.call.id),
            status=_text_or_none(event.status),
            output=clean(output),
            more_lines=more,
            diffs=_diffs(event.call.content),
            locations=_locations(event.call.locations),
        )
    if event.kind == "terminal":
        return events.TerminalShown(
            terminal_id=clean(event.text),
            output=clean(event.output or ""),
            id=None if event.call is None else clean(event.call.id),
            status=_text_or_none(event.status),
        )
    if event.kind == "plan":
        return events.Plan(clean_all(event.entries, 1))
    if event.kind == "done":
        return events.Done(
            stop_reason=_text_or_none(event.stop_reason), usage=clean_all(event.usage, 1)
        )
    return events.Notice(clean(f"(unknown event {event.kind})"))


def shown_output(output: str) -> tuple[str, int]:
    """The part of a tool's output the float can show, and how many lines were left out (as
    Lua counts them: a last empty line is none). A line past SHOWN_LINE_BYTES characters keeps
    one more than that: Lua still clips it with "…", at a character boundary."""
    if len(output) <= SHOWN_LINE_BYTES:
        return output, 0
    lines = output.split("\n", SHOWN_LINES)
    rest = lines.pop() if len(lines) > SHOWN_LINES else ""
    limit = SHOWN_LINE_BYTES + 1
    if not rest and all(len(line) <= limit for line in lines):
        return output, 0
    more = rest.count("\n") + (0 if not rest or rest.endswith("\n") else 1)
    return "\n".join(line if len(line) <= limit else line[:limit] for line in lines), more


def _diffs(content: list[Any]) -> list[dict[str, str]] | None:
    """The diff items of a tool's content ({path, oldText?, newText}; oldText absent: a new
    file), as text only."""
    found = []
    for item in content:
        if isinstance(item, dict) and item.get("type") == "diff":
            diff = {"path": clean(str(item.get("path") or ""))}
            for key in ("oldText", "newText"):
                if isinstance(item.get(key), str):
                    diff[key] = clean(item[key])
            found.append(diff)
    return found or None


def _locations(locations: list[ToolCallLocation] | None) -> list[dict[str, Any]] | None:
    """A call's locations as Lua reads them ({path, line?}); None when none is known."""
    if not locations:
        return None
    shown: list[dict[str, Any]] = []
    for location in locations:
        item: dict[str, Any] = {"path": clean(location.path)}
        if location.line is not None:
            item["line"] = location.line
        shown.append(item)
    return shown


def _drop_older(batch: list[LuaEvent], item: events.TerminalShown) -> None:
    """A terminal's output replaces what an unsent event of the same terminal (and call)
    said: a command that prints fast costs one drawing per flush, not one per read."""
    batch[:] = [
        e
        for e in batch
        if not (
            isinstance(e, events.TerminalShown)
            and e.terminal_id == item.terminal_id
            and e.id in (None, item.id)
        )
    ]


def _text_or_none(value: str | None) -> str | None:
    return None if value is None else clean(value)


def _bytes(event: LuaEvent) -> int:
    """What an event makes Lua draw, roughly: its text, output and diffs."""
    size = len(getattr(event, "text", "") or "") + len(getattr(event, "output", "") or "")
    for diff in getattr(event, "diffs", None) or ():
        size += len(diff.get("oldText", "")) + len(diff.get("newText", ""))
    return size


def _slice_end(batch: list[LuaEvent]) -> int:
    """How many events of ``batch``, from its start, make one slice (at least one)."""
    size = 0
    for i, event in enumerate(batch):
        size += _bytes(event)
        if i + 1 >= SLICE_EVENTS or size >= SLICE_BYTES:
            return i + 1
    return len(batch)


class Renderer:
    """Queues events per key (the cwd) on the ACP loop; one Lua call per key per flush.

    A flush goes out at the loop's next turn after an event, but no sooner than FLUSH_SECONDS
    after the previous one, unless the event ends a turn (nothing more to batch it with). So a
    lone chunk is shown at once, and a burst (the agent's pipe holds ~90 chunks, handled in one
    turn of the loop) leaves in one call. A flush on a timer only (16 ms after the first event)
    held the last chunk of the 10,000-chunk stream back by that much, and more while a burst
    kept the loop from running timers.

    Around editor tool calls (``tool_began`` / ``tool_ended``) and tool events, a batch waits
    for a quiet moment (see QUIET_SECONDS): the answer to the agent never queues behind the
    drawing of the updates around it. A timed send is one slice (SLICE_EVENTS, SLICE_BYTES):
    no batch drawn holds Neovim's main loop for long. ``flush()`` called from outside sends
    everything at once.
    """

    def __init__(self, send: Callable[[list[tuple[str, list[LuaEvent]]]], None]) -> None:
        self._send = send
        self._pending: dict[str, list[LuaEvent]] = {}
        # Chunks joining the last event of a key's batch (a run of text, or of thinking):
        # joined when the run ends; `+=` on each chunk would copy the text so far (quadratic).
        self._parts: dict[str, list[str]] = {}
        self._handle: asyncio.Handle | None = None
        self._soon = False  # the pending flush runs at the loop's next turn
        self._last_flush = float("-inf")
        self._calls = 0  # editor tool calls in flight
        self._tool_activity = float("-inf")  # a tool call began or ended, a tool event came
        self._held_since: float | None = None  # the pending batch first waited for quiet

    def tool_began(self) -> None:
        self._calls += 1
        self._tool_activity = asyncio.get_running_loop().time()

    def tool_ended(self) -> None:
        self._calls -= 1
        self._tool_activity = asyncio.get_running_loop().time()

    def push(self, key: str, item: LuaEvent) -> None:
        batch = self._pending.setdefault(key, [])
        kind = type(item)
        if (
            batch
            and kind is type(batch[-1])
            and kind in STREAMED
            and item.message_id == batch[-1].message_id  # type: ignore[attr-defined]
        ):
            parts = self._parts.get(key)
            if parts is None:
                parts = self._parts[key] = [batch[-1].text]  # type: ignore[attr-defined]
            parts.append(item.text)  # type: ignore[attr-defined]
        else:
            if key in self._parts:
                self._join(key, batch)
            if kind is events.TerminalShown:
                _drop_older(batch, item)  # type: ignore[arg-type]
            batch.append(item)
        ends_turn = kind is events.Done
        if kind in _TOOL_EVENTS:
            self._tool_activity = asyncio.get_running_loop().time()
        if self._handle is not None and (self._soon or not ends_turn):
            return
        if self._handle is not None:
            self._handle.cancel()
        loop = asyncio.get_running_loop()
        wait = 0.0 if ends_turn else self._last_flush + FLUSH_SECONDS - loop.time()
        self._soon = wait <= 0 and ends_turn
        if wait <= 0:
            self._handle = loop.call_soon(self._ended if ends_turn else self._on_time)
        else:
            self._handle = loop.call_later(wait, self._on_time)

    def _ended(self) -> None:
        """A turn ended: its end goes now, not held (after the slices before it, if any)."""
        self._soon = False
        self._send_slices()
        self._next_slice()

    def _on_time(self) -> None:
        """The batch's time came: a slice of it sent, unless a tool call is in flight or just
        ended (then it waits for quiet, at most MAX_HOLD_SECONDS)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        quiet_at = self._tool_activity + QUIET_SECONDS
        if self._calls or now < quiet_at:
            if self._held_since is None:
                self._held_since = now
            deadline = self._held_since + MAX_HOLD_SECONDS
            if now < deadline:
                wait = QUIET_SECONDS if self._calls else quiet_at - now
                self._handle = loop.call_later(min(wait, deadline - now), self._on_time)
                return
        self._send_slices()
        self._next_slice()

    def _next_slice(self) -> None:
        """What is left goes a frame later, held again while tool calls go on."""
        if not self._pending:
            return
        loop = asyncio.get_running_loop()
        busy = self._calls or loop.time() < self._tool_activity + QUIET_SECONDS
        self._held_since = loop.time() if busy else None
        self._handle = loop.call_later(FLUSH_SECONDS, self._on_time)

    def _send_slices(self) -> None:
        """The first slice of each key's batch now; the rest stays pending, in order."""
        self._handle = None
        self._held_since = None
        self._last_flush = asyncio.get_running_loop().time()
        batches: list[tuple[str, list[LuaEvent]]] = []
        for key in list(self._pending):
            batch = self._pending[key]
            end = _slice_end(batch)
            if end >= len(batch) and key in self._parts:
                self._join(key, batch)
            batches.append((key, batch[:end]))
            if end >= len(batch):
                del self._pending[key]
            else:
                del batch[:end]
        if batches:
            self._send(batches)

    def _join(self, key: str, batch: list[LuaEvent]) -> None:
        batch[-1].text = "".join(self._parts.pop(key))  # type: ignore[attr-defined]

    def flush(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._handle = None
        self._held_since = None
        self._last_flush = asyncio.get_running_loop().time()
        pending, self._pending = self._pending, {}
        for key, batch in pending.items():
            if key in self._parts:
                self._join(key, batch)
        self._send(list(pending.items()))
