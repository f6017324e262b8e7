"""The asks of each cwd and their turns: an ask waits for its cwd's session (started once,
workspace.py) or is queued behind the running turn (ask_queue.py), then streams; the warm-up
starts a session before the first ask; :MiniMeCancel, :MiniMeReset and :MiniMeStop end what
runs or waits, mid-start-up too.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from ..errors import AuthRequired, Error
from ..session import Session
from . import events, ops
from .agent_pool import AgentPool
from .ask_queue import AskQueue
from .bridge import NvimBridge
from .conversation import Conversation
from .mentions import prompt_blocks
from .render import to_lua
from .session_modes import SessionModes
from .wire_text import clean
from .workspace import Workspace, Workspaces

log = logging.getLogger("minime")


class Turns:
    def __init__(
        self,
        bridge: NvimBridge,
        workspaces: Workspaces,
        conversation: Conversation,
        pool: AgentPool,
        modes: SessionModes,
    ) -> None:
        self._bridge = bridge
        self._workspaces = workspaces
        self._conversation = conversation
        self._pool = pool
        self._modes = modes
        # Each cwd's asks waiting for its running turn (or its start) to end: ask_queue.py.
        self._queue = AskQueue(conversation, bridge)

    async def ask(self, ask: ops.Ask) -> None:
        place = self._workspaces[os.path.realpath(ask.cwd)]
        if ask.queue and (place.cwd in self._queue or place.occupied):
            self._queue.enqueue(place.cwd, ask)
            return
        next_ask: ops.Ask | None = ask
        while next_ask is not None:
            await self._ask(place, next_ask)
            # No await from the turn's end to the next ask's start: nothing runs between.
            next_ask = self._queue.next(place.cwd)

    async def _ask(self, place: Workspace, ask: ops.Ask) -> None:
        cwd = place.cwd
        refusal = place.refusal(":MiniMeCancel stops it; your text is kept for the next input")
        if refusal is not None:
            self._bridge.notify(refusal, "warn")
            self._conversation.keep_text(ask)
            return
        place.take_tools(ask)
        # This ask's selection (kept in Lua, where it was made) is the one the turn's tools see.
        if ask.ask_id is not None:
            self._bridge.rpc("ask_accepted", cwd, ask.ask_id)
        # The agent of the session this ask continues (a setup() since names the next one).
        running = place.session
        named = self._pool.agent_of(running.session_id)[1] if running is not None else ""
        label = clean(named or ask.label or ask.agent or "")
        self._conversation.render(cwd, events.Begin(prompt=clean(ask.prompt), cwd=cwd, agent=label))
        place.stopped = False
        waiting = place.begin_waiting()
        if place.ready.running():  # a start a cancelled ask left running: this one waits
            self._conversation.render(cwd, events.Notice("starting the agent…"))
        try:
            ready = place.ready.run(lambda: self._open(place, ask))
            session = await waiting.wait(ready)
        except AuthRequired as exc:
            self._conversation.fail(place, f"{exc} — :MiniMeLogin logs in, then ask again")
            return
        except Error as exc:
            self._conversation.fail(place, str(exc))
            return
        finally:
            place.finish_waiting(waiting)
        if session is None:  # cancelled or stopped while it started: already said
            return
        shown = self._conversation.sessions.get(cwd)
        if shown is not None and shown != session.session_id:  # after :MiniMeStop, a crash
            self._conversation.render(
                cwd, events.Notice("a new session: the agent does not remember the turns above")
            )
        self._conversation.sessions[cwd] = session.session_id
        text = ask.context or ask.prompt
        prompt: str | list[dict[str, Any]] = text
        shown = [ask.lines_from] if ask.lines_from else []
        note = None
        if ask.mentions:
            built = prompt_blocks(text, ask.mentions, session.client.agent_capabilities)
            shown += built.shown
            prompt, note = built.blocks, built.message()
        if shown:
            self._conversation.render(cwd, events.Attached(names=[clean(n) for n in shown]))
        if note:
            self._bridge.notify(note, "warn")
            # Under the prompt too: the next message would overwrite this one.
            self._conversation.render(cwd, events.Notice(clean(note.removeprefix("minime: "))))
        # No await from here to the turn: the session is busy before another ask can look.
        await self._run_turn(session, place, prompt)

    async def warm(self, warm: ops.Warm) -> None:
        """Start ``cwd``'s agent and session while the user types the first ask there: silent.
        A failure is only logged; the ask that follows starts again and says what went wrong."""
        place = self._workspaces[os.path.realpath(warm.cwd)]
        if place.session is not None or place.ready.running():
            return
        if place.disabled_tools is None:  # the tools a request-discovery agent lists at first
            place.take_tools(warm)
        try:
            await place.ready.run(lambda: self._open(place, warm, announce=False))
        except Exception as exc:  # said by the ask, never by the warm-up
            log.info("warm-up for %s: %s", place.cwd, exc)

    async def _open(self, place: Workspace, ask: ops.AgentOp, announce: bool = True) -> Session:
        """The cwd's session, started if need be, in its mode: ready for a first prompt."""
        cwd = place.cwd

        def notice() -> None:
            self._conversation.render(cwd, events.Notice("starting the agent…"))

        try:
            # Said only when an agent process starts: not for a new session on a running one
            # (after :MiniMeReset), which is quick and silent; nor for a warm-up.
            session = place.live_session() or await self._pool.open_session(
                cwd, ask, notice if announce else None
            )
        except Error as exc:
            log.warning("no session for %s: %s", cwd, exc)  # said by the ask still waiting
            raise
        await self._modes.opened(place, session, ask.mode)  # before its first prompt
        return session

    async def _run_turn(
        self, session: Session, place: Workspace, prompt: str | list[dict[str, Any]]
    ) -> None:
        cwd = place.cwd
        ended = place.turn_ended = asyncio.Event()
        try:
            async for event in session.stream(prompt):
                if self._modes.follow(cwd, session, event):
                    continue
                item = to_lua(event)
                if isinstance(item, events.Done):
                    item.session_id = session.session_id
                    item.cwd = cwd
                self._conversation.render(cwd, item)
        except Error as exc:
            self._conversation.fail(place, str(exc), session.session_id)
            if not session.client.alive:
                self._pool.drop(session.client)
        finally:
            ended.set()
            if place.turn_ended is ended:
                place.turn_ended = None

    async def cancel(self, payload: ops.CwdOp) -> None:
        cwd = os.path.realpath(payload.cwd or os.getcwd())
        # The queue first: the turn's end would start the next ask.
        dropped = self._queue.drop_shown(cwd)
        place = self._workspaces[cwd]
        session, waiting = place.session, place.waiting
        if waiting is not None:
            # The ask is dropped now; its agent goes on starting, for the next ask.
            if waiting.end("cancelled"):
                self._conversation.render(cwd, events.Done(stop_reason="cancelled", cwd=cwd))
        elif session is not None and session.busy:
            await session.cancel()
        elif not dropped:
            self._bridge.notify(f"minime: no turn running in {cwd}", "info")
        if dropped:
            asks = f"{dropped} queued asks" if dropped > 1 else "1 queued ask"
            self._bridge.notify(
                f"minime: cancelled; {asks} dropped (the text is the next input's draft)", "info"
            )

    async def reset(self, payload: ops.CwdOp) -> None:
        cwd = os.path.realpath(payload.cwd or os.getcwd())
        self._queue.drop_shown(cwd)  # asks of the old conversation: their text is the draft
        place = self._workspaces[cwd]
        waiting = place.waiting
        if waiting is not None and waiting.end("cancelled"):  # an ask of the old conversation
            self._conversation.render(cwd, events.Done(stop_reason="cancelled", cwd=cwd))
            self._conversation.flush()  # its end reaches Lua (MiniMeTurnDone) before the reset
        ended = place.turn_ended
        current = place.session
        if current is not None and current.busy:
            # The old turn ends in the old conversation (its "■ cancelled" line and title):
            # the session stays the cwd's until then, so an ask meanwhile is refused. The
            # library ends a turn the agent does not end within cancel_timeout.
            await current.cancel()
            if ended is not None:
                await ended.wait()
        self._conversation.flush()
        session, place.session = place.session, None
        if session is not None:
            session.client.forget(session)
            self._modes.publish(cwd, None)
        self._conversation.render(cwd, events.Reset())
        self._conversation.flush()  # the float is empty when the message says so
        self._bridge.notify(f"minime: new conversation for {cwd}", "info")

    async def stop(self, stop: ops.Stop) -> None:
        # Never sent: a stop starts no new agent.
        dropped = sum(self._queue.drop_shown(cwd) for cwd in list(self._queue.cwds()))
        places = list(self._workspaces)
        ended = 0
        for place in places:
            if place.busy:
                place.stopped = True
                ended += 1
            # An ask whose agent still starts: ended now.
            if place.waiting is not None and place.waiting.end("stopped"):
                ended += 1
                self._conversation.render(
                    place.cwd, events.Done(stop_reason="stopped", cwd=place.cwd)
                )
        # No mode is set on a session being closed.
        await asyncio.gather(*(place.ready.cancel() for place in places))
        for place in places:
            if place.session is not None:
                self._modes.publish(place.cwd, None)
        await self._pool.close_all()
        if not stop.quiet:
            self._bridge.notify(stopped_text(ended, dropped), "info")


def stopped_text(ended: int, dropped: int) -> str:
    """:MiniMeStop's one line: what it ended, and the queued asks it dropped."""
    said = []
    if ended:
        said.append(f"{ended} turn{'s' if ended > 1 else ''} ended")
    if dropped:
        asks = f"{dropped} queued asks" if dropped > 1 else "1 queued ask"
        said.append(f"{asks} dropped (the text is the next input's draft)")
    return "minime: agent stopped" + ("; " + ", ".join(said) if said else "")
