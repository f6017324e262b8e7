"""The Neovim adapter: Lua's operations dispatched to the ACP loop, turns rendered in Lua.

Lua sends notifications (``dispatch``) on pynvim's thread; each is handed to the ACP loop at
once. The parts: bridge.py (the only way back into Neovim), agent_pool.py (agents and their
sessions, keyed on cwd), starting_asks.py (asks waiting for their agent to start),
session_reopen.py (:MiniMeSessions), lua_tools.py (editor tools),
prompts.py (permissions), render.py (the turn float's batches).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
from typing import Any

import msgspec

from .. import permissions
from ..elicitations import ElicitationAnswer, ElicitationRequest
from ..errors import AuthRequired, Error
from ..model import PermissionRequest
from ..session import Session
from . import events, fs_shown, ops
from .agent_pool import AgentPool
from .ask_queue import AskQueue
from .bridge import NvimBridge
from .events import LuaEvent
from .login import Login
from .loop_thread import LoopThread
from .lua_tools import LuaTools
from .mentions import prompt_blocks
from .prompts import Prompts
from .questions import Questions
from .render import Renderer, to_lua
from .ring_log import LOG_LINES, RingLog
from .session_modes import SessionModes
from .session_reopen import SessionReopener
from .single_flight import SingleFlight
from .starting_asks import StartingAsks
from .terminal_view import TerminalView
from .wire_text import clean

log = logging.getLogger("minime")


class Host:
    def __init__(self, nvim: Any, log_to: str = "minime") -> None:
        """``log_to``: the logger whose records :MiniMeLog shows — ``"minime"`` in Neovim's
        shared python3 host; the root logger (``""``) in our own process, so the ACP SDK's
        records (it logs to the root) show too."""
        self.nvim = nvim
        self.bridge = NvimBridge(nvim)
        self.loop_thread = LoopThread()
        self.setup = ops.Setup()
        # Each cwd's ask still waiting for its agent or session to start (starting_asks.py),
        # and the one start per cwd (session, then its mode) such asks wait for.
        self.starting: StartingAsks[Session] = StartingAsks()
        self._readying: SingleFlight[str, Session] = SingleFlight()
        # Each cwd's asks waiting for its running turn (or its start) to end: ask_queue.py.
        self.queue = AskQueue(self.render, self.notify_user, self._keep_text)
        # cwds whose running turn :MiniMeStop ends: their end reads "stopped", not an error.
        self._stopped: set[str] = set()
        # Each cwd's running turn: set when its last event (the end) has been rendered.
        self._turn_ended: dict[str, asyncio.Event] = {}
        # The tool context of a cwd's last accepted ask (for which tools to offer); set only by
        # an ask that starts a turn, so that one refused mid-turn changes nothing.
        self.tool_ctx: dict[str, dict[str, Any]] = {}
        self.tools = LuaTools(
            self.bridge.lua_call,
            lambda: self.setup,
            self.tool_ctx,
            began=self._tool_began,
            ended=self._tool_ended,
        )
        self.log_lines: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        self.stderr_lines: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        self.prompts = Prompts(
            self.bridge.lua,
            self._prompt_options,
            self._flush,
            self.loop_thread.call_soon,
            self._notice,
        )
        self.pool = AgentPool(
            self.bridge,
            self.tools.source,
            self.ask_permission,
            self.stderr_lines.append,
            file_system=lambda: (
                self.tools.file_system(self.pool.cwd_of, self._show_write)
                if self.setup.fs
                else None
            ),
        )
        self.pool.additional_directories = lambda: self.setup.additional_directories
        self.questions = Questions(self.bridge.lua, self._flush, self.loop_thread.call_soon)
        self.pool.on_elicitation = self.ask_question
        self.modes = SessionModes(self.bridge, self.pool.sessions.get)
        self.login = Login(self.pool, self.bridge)
        self.reopener = SessionReopener(
            self.pool,
            self.bridge,
            self.render,
            self._fail,
            self._accept,
            self._take_tool_ctx,
            self.modes,
        )
        self.terminal_view = TerminalView(self.pool.sessions.get, self.bridge)
        self.renderer: Renderer | None = None
        handler = RingLog(self.log_lines)
        logging.getLogger(log_to).addHandler(handler)
        logging.getLogger(log_to).setLevel(logging.INFO)
        self.loop_thread.call_soon(self._make_renderer)

    def _make_renderer(self) -> None:
        self.renderer = Renderer(self._send_batch)

    def _send_batch(self, key: str, batch: list[LuaEvent]) -> None:
        self.bridge.lua("require('minime.rpc').apply(...)", key, msgspec.to_builtins(batch))

    def render(self, key: str, item: LuaEvent) -> None:
        assert self.renderer is not None
        self.renderer.push(key, item)

    def notify_user(self, message: str, level: str = "error") -> None:
        self.bridge.notify(message, level)

    # -- notifications from Lua (on pynvim's thread) --------------------------------

    def dispatch(self, op: str, payload: Any) -> None:
        """One notification from Lua: its payload decoded once (ops.py), then handled."""
        try:
            message = ops.decode(op, payload)
        except ops.Malformed as exc:
            log.warning("a malformed %s request from Lua: %s", op, exc)
            self.notify_user(f"minime: a malformed {op} request from Lua was ignored: {exc}")
            return
        if isinstance(message, ops.PermissionAnswer):
            self.prompts.answer(message)
        elif isinstance(message, ops.ElicitationReply):
            self.questions.answer(message)
        elif isinstance(message, ops.ToolResult):
            self.tools.answer(message)
        elif isinstance(message, ops.Log):
            self.show_log()
        else:
            handler = getattr(self, f"op_{op}")
            self.loop_thread.submit(self._guard(op, handler(message)))

    async def _guard(self, op: str, coro: Any) -> None:
        try:
            await coro
        except Exception as exc:
            log.exception("%s failed", op)
            self.notify_user(f"minime: {op} failed: {exc}")

    def show_log(self) -> None:
        lines = ["# minime log", *self.log_lines, "", "# agent stderr", *self.stderr_lines]
        self.nvim.exec_lua("require('minime.rpc').show_log(...)", [clean(x) for x in lines])

    # -- operations (on the ACP loop) --------------------------------------------------

    async def op_setup(self, setup: ops.Setup) -> None:
        self.setup = setup

    def _prompt_options(self) -> dict[str, Any]:
        """What prompts.py reads of the options."""
        return {
            "permission_rules": self.setup.permission_rules,
            "permission_timeout": self.setup.permission_timeout,
        }

    async def op_ask(self, ask: ops.Ask) -> None:
        cwd = os.path.realpath(ask.cwd)
        if ask.queue and (cwd in self.queue or self._occupied(cwd)):
            self.queue.enqueue(cwd, ask)
            return
        next_ask: ops.Ask | None = ask
        while next_ask is not None:
            await self._ask(cwd, next_ask)
            # No await from the turn's end to the next ask's start: nothing runs between.
            next_ask = self.queue.next(cwd)

    def _occupied(self, cwd: str) -> bool:
        return self.pool.busy(cwd) or self.starting.get(cwd) is not None

    def _keep_text(self, ask: ops.Ask) -> None:
        """Typed text is never lost: the next input of this cwd opens with it (a draft)."""
        self.bridge.lua("require('minime.rpc').ask_refused(...)", ask.cwd, ask.prompt)

    async def _ask(self, cwd: str, ask: ops.Ask) -> None:
        kept = ":MiniMeCancel stops it; your text is kept for the next input"
        if not self._accept(cwd, ask, kept):
            self._keep_text(ask)
            return
        # This ask's selection (kept in Lua, where it was made) is the one the turn's tools see.
        if ask.ask_id is not None:
            self.bridge.lua("require('minime.rpc').ask_accepted(...)", cwd, ask.ask_id)
        label = clean(ask.label or ask.agent or "")
        self.render(cwd, events.Begin(prompt=clean(ask.prompt), cwd=cwd, agent=label))
        self._stopped.discard(cwd)
        waiting = self.starting.begin(cwd)
        if self._readying.running(cwd):  # a start a cancelled ask left running: this one waits
            self.render(cwd, events.Notice("starting the agent…"))
        try:
            ready = self._readying.run(cwd, lambda: self._open(cwd, ask))
            session = await waiting.wait(ready)
        except AuthRequired as exc:
            self._fail(cwd, f"{exc} — :MiniMeLogin logs in, then ask again")
            return
        except Error as exc:
            self._fail(cwd, str(exc))
            return
        finally:
            self.starting.finish(waiting)
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
        await self._run_turn(session, cwd, prompt)

    async def op_warm(self, warm: ops.Warm) -> None:
        """Start ``cwd``'s agent and session while the user types the first ask there: silent.
        A failure is only logged; the ask that follows starts again and says what went wrong."""
        cwd = os.path.realpath(warm.cwd)
        if cwd in self.pool.sessions or self._readying.running(cwd):
            return
        if cwd not in self.tool_ctx:  # the tools a request-discovery agent lists at session/new
            self._take_tool_ctx(cwd, warm)
        try:
            await self._readying.run(cwd, lambda: self._open(cwd, warm, announce=False))
        except Exception as exc:  # said by the ask, never by the warm-up
            log.info("warm-up for %s: %s", cwd, exc)

    async def _open(self, cwd: str, ask: ops.AgentOp, announce: bool = True) -> Session:
        """``cwd``'s session, started if need be, in its mode: ready for a first prompt."""

        def notice() -> None:
            self.render(cwd, events.Notice("starting the agent…"))

        try:
            # Said only when an agent process starts: not for a new session on a running one
            # (after :MiniMeReset), which is quick and silent; nor for a warm-up.
            session = await self.pool.session_for(cwd, ask, notice if announce else None)
        except Error as exc:
            log.warning("no session for %s: %s", cwd, exc)  # said by the ask still waiting
            raise
        await self.modes.opened(cwd, session, ask.mode)  # before its first prompt
        return session

    async def _run_turn(
        self, session: Session, cwd: str, prompt: str | list[dict[str, Any]]
    ) -> None:
        ended = self._turn_ended[cwd] = asyncio.Event()
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
            self._fail(cwd, str(exc), session.session_id)
            if not session.client.alive:
                self.pool.drop(session.client)
        finally:
            ended.set()
            if self._turn_ended.get(cwd) is ended:
                del self._turn_ended[cwd]

    def _fail(self, cwd: str, message: str, session_id: str = "") -> None:
        if cwd in self._stopped:  # :MiniMeStop ended it: a stop, not an error
            self._stopped.discard(cwd)
            self.render(cwd, events.Done(stop_reason="stopped", cwd=cwd, session_id=session_id))
            return
        done = events.Done(
            stop_reason="error", error=clean(message), cwd=cwd, session_id=session_id
        )
        self.render(cwd, done)

    def _accept(self, cwd: str, payload: ops.AgentOp, advice: str) -> bool:
        """Refuse (and say so) while a turn runs in ``cwd``, or an ask there still waits for
        its agent to start; else take the ask's tool context."""
        if self.pool.busy(cwd):
            self.notify_user(f"minime: a turn is already running in {cwd} — {advice}", "warn")
            return False
        if self.starting.get(cwd) is not None:
            self.notify_user(
                f"minime: the agent is still starting for an ask in {cwd} — "
                "wait for it, or :MiniMeCancel drops that ask",
                "warn",
            )
            return False
        self._take_tool_ctx(cwd, payload)
        return True

    def _take_tool_ctx(self, cwd: str, payload: ops.AgentOp) -> None:
        if payload.tool_ctx is not None:
            self.tool_ctx[cwd] = payload.tool_ctx

    async def op_cancel(self, payload: ops.CwdOp) -> None:
        cwd = os.path.realpath(payload.cwd or os.getcwd())
        # The queue first: the turn's end would start the next ask.
        dropped = self.queue.drop_shown(cwd)
        session = self.pool.sessions.get(cwd)
        waiting = self.starting.get(cwd)
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
        waiting = self.starting.get(cwd)
        if waiting is not None and waiting.end("cancelled"):  # an ask of the old conversation
            self.render(cwd, events.Done(stop_reason="cancelled", cwd=cwd))
            self._flush()  # its end reaches Lua (MiniMeTurnDone) before the reset
        ended = self._turn_ended.get(cwd)
        current = self.pool.sessions.get(cwd)
        if current is not None and current.busy:
            # The old turn ends in the old conversation (its "■ cancelled" line and title):
            # the session stays the cwd's until then, so an ask meanwhile is refused. The
            # library ends a turn the agent does not end within cancel_timeout.
            await current.cancel()
            if ended is not None:
                await ended.wait()
        self._flush()
        session = self.pool.sessions.pop(cwd, None)
        if session is not None:
            session.client.forget(session)
            self.modes.publish(cwd, None)
        self.render(cwd, events.Reset())
        self._flush()  # the float is empty when the message says so
        self.notify_user(f"minime: new conversation for {cwd}", "info")

    async def op_stop(self, stop: ops.Stop) -> None:
        for cwd in self.queue.cwds():  # never sent: a stop starts no new agent
            self.queue.drop_shown(cwd)
        self._stopped.update(cwd for cwd in self.pool.sessions if self.pool.busy(cwd))
        for waiting in self.starting.all():  # asks whose agent still starts: ended now
            if waiting.end("stopped"):
                self.render(waiting.cwd, events.Done(stop_reason="stopped", cwd=waiting.cwd))
        await self._readying.cancel_all()  # no mode is set on a session being closed
        for cwd in list(self.pool.sessions):
            self.modes.publish(cwd, None)
        await self.pool.close_all()
        if not stop.quiet:
            self.notify_user("minime: agent stopped", "info")

    async def op_sessions(self, payload: ops.Sessions) -> None:
        await self.reopener.list(payload)

    async def op_load_session(self, payload: ops.LoadSession) -> None:
        await self.reopener.load(payload)

    async def op_manage_session(self, payload: ops.ManageSession) -> None:
        await self.reopener.manage(payload)

    async def op_login(self, payload: ops.Login) -> None:
        await self.login.run(payload)

    async def op_mode(self, payload: ops.SetMode) -> None:
        await self.modes.set_mode(payload)

    async def op_config(self, payload: ops.SetConfig) -> None:
        await self.modes.set_config(payload)

    async def op_disk_kept(self, kept: ops.DiskKept) -> None:
        if kept.files:
            text = (
                "changed on disk by the agent, kept as you left them (unsaved edits;"
                " :e! takes the file): " + ", ".join(kept.files)
            )
            self.render(kept.cwd, events.Notice(clean(text)))

    async def op_terminal(self, payload: ops.ShowTerminal) -> None:
        await self.terminal_view.show(payload)

    # -- permissions ----------------------------------------------------------------------

    async def ask_question(self, request: ElicitationRequest) -> ElicitationAnswer:
        return await self.questions.ask(request, self.pool.cwd_of(request.session_id))

    async def ask_permission(self, request: PermissionRequest) -> permissions.Decision:
        cwd = self.pool.cwd_of(request.session_id)
        return await self.prompts.ask(request, cwd, self.pool.agent_of(request.session_id))

    def _notice(self, cwd: str, text: str) -> None:
        if cwd:
            self.render(cwd, events.Notice(clean(text)))

    def _tool_began(self) -> None:
        if self.renderer is not None:
            self.renderer.tool_began()

    def _tool_ended(self) -> None:
        if self.renderer is not None:
            self.renderer.tool_ended()

    def _flush(self) -> None:
        if self.renderer is not None:
            self.renderer.flush()

    def _show_write(self, cwd: str, write: fs_shown.FsWrite) -> None:
        """A write through the fs, in the conversation's stream (unless a tool shows it)."""
        session = self.pool.sessions.get(cwd)
        turn = session.running_turn() if session is not None else None
        if not fs_shown.already_shown(write, turn.calls.values() if turn else (), cwd):
            for item in fs_shown.shown(write):
                self.render(cwd, item)

    # -- shutdown ----------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Neovim is gone: end every agent's process tree now, without waiting on asyncio."""
        self.pool.kill_all()
        self.loop_thread.stop()
