"""A session's client terminals as its turn shows them: ``terminal`` events carrying the end of
a terminal's output, under the tool call whose content names it.

At most one event per terminal every LIVE_INTERVAL seconds, each read from the terminal when
it goes (a command that prints 20 MB costs a few dozen events, not one per 64 KB read), and
none under a call once that call has ended: its result carries the whole output, which a late
live event must not replace.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from .model import Event, ToolCall
from .updates import TERMINAL_STATUSES

if TYPE_CHECKING:
    from .terminals import Terminal
    from .turn import Turn

# The end of a terminal's output a live event carries (the whole of it stays in the terminal).
LIVE_TERMINAL_BYTES = 16 * 1024
LIVE_INTERVAL = 0.1


class LiveTerminals:
    """Of one session: ``lookup`` finds a terminal by id, ``running`` is its running turn."""

    def __init__(
        self, lookup: Callable[[str], Terminal | None], running: Callable[[], Turn | None]
    ) -> None:
        self._lookup = lookup
        self._running = running
        self.calls: dict[str, str] = {}  # terminal id -> the call showing it
        self._due: dict[str, asyncio.TimerHandle] = {}
        self._last: dict[str, float] = {}

    def shown_by(self, call: ToolCall) -> list[Event]:
        """The call's ``{type: "terminal"}`` content: from now on its output shows under the
        call, starting with what it printed already."""
        found = []
        for item in call.content:
            terminal_id = item.get("terminalId") if isinstance(item, dict) else None
            if isinstance(terminal_id, str) and self.calls.get(terminal_id) != call.id:
                self.calls[terminal_id] = call.id
                live = self.event(terminal_id)
                if live is not None:
                    found.append(live)
        return found

    def event(self, terminal_id: str) -> Event | None:
        """The ``terminal`` event of its output now (``call``: the running call showing it, if
        any; ``status``: how it ended, once it has)."""
        terminal = self._lookup(terminal_id)
        if terminal is None:
            return None
        call_id = self.calls.get(terminal_id)
        turn = self._running()
        known = turn.calls.get(call_id) if turn is not None and call_id is not None else None
        if known is not None and known.status in TERMINAL_STATUSES:
            call_id = None  # ended: its result shows the whole output
        return Event(
            kind="terminal",
            text=terminal_id,
            call=None if call_id is None else ToolCall(id=call_id, kind=""),
            output=terminal.tail(LIVE_TERMINAL_BYTES),
            status=terminal.ended_text(),
        )

    def grew(self, terminal_id: str) -> None:
        """Its output grew: an event now, or when LIVE_INTERVAL has passed; it ended: now (the
        agent may end the turn as soon as it learns of the exit)."""
        terminal = self._lookup(terminal_id)
        if terminal is not None and terminal.ended_text() is not None:
            due = self._due.pop(terminal_id, None)
            if due is not None:
                due.cancel()
            self._send(terminal_id)
            return
        if terminal_id in self._due:
            return
        loop = asyncio.get_running_loop()
        wait = self._last.get(terminal_id, float("-inf")) + LIVE_INTERVAL - loop.time()
        if wait <= 0:
            self._send(terminal_id)
        else:
            self._due[terminal_id] = loop.call_later(wait, self._send, terminal_id)

    def _send(self, terminal_id: str) -> None:
        self._due.pop(terminal_id, None)
        self._last[terminal_id] = asyncio.get_running_loop().time()
        turn = self._running()
        event = self.event(terminal_id) if turn is not None else None
        if event is not None:
            turn.push(event)  # type: ignore[union-attr]
