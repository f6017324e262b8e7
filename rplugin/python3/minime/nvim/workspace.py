"""One object per cwd: everything the host knows of one working directory in one place.

A cwd has at most one session; while it starts (spawn, ``initialize``, ``session/new``, the
mode) at most one ask waits for it (``waiting``), and the start itself runs once however many
asks and warm-ups want it (``ready``, single_flight.py: a cancelled ask leaves it running for the
next, :MiniMeStop ends it). ``stopped`` says that :MiniMeStop ended the running turn (its end
reads "stopped", not an error); ``disabled_tools`` is the tool filter of the last accepted ask.

Why one object: five registries (two start guards, the waiting asks, the stopped set, the
sessions) each answered part of "is something starting or running here?", and every command
had to ask all of them in the right order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from typing import Generic, TypeVar

from ..errors import Error
from ..session import Session
from . import ops
from .single_flight import Once

V = TypeVar("V")


class Waiting(Generic[V]):
    """One ask waiting for its session. ``ended``: None, or why it was given up.

    Between the ask and its first prompt nothing is "busy" in the session yet: without this a
    :MiniMeStop missed an agent still starting, a :MiniMeCancel waited for the whole start, and
    a second ask in the cwd ran beside the first."""

    def __init__(self) -> None:
        self.ended: str | None = None
        self._task: asyncio.Future[V] | None = None

    async def wait(self, work: Awaitable[V]) -> V | None:
        """What ``work`` gives, or None once the ask was ended (whatever the start did then).
        A start's failure is raised only while the ask still waits for it."""
        self._task = asyncio.ensure_future(work)
        try:
            value = await self._task
        except asyncio.CancelledError:
            if self.ended is None:  # this ask's own task is being cancelled
                raise
            return None
        except Error:
            if self.ended is not None:
                return None
            raise
        return None if self.ended is not None else value

    def end(self, why: str) -> bool:
        """Give the ask up now (``cancelled``, ``stopped``); False if it already ended."""
        if self.ended is not None:
            return False
        self.ended = why
        if self._task is not None:
            self._task.cancel()
        return True


class Workspace:
    """One cwd (its real path): its session, the ask waiting for it, its stop state, the
    session its mode was applied to, and its tool filter."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.session: Session | None = None
        # "This cwd's session is ready": opened and in its mode, started once (single_flight.py).
        self.ready: Once[Session] = Once()
        self.waiting: Waiting[Session] | None = None
        self.stopped = False
        # Set when the running turn's last event (its end) has been rendered.
        self.turn_ended: asyncio.Event | None = None
        # The session whose mode was set and whose state Lua shows (session_modes.py): once each.
        self.moded: Session | None = None
        # The tools the last accepted ask turned off (None: no ask said yet); set only by an ask
        # that starts a turn, so that one refused mid-turn changes nothing.
        self.disabled_tools: frozenset[str] | None = None

    @property
    def busy(self) -> bool:
        """A turn runs in this cwd."""
        return self.session is not None and self.session.busy

    @property
    def occupied(self) -> bool:
        """A turn runs, or an ask waits for its agent to start: a new ask would wait."""
        return self.busy or self.waiting is not None

    def refusal(self, advice: str) -> str | None:
        """Why an ask (or a reopening) cannot start here now, in words for the user; None if
        it can."""
        if self.busy:
            return f"minime: a turn is already running in {self.cwd} — {advice}"
        if self.waiting is not None:
            return (
                f"minime: the agent is still starting for an ask in {self.cwd} — "
                "wait for it, or :MiniMeCancel drops that ask"
            )
        return None

    def take_tools(self, payload: ops.AgentOp) -> None:
        """The tool filter of an ask that starts a turn (or of a first warm-up)."""
        if payload.disabled_tools is not None:
            self.disabled_tools = frozenset(payload.disabled_tools)

    def live_session(self) -> Session | None:
        """The session, unless its agent died."""
        session = self.session
        return session if session is not None and session.client.alive else None

    def begin_waiting(self) -> Waiting[Session]:
        waiting: Waiting[Session] = Waiting()
        self.waiting = waiting
        return waiting

    def finish_waiting(self, waiting: Waiting[Session]) -> None:
        if self.waiting is waiting:
            self.waiting = None


class Workspaces:
    """Every cwd the host has been asked about, by real path (made on first use)."""

    def __init__(self) -> None:
        self._by_cwd: dict[str, Workspace] = {}

    def __getitem__(self, cwd: str) -> Workspace:
        found = self._by_cwd.get(cwd)
        if found is None:
            found = self._by_cwd[cwd] = Workspace(cwd)
        return found

    def __iter__(self) -> Iterator[Workspace]:
        return iter(list(self._by_cwd.values()))

    def session(self, cwd: str) -> Session | None:
        found = self._by_cwd.get(cwd)
        return found.session if found is not None else None

    def busy(self, cwd: str) -> bool:
        found = self._by_cwd.get(cwd)
        return found is not None and found.busy

    def of_session(self, session_id: str) -> Workspace | None:
        """The cwd whose session is ``session_id``."""
        for found in self._by_cwd.values():
            if found.session is not None and found.session.session_id == session_id:
                return found
        return None

    def with_sessions(self) -> list[Workspace]:
        return [found for found in self._by_cwd.values() if found.session is not None]
