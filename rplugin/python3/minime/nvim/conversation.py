"""The conversations as the host's parts write to them: events in stream order, batched by
render.py and sent with one call per flush (``rpc.apply``, or ``rpc.apply_all`` for several
threads' batches; the key is the thread's id:
its conversation's buffer). Handed once to each part that shows something in a conversation
(the asks, the queue, permissions, questions, the tools). A turn's begin and end, and a reset,
are also its thread's state (thread.py): the conversation is the one place they pass.
"""

from __future__ import annotations

from . import events, ops
from .bridge import NvimBridge
from .events import LuaEvent
from .render import Renderer
from .thread import Thread
from .wire_text import clean


class Conversation:
    def __init__(self, bridge: NvimBridge) -> None:
        self._bridge = bridge
        self._renderer: Renderer | None = None

    def start(self) -> None:
        """On the ACP loop, before the first event (the renderer's timers are the loop's)."""
        self._renderer = Renderer(self._send)

    def _send(self, batches: list[tuple[str, list[LuaEvent]]]) -> None:
        """One flush: one call, whatever the number of threads it holds. A call per thread
        woke pynvim's thread and Neovim once each: four threads streaming had the editor's
        probe p99 at 9-13 ms where one call per flush had 9-12 ms (bench/threads.py, six
        alternating runs each, load 7-10 on 2 cores)."""
        if len(batches) == 1:
            self._bridge.rpc("apply", *batches[0])
        elif batches:
            self._bridge.rpc("apply_all", [[key, batch] for key, batch in batches])

    def render(self, thread: Thread, item: LuaEvent) -> None:
        assert self._renderer is not None
        self._renderer.push(thread.id, item)
        thread.saw(item)

    def notice(self, thread: Thread, text: str) -> None:
        """A plain line in the thread's conversation (who answered a permission, when not the
        user)."""
        self.render(thread, events.Notice(clean(text)))

    def fail(self, thread: Thread, message: str, session_id: str = "") -> None:
        """End the thread's turn with ``message``; "stopped" if :MiniMeStop ended it."""
        cwd = thread.cwd
        if thread.stopped:  # :MiniMeStop ended it: a stop, not an error
            thread.stopped = False
            done = events.Done(stop_reason="stopped", cwd=cwd, session_id=session_id)
            self.render(thread, done)
            return
        done = events.Done(
            stop_reason="error", error=clean(message), cwd=cwd, session_id=session_id
        )
        self.render(thread, done)

    def keep_text(self, ask: ops.Ask) -> None:
        """Typed text is never lost: the next input of this thread opens with it (a draft).
        A fix (:MiniMeFix, or sent by itself) has no text of the user's."""
        if not ask.fix:
            self._bridge.rpc("ask_refused", ask.thread, ask.prompt)

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
