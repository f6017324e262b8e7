"""Session modes and config options in the editor: the mode the user chose (``setup{ mode }``
or the agent's definition) applied when a session opens, :MiniMeMode and :MiniMeConfig, and
what Lua shows (lua/minime/modes.lua: the float's title, the statusline, the commands'
completion) kept as the agent says it is.

Why: claude-agent-acp and codex-acp start in modes that never ask before editing; without
``session/set_mode`` the permission prompt never appears.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec

from ..errors import Error
from ..model import Event
from ..session import Session
from ..session_state import STATE_KINDS
from . import ops
from .bridge import NvimBridge
from .events import ModesState
from .thread import Thread
from .thread_registry import Threads
from .wire_text import clean_all

log = logging.getLogger("minime")


def state_of(session: Session) -> ModesState:
    """What Lua keeps of a session (events.ModesState). Its mode only if the agent offered it
    (session/new may name any ``currentModeId``)."""
    modes = session.modes
    offered = modes is not None and modes.find(modes.current) is not None
    if modes is not None and not offered:
        log.warning("the current mode %s was never offered: not shown", ascii(modes.current)[:200])

    def shown(value: Any) -> Any:
        return clean_all(_without_none(msgspec.to_builtins(value)), 1)

    return ModesState(
        agent=clean_all(session.agent_name),
        mode=clean_all(modes.current) if modes and offered else None,
        modes=shown(modes.available) if modes else [],
        config=shown(session.config_options),
        usage=shown(session.usage),
        title=clean_all(session.title),
        commands=shown(session.commands),
    )


def _without_none(value: Any) -> Any:
    """None fields left out: in Lua they would be vim.NIL, not nil."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


class SessionModes:
    """``threads`` holds each thread's session; what Lua keeps is keyed by the thread's id."""

    def __init__(self, bridge: NvimBridge, threads: Threads) -> None:
        self._bridge = bridge
        self._threads = threads
        self._warned: set[tuple[str, str]] = set()

    # -- what Lua shows ---------------------------------------------------------------------

    def publish(self, thread: Thread, session: Session | None) -> None:
        state = state_of(session) if session is not None else None
        self._bridge.rpc("modes_update", thread.id, state)

    def follow(self, thread: Thread, session: Session, event: Event) -> bool:
        """A ``mode``, ``config``, ``usage``, ``title`` or ``commands`` event (the session
        already follows it): shown; True. A title is the thread's too (the overview)."""
        if event.kind not in STATE_KINDS:
            return False
        self.publish(thread, session)
        if event.kind == "title":
            thread.changed()
        return True

    # -- a session opens ---------------------------------------------------------------------

    async def opened(self, thread: Thread, session: Session, wanted: str | None) -> None:
        """Once per session: set the wanted mode if the agent offers it (else warn, once per
        agent and mode), show the state, and follow the agent's changes between turns."""
        if thread.moded is session:
            return
        thread.moded = session
        session.subscribe(lambda event: self._between_turns(thread, session, event))
        if wanted:
            await self._apply(thread, session, wanted)
        self.publish(thread, session)

    def _between_turns(self, thread: Thread, session: Session, event: Event) -> None:
        if thread.session is session:  # not one the thread has let go of
            self.follow(thread, session, event)

    async def _apply(self, thread: Thread, session: Session, wanted: str) -> None:
        modes = session.modes
        label = session.agent_name
        if modes is not None and modes.find(wanted) is not None:
            if modes.current == wanted:
                return
            # An agent that never answers keeps no ask.
            bound = thread.client.options.ready_timeout if thread.client is not None else 60.0
            try:
                await asyncio.wait_for(session.set_mode(wanted), bound)
                log.info("mode %s set for session %s", wanted, session.session_id)
            except TimeoutError:
                self._bridge.notify(
                    f"minime: the mode {wanted!r} was not set: {session.agent_name} did not "
                    f"answer session/set_mode within {bound:g} s; it stays in {modes.current!r}",
                    "warn",
                )
            except Error as exc:
                self._bridge.notify(f"minime: the mode {wanted!r} was not set: {exc}", "warn")
            return
        key = (label, wanted)
        if key in self._warned:
            return
        self._warned.add(key)
        if modes is None or not modes.available:
            why = f"{label} offers no session modes"
        else:
            why = f"{label} offers no mode {wanted!r}; its modes: " + ", ".join(
                mode.id for mode in modes.available
            )
        log.warning("mode not set: %s", why)
        self._bridge.notify(f"minime: mode = {wanted!r} not set: {why}", "warn")

    # -- :MiniMeMode and :MiniMeConfig ---------------------------------------------------------

    def _session(self, payload: ops.ThreadOp, command: str) -> tuple[Thread, Session] | None:
        thread = self._threads.find(payload.thread)
        session = thread.live_session() if thread is not None else None
        if thread is None or session is None:
            self._bridge.notify(
                f"minime: no session in {payload.cwd} yet: :MiniMeAsk starts one, then {command}",
                "warn",
            )
            return None
        return thread, session

    async def set_mode(self, payload: ops.SetMode) -> None:
        found = self._session(payload, ":MiniMeMode")
        if found is None:
            return
        thread, session = found
        cwd = thread.cwd
        try:
            await session.set_mode(payload.mode_id)
        except Error as exc:
            self._bridge.notify(f"minime: {exc}", "error")
            return
        self.publish(thread, session)
        mode = session.modes.find(payload.mode_id) if session.modes else None
        name = mode.name if mode is not None else payload.mode_id
        self._bridge.notify(f"minime: mode {name} ({payload.mode_id}) in {cwd}", "info")

    async def set_config(self, payload: ops.SetConfig) -> None:
        found = self._session(payload, ":MiniMeConfig")
        if found is None:
            return
        thread, session = found
        cwd = thread.cwd
        value = _typed(session, payload.config_id, payload.value)
        try:
            await session.set_config_option(payload.config_id, value)
        except Error as exc:
            self._bridge.notify(f"minime: {exc}", "error")
            return
        self.publish(thread, session)
        shown = str(value).lower() if isinstance(value, bool) else value
        self._bridge.notify(f"minime: {payload.config_id} = {shown} in {cwd}", "info")


_BOOLEANS = {"true": True, "on": True, "1": True, "false": False, "off": False, "0": False}


def _typed(session: Session, config_id: str, value: str | bool) -> str | bool:
    """A boolean option's value typed as a word (``on``, ``false``…) as the bool it means."""
    option = next((o for o in session.config_options if o.id == config_id), None)
    if option is not None and option.type == "boolean" and isinstance(value, str):
        return _BOOLEANS.get(value.lower(), value)
    return value
