"""Asks made while a turn runs in their thread, or while its agent still starts: kept in order
(the thread's ``queue``) and sent one by one as each turn ends (``setup{ queue = false }``
refuses them instead). A thread's queue never holds another thread's asks: a turn in one never
waits behind another.

Each queued ask is the whole ``ops.Ask`` as Lua made it — its prompt, its context (the
selected lines) and its ask id (the selection kept in Lua, lua/minime/editor/asks.lua) — so the
turn it starts sees what the user had when they asked, never the running turn's.
"""

from __future__ import annotations

from . import events, ops
from .bridge import NvimBridge
from .conversation import Conversation
from .thread import Thread
from .wire_text import clean_all

# Asks one thread may keep waiting; one more is refused (its text becomes the draft).
MAX_QUEUED = 20


class AskQueue:
    """What the user sees of each thread's waiting asks: the conversation's ``queued`` event,
    the messages, and the text of an ask refused or dropped kept as the thread's draft."""

    def __init__(self, conversation: Conversation, bridge: NvimBridge) -> None:
        self._conversation = conversation
        self._notify = bridge.notify

    def enqueue(self, thread: Thread, ask: ops.Ask) -> None:
        """Queue ``ask`` and show it; past MAX_QUEUED refused, its text kept."""
        if len(thread.queue) >= MAX_QUEUED:
            self._notify(
                f"minime: {MAX_QUEUED} asks already wait in {thread.cwd} — your text is kept "
                "for the next input",
                "warn",
            )
            self._conversation.keep_text(ask)
            return
        thread.queue.append(ask)
        self.show(thread)
        waiting = len(thread.queue)
        count = f"{waiting} asks wait" if waiting > 1 else "1 ask waits"
        self._notify(
            f"minime: queued after the running turn ({count}; :MiniMeCancel drops them)", "info"
        )

    def next(self, thread: Thread) -> ops.Ask | None:
        """The ask to send now that the thread's turn ended (the rest shown), or None."""
        if not thread.queue:
            return None
        ask = thread.queue.popleft()
        self.show(thread)
        return ask

    def drop_shown(self, thread: Thread) -> int:
        """Drop the asks waiting in the thread; their text becomes its draft (never lost)."""
        dropped = list(thread.queue)
        thread.queue.clear()
        if dropped:
            self.show(thread)
            for ask in dropped:
                self._conversation.keep_text(ask)
        return len(dropped)

    def show(self, thread: Thread) -> None:
        prompts = [ask.prompt for ask in thread.queue]
        self._conversation.render(thread, events.Queued(prompts=clean_all(prompts)))
