"""One thread: one ACP session of one agent, and everything the host knows of it in one place.

A thread is named by Lua (an opaque id it mints, lua/minime/threads.lua) and owns its session
and the client that session runs on, its start (``ready``: one ``session/new`` however many
asks and warm-ups want it, single_flight.py), the ask waiting for that start (``waiting``), its
queue of asks (ask_queue.py), the agent's requests that wait on the user (``asks``: permission
prompts and questions alike, user_asks.py), its conversation (Lua's buffer of the same id), its
title and its state. ``cwd`` is where it works: the session's cwd, the tools' scope, the
review's — a worktree of its own when Lua made one (lua/minime/worktree/); what is kept of it
across restarts is Lua's too (lua/minime/thread_store.lua).

Why: the cwd was the unit (one session per directory) and five modules wrote into a per-cwd
object; now a directory only indexes its threads (thread_registry.py).
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from ..errors import Error
from . import events, ops
from .single_flight import Once

if TYPE_CHECKING:
    from ..client import Client
    from ..session import Session

V = TypeVar("V")

# What the overview and the statusline say of a thread (waiting: for the user's keystroke).
State = Literal["running", "waiting", "done", "cancelled", "error", "idle"]
AskKind = Literal["permission", "question"]

# A turn's stop reason as a thread's state once it ended.
_ENDED: dict[str, State] = {"cancelled": "cancelled", "stopped": "cancelled", "error": "error"}
# The longest title taken from an ask (the overview shows one line).
TITLE_CHARS = 80


class Waiting(Generic[V]):
    """One ask waiting for its session. ``ended``: None, or why it was given up.

    Between the ask and its first prompt nothing is "busy" in the session yet: without this a
    :MiniMeStop missed an agent still starting, a :MiniMeCancel waited for the whole start, and
    a second ask in the thread ran beside the first."""

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


@dataclass
class PendingAsk:
    """A request of the agent that waits on the user's keystroke (user_asks.py)."""

    kind: AskKind
    future: Any  # concurrent.futures.Future of the answer


class StateWatcher(Protocol):
    """Told when a thread's state, title or session changed (thread_registry.py publishes)."""

    def changed(self, thread: Thread) -> None: ...


class Thread:
    """One thread (see the module's docstring)."""

    def __init__(self, thread_id: str, cwd: str, watcher: StateWatcher) -> None:
        self.id = thread_id
        self.cwd = cwd
        self._watcher = watcher
        # The agent as the ask that opened its session named it: (definition name, label).
        self.agent = ""
        self.label = ""
        self.client: Client | None = None
        self.session: Session | None = None
        # "This thread's session is ready": opened and in its mode, started once.
        self.ready: Once[Session] = Once()
        self.waiting: Waiting[Session] | None = None
        # Asks made while its turn runs or its agent starts, oldest first (ask_queue.py).
        self.queue: collections.deque[ops.Ask] = collections.deque()
        # The agent's requests waiting on the user, by their id (user_asks.py).
        self.asks: dict[int, PendingAsk] = {}
        # Set when :MiniMeStop ended the running turn (its end reads "stopped", not an error).
        self.stopped = False
        # Set when the running turn's last event (its end) has been rendered.
        self.turn_ended: asyncio.Event | None = None
        # The session whose mode was set and whose state Lua shows (session_modes.py): once each.
        self.moded: Session | None = None
        # The tools the last accepted ask turned off (None: no ask said yet); set only by an ask
        # that starts a turn, so that one refused mid-turn changes nothing.
        self.disabled_tools: frozenset[str] | None = None
        # What the conversation shows: a turn runs, and how the last one ended.
        self.running = False
        self.ended: State | None = None
        self.named: str | None = None  # the user's name for it (renamed in the overview)
        # The session whose turns its conversation shows (None: empty, or reset): an ask that
        # runs on another one says so (Turns._ask).
        self.shown_session: str | None = None
        self.first_ask: str | None = None
        self.last_activity = time.time()

    # -- what it is -------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """A turn runs in this thread's session."""
        return self.session is not None and self.session.busy

    @property
    def occupied(self) -> bool:
        """A turn runs, or an ask waits for its agent to start: a new ask would wait."""
        return self.busy or self.waiting is not None

    @property
    def title(self) -> str:
        """The user's name for it, else the agent's title (session_info_update), else its
        first ask; "" while it has none."""
        agent_title = self.session.title if self.session is not None else None
        return self.named or agent_title or self.first_ask or ""

    @property
    def waits_for(self) -> AskKind | None:
        """What the agent waits on the user for, oldest first (None: nothing)."""
        for pending in self.asks.values():
            return pending.kind
        return None

    @property
    def state(self) -> State:
        if self.running and self.asks:
            return "waiting"
        if self.running:
            return "running"
        return self.ended or "idle"

    def refusal(self, advice: str) -> str | None:
        """Why an ask (or a reopening) cannot start in this thread now, in words for the user;
        None if it can."""
        if self.busy:
            return f"minime: a turn is already running in {self.cwd} — {advice}"
        if self.waiting is not None:
            return (
                f"minime: the agent is still starting for an ask in {self.cwd} — "
                "wait for it, or :MiniMeCancel drops that ask"
            )
        return None

    def live_session(self) -> Session | None:
        """The session, unless its agent died."""
        session, client = self.session, self.client
        return session if session is not None and client is not None and client.alive else None

    # -- what changes it --------------------------------------------------------------------

    def take_tools(self, payload: ops.AgentOp) -> None:
        """The tool filter of an ask that starts a turn (or of a first warm-up)."""
        if payload.disabled_tools is not None:
            self.disabled_tools = frozenset(payload.disabled_tools)

    def take_agent(self, payload: ops.AgentOp) -> None:
        """The agent an ask names, kept for the overview and the permission float's words."""
        self.agent = payload.agent or self.agent
        self.label = payload.label or payload.agent or self.label

    def opened(self, client: Client, session: Session) -> None:
        """``session`` on ``client`` is this thread's from now on."""
        self.client, self.session = client, session
        self.changed()

    def lost_session(self) -> None:
        """Its session is gone (reset, closed, its agent died or stopped)."""
        if self.session is not None:
            self.session = None
            self.moded = None
            self.changed()

    def begin_waiting(self) -> Waiting[Session]:
        waiting: Waiting[Session] = Waiting()
        self.waiting = waiting
        return waiting

    def finish_waiting(self, waiting: Waiting[Session]) -> None:
        if self.waiting is waiting:
            self.waiting = None

    def saw(self, item: events.LuaEvent) -> None:
        """An event its conversation shows: a turn's begin and end, a reset, are its state."""
        if isinstance(item, events.Begin):
            if item.fresh:
                self.shown_session = None
            self.running, self.ended = True, None
            if self.first_ask is None and not item.fresh:
                self.first_ask = _one_line(item.prompt)
        elif isinstance(item, events.Done):
            if item.session_id:  # a reopened session's, or a turn's
                self.shown_session = item.session_id
            self.running = False
            self.ended = _ENDED.get(item.stop_reason or "", "done")
            if item.error is not None:
                self.ended = "error"
        elif isinstance(item, events.Reset):
            self.running, self.ended, self.first_ask = False, None, None
            self.shown_session = None
        else:
            return
        self.changed()

    def rename(self, title: str) -> None:
        self.named = _one_line(title) or None
        self.changed()

    def changed(self) -> None:
        self.last_activity = time.time()
        self._watcher.changed(self)


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
