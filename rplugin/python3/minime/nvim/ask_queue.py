"""Asks made while a turn runs in their cwd, or while its agent still starts: kept in order
and sent one by one as each turn ends (``setup{ queue = false }`` refuses them instead).

Each queued ask is the whole ``ops.Ask`` as Lua made it — its prompt, its context (the
selected lines) and its ask id (the selection kept in Lua, lua/minime/editor/asks.lua) — so the
turn it starts sees what the user had when they asked, never the running turn's.
"""

from __future__ import annotations

import collections

from . import ops

# Asks one cwd may keep waiting; one more is refused (its text becomes the draft).
MAX_QUEUED = 20


class AskQueue:
    """The waiting asks of each cwd, oldest first."""

    def __init__(self) -> None:
        self._by_cwd: dict[str, collections.deque[ops.Ask]] = {}

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
