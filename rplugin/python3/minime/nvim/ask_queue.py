"""Asks made while a turn runs in their cwd, or while its agent still starts: kept in order
and sent one by one as each turn ends (``setup{ queue = false }`` refuses them instead).

Each queued ask is the whole ``ops.Ask`` as Lua made it — its prompt, its context (the
selected lines) and its ask id (the selection kept in Lua, lua/minime/editor/asks.lua) — so the
turn it starts sees what the user had when they asked, never the running turn's.
"""

from __future__ import annotations

import collections

from . import events, ops
from .bridge import NvimBridge
from .conversation import Conversation
from .wire_text import clean_all

# Asks one cwd may keep waiting; one more is refused (its text becomes the draft).
MAX_QUEUED = 20


class AskQueue:
    """The waiting asks of each cwd, oldest first, and what the user sees of them: the turn
    float's ``queued`` event, the messages, and the text of an ask refused or dropped kept as
    the cwd's draft."""

    def __init__(self, conversation: Conversation, bridge: NvimBridge) -> None:
        self._by_cwd: dict[str, collections.deque[ops.Ask]] = {}
        self._render = conversation.render
        self._notify = bridge.notify
        self._keep_text = conversation.keep_text

    def enqueue(self, cwd: str, ask: ops.Ask) -> None:
        """Queue ``ask`` and show it; past MAX_QUEUED refused, its text kept."""
        if not self.add(cwd, ask):
            self._notify(
                f"minime: {MAX_QUEUED} asks already wait in {cwd} — your text is kept for the "
                "next input",
                "warn",
            )
            self._keep_text(ask)
            return
        self.show(cwd)
        waiting = len(self.prompts(cwd))
        count = f"{waiting} asks wait" if waiting > 1 else "1 ask waits"
        self._notify(
            f"minime: queued after the running turn ({count}; :MiniMeCancel drops them)", "info"
        )

    def next(self, cwd: str) -> ops.Ask | None:
        """The ask to send now that ``cwd``'s turn ended (the rest shown), or None."""
        ask = self.take(cwd)
        if ask is not None:
            self.show(cwd)
        return ask

    def drop_shown(self, cwd: str) -> int:
        """Drop the asks waiting in ``cwd``; their text becomes the cwd's draft (never lost)."""
        dropped = self.drop(cwd)
        if dropped:
            self.show(cwd)
            for ask in dropped:
                self._keep_text(ask)
        return len(dropped)

    def show(self, cwd: str) -> None:
        self._render(cwd, events.Queued(prompts=clean_all(self.prompts(cwd))))

    def add(self, cwd: str, ask: ops.Ask) -> bool:
        """Queue ``ask``; False (nothing kept) when MAX_QUEUED already wait."""
        waiting = self._by_cwd.setdefault(cwd, collections.deque())
        if len(waiting) >= MAX_QUEUED:
            return False
        waiting.append(ask)
        return True

    def take(self, cwd: str) -> ops.Ask | None:
        """The oldest ask waiting in ``cwd``, no longer queued; None if none waits."""
        waiting = self._by_cwd.get(cwd)
        if not waiting:
            return None
        ask = waiting.popleft()
        if not waiting:
            del self._by_cwd[cwd]
        return ask

    def drop(self, cwd: str) -> list[ops.Ask]:
        """Every ask waiting in ``cwd``, no longer queued."""
        return list(self._by_cwd.pop(cwd, ()))

    def cwds(self) -> list[str]:
        return list(self._by_cwd)

    def prompts(self, cwd: str) -> list[str]:
        return [ask.prompt for ask in self._by_cwd.get(cwd, ())]

    def __contains__(self, cwd: str) -> bool:
        return bool(self._by_cwd.get(cwd))
