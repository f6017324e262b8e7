"""The Neovim adapter: Lua's operations dispatched to the ACP loop, turns rendered in Lua.

Lua sends notifications (``dispatch``) on pynvim's thread; ops.OPS says where each goes, most to
the ACP loop at once. The parts, each handed what it uses once: bridge.py (the only way back
into Neovim), workspace.py (each cwd's session, waiting ask and stop state), agent_pool.py (the
agents; the host is its AgentHooks), conversation.py (the turn floats), editor_tools.py (the
editor tools), prompts.py and questions.py (permissions and the agent's questions),
session_modes.py, session_reopen.py, ask_queue.py.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import operator
import os
from typing import Any

from .. import permissions
from ..elicitations import ElicitationAnswer, ElicitationRequest
from ..errors import AuthRequired, Error
from ..model import PermissionRequest
from ..session import Session
from . import events, ops
from .agent_pool import AgentPool
from .ask_queue import AskQueue
from .bridge import NvimBridge
from .conversation import Conversation
from .editor_tools import LuaTools
from .login import Login
from .loop_thread import LoopThread
from .mentions import prompt_blocks
from .prompts import Prompts
from .questions import Questions
from .render import to_lua
from .ring_log import LOG_LINES, RingLog
from .session_modes import SessionModes
from .session_reopen import SessionReopener
from .terminal_view import TerminalView
from .wire_text import clean
from .workspace import Workspace, Workspaces

log = logging.getLogger("minime")


class Host:
    def __init__(self, nvim: Any, log_to: str = "minime") -> None:
        """``log_to``: the logger whose records :MiniMeLog shows — ``"minime"`` in Neovim's
        shared python3 host; the root logger (``""``) in our own process, so the ACP SDK's
        records (it logs to the root) show too."""
        self.nvim = nvim
        self.bridge = bridge = NvimBridge(nvim)
        self.loop_thread = LoopThread()
        self.settings = settings = ops.Settings()
        self.workspaces = workspaces = Workspaces()
        self.conversation = conversation = Conversation(bridge)
        # Each cwd's asks waiting for its running turn (or its start) to end: ask_queue.py.
        self.queue = AskQueue(conversation, bridge)
        self.tools = LuaTools(bridge, settings, workspaces, conversation)
        self.log_lines: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        self.stderr_lines: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        call_soon = self.loop_thread.call_soon
        self.prompts = Prompts(bridge, conversation, settings, call_soon)
        self.questions = Questions(bridge, conversation, call_soon)
        self.pool = AgentPool(bridge, workspaces, self)
        self.modes = SessionModes(bridge, workspaces)
        self.login = Login(self.pool, bridge)
        self.reopener = SessionReopener(self.pool, bridge, conversation, workspaces, self.modes)
        self.terminal_view = TerminalView(workspaces, bridge)
        handler = RingLog(self.log_lines)
        logging.getLogger(log_to).addHandler(handler)
        logging.getLogger(log_to).setLevel(logging.INFO)
        self.loop_thread.call_soon(conversation.start)

    def render(self, cwd: str, item: events.LuaEvent) -> None:
        self.conversation.render(cwd, item)

    def notify_user(self, message: str, level: str = "error") -> None:
        self.bridge.notify(message, level)

    # -- notifications from Lua (on pynvim's thread) --------------------------------

    def dispatch(self, op: str, payload: Any) -> None:
        """One notification from Lua: its payload decoded once, then handed to its handler
        (ops.OPS), on the ACP loop unless it answers a request waiting there."""
        try:
            message = ops.decode(op, payload)
        except ops.Malformed as exc:
            log.warning("a malformed %s request from Lua: %s", op, exc)
            self.notify_user(f"minime: a malformed {op} request from Lua was ignored: {exc}")
            return
        route = ops.OPS[op]
        handler = operator.attrgetter(route.handler)(self)
        if route.now:
            handler(message)
        else:
            self.loop_thread.submit(self._guard(op, handler(message)))

    async def _guard(self, op: str, coro: Any) -> None:
        try:
            await coro
        except Exception as exc:
            log.exception("%s failed", op)
            self.notify_user(f"minime: {op} failed: {exc}")

    def show_log(self, _: ops.Log | None = None) -> None:
        lines = ["# minime log", *self.log_lines, "", "# agent stderr", *self.stderr_lines]
        self.nvim.exec_lua("require('minime.rpc').show_log(...)", [clean(x) for x in lines])

    # -- operations (on the ACP loop) --------------------------------------------------

    async def op_setup(self, setup: ops.Setup) -> None:
        self.settings.setup = setup

    async def op_ask(self, ask: ops.Ask) -> None:
        place = self.workspaces[os.path.realpath(ask.cwd)]
        if ask.queue and (place.cwd in self.queue or place.occupied):
            self.queue.enqueue(place.cwd, ask)
            return
        next_ask: ops.Ask | None = ask
        while next_ask is not None:
            await self._ask(place, next_ask)
            # No await from the turn's end to the next ask's start: nothing runs between.
            next_ask = self.queue.next(place.cwd)

    async def _ask(self, place: Workspace, ask: ops.Ask) -> None:
        cwd = place.cwd
        refusal = place.refusal(":MiniMeCancel stops it; your text is kept for the next input")
        if refusal is not None:
            self.notify_user(refusal, "warn")
            self.conversation.keep_text(ask)
            return
        place.take_tools(ask)
        # This ask's selection (kept in Lua, where it was made) is the one the turn's tools see.
        if ask.ask_id is not None:
            self.bridge.rpc("ask_accepted", cwd, ask.ask_id)
        label = clean(ask.label or ask.agent or "")
        self.render(cwd, events.Begin(prompt=clean(ask.prompt), cwd=cwd, agent=label))
        place.stopped = False
        waiting = place.begin_waiting()
        if place.ready.running():  # a start a cancelled ask left running: this one waits
            self.render(cwd, events.Notice("starting the agent…"))
        try:
            ready = place.ready.run(lambda: self._open(place, ask))
            session = await waiting.wait(ready)
        except AuthRequired as exc:
            self.conversation.fail(place, f"{exc} — :MiniMeLogin logs in, then ask again")
            return
        except Error as exc:
            self.conversation.fail(place, str(exc))
            return
        finally:
            place.finish_waiting(waiting)
        if session is None:  # cancelled or stopped while it started: already said
            return
        text = ask.context or ask.prompt
        prompt: str | list[dict[str, Any]] = text
        if ask.mentions:
            built = prompt_blocks(text, ask.mentions, session.client.agent_capabilities)
            if note := built.message():
                self.notify_user(note, "warn")
            if built.shown:
                self.render(cwd, events.Attached(names=[clean(n) for n in built.shown]))
            prompt = built.blocks
        # No await from here to the turn: the session is busy before another ask can look.
        await self._run_turn(session, place, prompt)

    async def op_warm(self, warm: ops.Warm) -> None:
        """Start ``cwd``'s agent and session while the user types the first ask there: silent.
        A failure is only logged; the ask that follows starts again and says what went wrong."""
        place = self.workspaces[os.path.realpath(warm.cwd)]
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
            self.render(cwd, events.Notice("starting the agent…"))

        try:
            # Said only when an agent process starts: not for a new session on a running one
            # (after :MiniMeReset), which is quick and silent; nor for a warm-up.
            session = place.live_session() or await self.pool.open_session(
                cwd, ask, notice if announce else None
            )
        except Error as exc:
            log.warning("no session for %s: %s", cwd, exc)  # said by the ask still waiting
            raise
        await self.modes.opened(place, session, ask.mode)  # before its first prompt
        return session

    async def _run_turn(
        self, session: Session, place: Workspace, prompt: str | list[dict[str, Any]]
    ) -> None:
        cwd = place.cwd
        ended = place.turn_ended = asyncio.Event()
        try:
            async for event in session.stream(prompt):
                if self.modes.follow(cwd, session, event):
                    continue
                item = to_lua(event)
                if isinstance(item, events.Done):
                    item.session_id = session.session_id
                    item.cwd = cwd
                self.render(cwd, item)
        except Error as exc:
            self.conversation.fail(place, str(exc), session.session_id)
            if not session.client.alive:
                self.pool.drop(session.client)
        finally:
            ended.set()
            if place.turn_ended is ended:
                place.turn_ended = None

    async def op_cancel(self, payload: ops.CwdOp) -> None:
        cwd = os.path.realpath(payload.cwd or os.getcwd())
        # The queue first: the turn's end would start the next ask.
        dropped = self.queue.drop_shown(cwd)
        place = self.workspaces[cwd]
        session, waiting = place.session, place.waiting
        if waiting is not None:
            # The ask is dropped now; its agent goes on starting, for the next ask.
            if waiting.end("cancelled"):
                self.render(cwd, events.Done(stop_reason="cancelled", cwd=cwd))
        elif session is not None and session.busy:
            await session.cancel()
        elif not dropped:
            self.notify_user(f"minime: no turn running in {cwd}", "info")
        if dropped:
            asks = f"{dropped} queued asks" if dropped > 1 else "1 queued ask"
            self.notify_user(
                f"minime: cancelled; {asks} dropped (the text is the next input's draft)", "info"
            )

    async def op_reset(self, payload: ops.CwdOp) -> None:
        cwd = os.path.realpath(payload.cwd or os.getcwd())
        self.queue.drop_shown(cwd)  # asks of the old conversation: their text is the draft
        place = self.workspaces[cwd]
        waiting = place.waiting
        if waiting is not None and waiting.end("cancelled"):  # an ask of the old conversation
            self.render(cwd, events.Done(stop_reason="cancelled", cwd=cwd))
            self.conversation.flush()  # its end reaches Lua (MiniMeTurnDone) before the reset
        ended = place.turn_ended
        current = place.session
        if current is not None and current.busy:
            # The old turn ends in the old conversation (its "■ cancelled" line and title):
            # the session stays the cwd's until then, so an ask meanwhile is refused. The
            # library ends a turn the agent does not end within cancel_timeout.
            await current.cancel()
            if ended is not None:
                await ended.wait()
        self.conversation.flush()
        session, place.session = place.session, None
        if session is not None:
            session.client.forget(session)
            self.modes.publish(cwd, None)
        self.render(cwd, events.Reset())
        self.conversation.flush()  # the float is empty when the message says so
        self.notify_user(f"minime: new conversation for {cwd}", "info")

    async def op_stop(self, stop: ops.Stop) -> None:
        for cwd in self.queue.cwds():  # never sent: a stop starts no new agent
            self.queue.drop_shown(cwd)
        places = list(self.workspaces)
        for place in places:
            if place.busy:
                place.stopped = True
            # An ask whose agent still starts: ended now.
            if place.waiting is not None and place.waiting.end("stopped"):
                self.render(place.cwd, events.Done(stop_reason="stopped", cwd=place.cwd))
        # No mode is set on a session being closed.
        await asyncio.gather(*(place.ready.cancel() for place in places))
        for place in places:
            if place.session is not None:
                self.modes.publish(place.cwd, None)
        await self.pool.close_all()
        if not stop.quiet:
            self.notify_user("minime: agent stopped", "info")

    # -- what each new agent gets (agent_pool.AgentHooks) ----------------------------------

    def tool_source(self, discovery: str) -> Any:
        return self.tools.source(discovery)

    def file_system(self) -> Any:
        return self.tools.file_system()

    async def ask_permission(self, request: PermissionRequest) -> permissions.Decision:
        cwd = self.pool.cwd_of(request.session_id)
        return await self.prompts.ask(request, cwd, self.pool.agent_of(request.session_id))

    async def ask_question(self, request: ElicitationRequest) -> ElicitationAnswer:
        return await self.questions.ask(request, self.pool.cwd_of(request.session_id))

    def agent_stderr(self, line: str) -> None:
        self.stderr_lines.append(line)

    def additional_directories(self) -> list[str]:
        return self.settings.setup.additional_directories

    # -- shutdown ----------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Neovim is gone: end every agent's process tree now, without waiting on asyncio."""
        self.pool.kill_all()
        self.loop_thread.stop()
