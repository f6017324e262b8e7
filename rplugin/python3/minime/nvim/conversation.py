"""The turn floats as the host's parts write to them: events in stream order, batched by
render.py and sent with one ``rpc.apply`` per cwd per flush. Handed once to each part that
shows something in a conversation (the asks, the queue, permissions, questions, the tools).
"""

from __future__ import annotations

from . import events, ops
from .bridge import NvimBridge
from .events import LuaEvent
from .render import Renderer
from .wire_text import clean
from .workspace import Workspace


class Conversation:
    def __init__(self, bridge: NvimBridge) -> None:
        self._bridge = bridge
        self._renderer: Renderer | None = None
        # The session whose turns each cwd's conversation shows (none: empty or reset): an ask
        # that runs on another one says so (Turns.ask).
        self.sessions: dict[str, str] = {}

    def start(self) -> None:
        """On the ACP loop, before the first event (the renderer's timers are the loop's)."""
        self._renderer = Renderer(self._send)

    def _send(self, key: str, batch: list[LuaEvent]) -> None:
        self._bridge.rpc("apply", key, batch)

    def render(self, cwd: str, item: LuaEvent) -> None:
        assert self._renderer is not None
        if isinstance(item, events.Reset) or (isinstance(item, events.Begin) and item.fresh):
            self.sessions.pop(cwd, None)
        if isinstance(item, events.Done) and item.session_id:  # a reopened session's
            self.sessions[cwd] = item.session_id
        self._renderer.push(cwd, item)

    def notice(self, cwd: str, text: str) -> None:
        """A plain line in ``cwd``'s turn (who answered a permission, when not the user)."""
        if cwd:
            self.render(cwd, events.Notice(clean(text)))

    def fail(self, place: Workspace, message: str, session_id: str = "") -> None:
        """End the cwd's turn with ``message``; "stopped" if :MiniMeStop ended it."""
        cwd = place.cwd
        if place.stopped:  # :MiniMeStop ended it: a stop, not an error
            place.stopped = False
            self.render(cwd, events.Done(stop_reason="stopped", cwd=cwd, session_id=session_id))
            return
        done = events.Done(
            stop_reason="error", error=clean(message), cwd=cwd, session_id=session_id
        )
        self.render(cwd, done)

    def keep_text(self, ask: ops.Ask) -> None:
        """Typed text is never lost: the next input of this cwd opens with it (a draft)."""
        self._bridge.rpc("ask_refused", ask.cwd, ask.prompt)

    async def disk_kept(self, kept: ops.DiskKept) -> None:
        """The disk refresh left these files as the user had them (their unsaved edits)."""
        if kept.files:
            text = (
                "changed on disk by the agent, kept as you left them (unsaved edits;"
                " :e! takes the file): " + ", ".join(kept.files)
            )
            self.render(kept.cwd, events.Notice(clean(text)))

    def flush(self) -> None:
        """Send what is pending now: the turn so far shows before a prompt or a write."""
        if self._renderer is not None:
            self._renderer.flush()

    def tool_began(self) -> None:
        if self._renderer is not None:
            self._renderer.tool_began()

    def tool_ended(self) -> None:
        if self._renderer is not None:
            self._renderer.tool_ended()
