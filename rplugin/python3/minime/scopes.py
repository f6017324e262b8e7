"""Which cwd each session's client tools run in — decided by the client alone, never the agent.

A session's cwd is the one this client sent in ``session/new``, ``session/load`` or
``session/resume``, and it never changes. In discovery ``request`` mm asks
``_org.mini-me/tools/list`` with the new session's id *before* it answers ``session/new``, so
an open in flight is a slot: the first list request naming an unknown id with exactly that
open's cwd binds the slot to the id. Anything else (another cwd, an id nobody is opening) is
refused. Updates for sessions not yet known are kept, within bounds, only while an open is in
flight (the agent may speak before it answers ``session/new``); the rest are dropped.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("minime")

EARLY_UPDATES_PER_SESSION = 256
EARLY_UPDATES_TOTAL = 1024


class Opening:
    """One ``session/new`` in flight: its cwd, and the id a list request bound it to."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.bound: str | None = None


class Scopes:
    """The session id → cwd record, the opens in flight, and the updates that came early."""

    def __init__(self) -> None:
        self.cwds: dict[str, str] = {}
        self.openings: list[Opening] = []
        self.early: dict[str, list[Any]] = {}
        self._early_count = 0
        self._dropped_logged = False

    # -- opens ------------------------------------------------------------------------------

    def begin_new(self, cwd: str) -> Opening:
        opening = Opening(cwd)
        self.openings.append(opening)
        return opening

    def begin_known(self, session_id: str, cwd: str) -> Opening:
        """``session/load`` or ``session/resume``: the id is known before the request goes."""
        opening = Opening(cwd)
        opening.bound = session_id
        self.cwds[session_id] = cwd
        self.openings.append(opening)
        return opening

    def end(self, opening: Opening, session_id: str | None) -> None:
        """The open ended with ``session_id`` (None: it failed). Leftovers are dropped."""
        self.openings.remove(opening)
        if session_id is not None and opening.bound not in (None, session_id):
            # Two opens of the same cwd may have been bound crosswise: swap them back.
            for other in self.openings:
                if other.bound == session_id and other.cwd == opening.cwd:
                    other.bound = opening.bound
                    opening.bound = session_id
                    break
        if opening.bound is not None and opening.bound != session_id:
            log.warning("agent listed tools for session %r, then never opened it", opening.bound)
            self.cwds.pop(opening.bound, None)
        if session_id is not None:
            self.cwds.setdefault(session_id, opening.cwd)
        if not self.openings:
            self.early.clear()
            self._early_count = 0

    def conflicts(self, session_id: str, cwd: str) -> bool:
        """The agent answered ``session/new`` with an id already bound to another cwd."""
        bound = self.cwds.get(session_id)
        return bound is not None and bound != cwd

    # -- list requests ----------------------------------------------------------------------

    def bind_for_list(self, session_id: str, cwd: str) -> str | None:
        """The cwd to list tools for, or None when this list request must be refused."""
        known = self.cwds.get(session_id)
        if known is not None:
            return known if known == cwd else None
        for opening in self.openings:
            if opening.bound is None and opening.cwd == cwd:
                opening.bound = session_id
                self.cwds[session_id] = cwd
                return cwd
        return None

    # -- early updates ------------------------------------------------------------------------

    def keep_early(self, session_id: str, update: Any) -> bool:
        """Keep an update for a session not open yet; False when it was dropped."""
        kept = self.early.get(session_id)
        if (
            not self.openings
            or self._early_count >= EARLY_UPDATES_TOTAL
            or (kept is not None and len(kept) >= EARLY_UPDATES_PER_SESSION)
        ):
            if not self._dropped_logged:
                self._dropped_logged = True
                log.warning("dropping session/update for sessions this client did not open")
            return False
        self.early.setdefault(session_id, []).append(update)
        self._early_count += 1
        return True

    def take_early(self, session_id: str) -> list[Any]:
        updates = self.early.pop(session_id, [])
        self._early_count -= len(updates)
        return updates
