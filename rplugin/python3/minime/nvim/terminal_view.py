""":MiniMeTerminal: a client terminal's output, sent to Lua to open in a buffer (the live
output of terminals that tool calls show goes with the turn's events, render.py)."""

from __future__ import annotations

from . import ops
from .bridge import NvimBridge
from .events import TerminalOutput
from .thread_registry import Threads
from .wire_text import clean


class TerminalView:
    def __init__(self, threads: Threads, bridge: NvimBridge) -> None:
        self._threads = threads
        self._bridge = bridge

    async def show(self, payload: ops.ShowTerminal) -> None:
        thread = self._threads.find(payload.thread)
        session = thread.session if thread is not None else None
        client = thread.client if thread is not None else None
        found = []
        if session is not None and client is not None and client.terminals is not None:
            found = client.terminals.of_session(session.session_id)
        if not found:
            self._bridge.notify("minime: the agent ran no command in a terminal here", "info")
            return
        ids = [t.id for t in found]
        wanted = payload.terminal_id or ids[-1]
        terminal = next((t for t in found if t.id == wanted), None)
        if terminal is None:
            self._bridge.notify(
                f"minime: no terminal {wanted!r} here (the agent's: {', '.join(ids)})", "warn"
            )
            return
        shown = TerminalOutput(
            terminal_id=clean(terminal.id),
            output=clean(terminal.text),
            status=terminal.ended_text(),
            ids=[clean(i) for i in ids],
        )
        self._bridge.rpc("show_terminal", payload.thread, shown)
