"""One ACP session: its turns, streamed as events, cancelled on request; its state as the
agent says it; the events between turns to whoever subscribed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Generator
from typing import Any

from .connection import Connection
from .errors import Busy, Error
from .history import History
from .live_terminals import LiveTerminals
from .model import AvailableCommand, ConfigOption, Event, Result, SessionModes, ToolCall
from .session_state import SessionState
from .terminals import Terminal, Terminals
from .transport import STOP_REASON_META
from .turn import Prompt, Turn, TurnHooks, TurnStream, merged
from .updates import ended_call, ends, terminal_chunk, to_event

log = logging.getLogger("minime")

__all__ = ["Inbound", "Session"]

Subscriber = Callable[[Event], None]


class Session:
    """A conversation on a :class:`~minime.client.Client`. One turn at a time."""

    def __init__(
        self,
        connection: Connection,
        session_id: str,
        cwd: str,
        *,
        terminals: Terminals | None = None,
        cancel_timeout: float = 30.0,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self._connection = connection
        self._terminals = terminals
        self._cancel_timeout = cancel_timeout
        self._state = SessionState(lambda: connection.agent_name)
        self._questions: set[asyncio.Future[Any]] = set()  # permission and elicitation prompts
        self._subscribers: list[Subscriber] = []
        self._replay_to: Subscriber | None = None  # a session/load's replay, until its answer
        self.history = History()  # each turn's ask and answer (history.py: what a rewind keeps)
        self._turn: Turn | None = None
        self._abandoned: Turn | None = None  # _turn, when its stream let go of it (still ending)
        self._ending: Turn | None = None
        # Tool call ids of the turns before the running one: a late update is not the new turn's.
        self._past_calls: set[str] = set()
        self._replay: Turn | None = None  # what a session/load replay gathers (_replaying)
        self._live = LiveTerminals(self._terminal, self._running_turn)
        self._turn_hooks = TurnHooks(
            begin=self._begin,
            release=self._release,
            abandon=self._abandon,
            cancel=self._cancel_turn,
            cancel_timeout=cancel_timeout,
        )
        self.inbound = Inbound(self)  # the library's side: what the agent sends it

    @property
    def busy(self) -> bool:
        return self._turn is not None and self._turn is not self._abandoned

    @property
    def agent_name(self) -> str:
        """How messages name the agent: its own name (initialize's agentInfo), else the label
        of its definition (the SDK's example agent sends none: not ``node``), else its binary."""
        return self._connection.agent_name

    # -- what the agent says the session is ---------------------------------------------------

    @property
    def modes(self) -> SessionModes | None:
        return self._state.modes

    @property
    def config_options(self) -> list[ConfigOption]:
        return self._state.config_options

    @property
    def usage(self) -> dict[str, Any] | None:
        return self._state.usage

    @property
    def title(self) -> str | None:
        return self._state.title

    @property
    def commands(self) -> list[AvailableCommand]:
        return self._state.commands

    # -- events between turns ---------------------------------------------------------------

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        """``fn(event)`` for each event outside a turn (a mode, the title, a late tool update…);
        returns the function that unsubscribes it."""
        self._subscribers.append(fn)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.remove(fn)

        return unsubscribe

    def _begin_replay(self, fn: Subscriber) -> Callable[[], None]:
        """A session/load's history goes to ``fn`` until the returned function ends it."""
        self._replay_to = fn
        return self._end_replay

    def _end_replay(self) -> None:
        self._replay_to = None

    # -- updates from the agent ------------------------------------------------------

    def _on_acp_update(self, update: Any) -> None:
        """One ``session/update`` of this session."""
        turn = self._turn
        live = turn is not None and turn.sent
        # Where a command's streamed output is gathered: the running turn, or the history a
        # session/load replays (codex-acp 2.6 replays it in updates without a status).
        gathering = turn if live else self._replaying()
        call_id = getattr(update, "tool_call_id", None) or ""
        earlier = gathering.calls.get(call_id) if gathering else None
        ending = gathering is not None and ends(update, earlier)
        streamed = gathering.streamed_output(call_id) if ending and gathering else ""
        text_of = self._terminal_text if self._terminals is not None else None
        event = self._state.event(update) or to_event(update, earlier, streamed, text_of)
        if event is None:
            return
        if not self._state.follow(event):  # mode and config: known between turns too
            return
        if live and self._is_past(update, turn):  # type: ignore[arg-type]
            log.debug("an update for a call of an earlier turn, not shown: %s", event.kind)
            return
        if gathering is not None:
            chunk = terminal_chunk(getattr(update, "field_meta", None))
            if chunk and call_id:
                gathering.keep_output(call_id, chunk)
        shown = [event]
        result = ended_call(update, streamed, text_of)
        if result is not None:
            shown.append(result)
        elif event.kind in ("tool_call", "tool_update") and event.call is not None:
            shown.extend(self._live.shown_by(event.call))
        for one in shown:
            self._show(one, turn if live else None)

    def _terminal(self, terminal_id: str) -> Terminal | None:
        """The client terminal ``terminal_id`` as shown, released or not (None: none here)."""
        return self._terminals.shown(terminal_id) if self._terminals is not None else None

    def _terminal_text(self, terminal_id: str) -> str | None:
        terminal = self._terminal(terminal_id)
        return terminal.text if terminal is not None else None

    def _running_turn(self) -> Turn | None:
        """The turn whose prompt is in flight (not one that only ends, nor a replay)."""
        turn = self._turn
        return turn if turn is not None and turn.sent else None

    @property
    def running_calls(self) -> list[ToolCall]:
        """The tool calls of the turn in flight, each as its updates so far merged it."""
        turn = self._running_turn()
        return list(turn.calls.values()) if turn is not None else []

    def _replaying(self) -> Turn | None:
        """The store of a replay's streamed output while a session/load replays."""
        if self._replay_to is None:
            self._replay = None
        elif self._replay is None:
            self._replay = Turn("")
        return self._replay

    def _show(self, event: Event, turn: Turn | None) -> None:
        if turn is not None:
            turn.push(event)
            return
        if self._replay is not None and event.call is not None:  # a replay's calls: merged alike
            event.call = self._replay.known_call(event.call)
        receivers = [self._replay_to] if self._replay_to is not None else list(self._subscribers)
        for receiver in receivers:
            try:
                receiver(event)
            except (Exception, SystemExit, KeyboardInterrupt):  # the caller's bug: logged, no exit
                log.exception("a session subscriber failed")
        if not receivers:
            # Between turns (codex-acp: a cancelled turn's last update ~10 s later): not drawn.
            log.debug("an update between turns, not shown: %s", event.kind)

    @contextlib.contextmanager
    def _asking(self, question: asyncio.Future[Any]) -> Generator[None]:
        """While the user is asked (a permission, a question): the turn's cancel, or the
        agent's death, withdraws it."""
        self._questions.add(question)
        try:
            yield
        finally:
            self._questions.discard(question)

    def _permission_call(self, call: ToolCall) -> ToolCall:
        """The call a permission request names, completed with what the running turn knows of
        it where the request says nothing (claude-agent-acp asks to approve a plan with empty
        rawInput and content: the plan came in the call's tool_call_update). A call the turn
        has not seen is drawn from the request (qwen-code asks before it sends the call's
        ``tool_call``, then sends only its final, untitled ``tool_call_update``)."""
        turn = self._turn
        before = turn.calls.get(call.id) if turn is not None else None
        if before is not None:
            return merged(call, before)
        if turn is not None and turn.sent:
            turn.push(Event(kind="tool_call", call=call))
        return call

    def _is_past(self, update: Any, turn: Turn) -> bool:
        """A tool_call_update for a call of an earlier turn that this turn does not have (the
        SDK's example agent reuses ids per turn, with a tool_call first)."""
        if getattr(update, "session_update", None) != "tool_call_update":
            return False
        call_id = update.tool_call_id
        return call_id in self._past_calls and call_id not in turn.calls

    def _fail_turn(self, error: BaseException) -> None:
        """End the running turn (and one still ending) with ``error``."""
        for turn in (self._turn, self._ending):
            if turn is not None:
                turn.fail(error)
        for task in list(self._questions):
            task.cancel()

    # -- modes and config options ----------------------------------------------------------

    async def set_mode(self, mode_id: str) -> None:
        """``session/set_mode`` (no ACP modes: the ``mode`` config option); mid-turn too; a mode
        the agent did not offer is refused (:class:`Error`) and nothing is sent."""
        self._state.check_mode(mode_id)
        if (option := self._state.mode_option) is not None:  # opencode: build, plan
            await self.set_config_option(option, mode_id)
            return
        connection = self._connection
        connection.check_alive()
        work = connection.rpc.set_session_mode(session_id=self.session_id, mode_id=mode_id)
        await connection.request("session/set_mode", work)
        self._state.mode_changed(mode_id)

    async def set_config_option(self, config_id: str, value: str | bool) -> list[ConfigOption]:
        """``session/set_config_option``: a select option takes one of its values, a boolean
        one True or False; anything else is refused (:class:`Error`) and nothing is sent.
        Returns every option as the agent now says they are."""
        option = self._state.check_option(config_id, value)
        connection = self._connection
        connection.check_alive()
        work = connection.rpc.set_config_option(
            config_id=config_id, session_id=self.session_id, value=value
        )
        response = await connection.request("session/set_config_option", work)
        self._state.option_changed(option, value, response)
        return self.config_options

    # -- turns --------------------------------------------------------------------------

    def stream(self, prompt: Prompt) -> TurnStream:
        """The turn as events; the last one is ``done``. Leaving the loop early cancels it."""
        if self.busy:
            raise Busy()
        if self._turn is not None:  # abandoned, still ending: the next turn waits for it
            self._ending, self._abandoned = self._turn, None
        turn = Turn(prompt, self.history)
        self._turn = turn
        return TurnStream(turn, self._turn_hooks)

    async def complete(self, prompt: Prompt) -> Result:
        """One whole turn. Cancelling the awaiting task cancels the turn, then re-raises."""
        stream = self.stream(prompt)
        try:
            async for event in stream:
                if event.kind == "done":
                    return Result(event.text, event.stop_reason or "", event.usage)
        finally:
            await stream.aclose()
        raise Error("the turn ended without an answer")  # pragma: no cover - stream always ends

    async def cancel(self) -> None:
        """Send ``session/cancel``; the turn ends ``cancelled`` with the text so far."""
        if self._turn is not None:
            await self._cancel_turn(self._turn)

    async def _cancel_turn(self, turn: Turn) -> None:
        """Cancel this very turn (not whichever turn runs when the call is finally made)."""
        if turn.phase in ("cancelling", "ended"):
            return
        for task in list(self._questions):
            task.cancel()
        if turn.phase == "waiting":  # never sent: nothing to tell the agent
            turn.finish("cancelled", None)
            return
        bound = self._cancel_timeout
        turn.cancelling(
            bound,
            Error(f"the agent did not end the turn within {bound:g} s of session/cancel"),
        )
        await self._connection.cancel(self.session_id)

    async def _begin(self, turn: Turn) -> None:
        ending = self._ending
        if ending is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ending.wait_ended(), self._cancel_timeout + 1)
            self._past_calls.update(ending.calls)
            self._ending = None
        if turn.phase == "ended":  # cancelled before it was sent
            return
        if not self._connection.alive:
            turn.fail(self._connection.death or Error("the agent connection is closed"))
            return
        turn.begin(self._send)

    async def _send(self, turn: Turn) -> None:
        from acp import text_block

        prompt = turn.prompt
        blocks: list[Any] = [text_block(prompt)] if isinstance(prompt, str) else list(prompt)
        connection = self._connection
        try:
            work = connection.rpc.prompt(session_id=self.session_id, prompt=blocks)
            response = await connection.request("turn", work)
        except Error as exc:
            turn.fail(exc)
            return
        usage = None
        if response.usage is not None:
            usage = response.usage.model_dump(mode="json", exclude_none=True)
        meta = response.field_meta or {}
        passed = meta.get(STOP_REASON_META)  # one the SDK's schema does not know: as sent
        turn.finish(passed if isinstance(passed, str) else response.stop_reason, usage)

    def _abandon(self, turn: Turn) -> None:
        if self._turn is turn:
            self._abandoned = turn

    def _release(self, turn: Turn) -> None:
        if turn.phase != "ended":
            return
        self._past_calls.update(turn.calls)
        if self._turn is turn:
            self._turn = self._abandoned = None
        if self._ending is turn:
            self._ending = None


class Inbound:
    """The agent's side of a session: what the connection hands it (the answer that opened
    it, its updates, a replay, permission questions) and the end the agent's death brings.
    The library's own seam (session_registry.py, handler.py); a program has no use for it."""

    def __init__(self, session: Session) -> None:
        self._session = session

    @property
    def session_id(self) -> str:
        return self._session.session_id

    @property
    def cwd(self) -> str:
        return self._session.cwd

    def take_answer(self, answer: Any) -> None:
        """The modes and options a session/new, load or resume answer gives."""
        self._session._state.take_answer(answer)

    def begin_replay(self, fn: Subscriber) -> Callable[[], None]:
        return self._session._begin_replay(fn)

    def end_replay(self) -> None:
        self._session._end_replay()

    def update(self, update: Any) -> None:
        self._session._on_acp_update(update)

    def terminal_grew(self, terminal_id: str) -> None:
        """A client terminal of this session printed more."""
        self._session._live.grew(terminal_id)

    def asking(self, question: asyncio.Future[Any]) -> contextlib.AbstractContextManager[None]:
        return self._session._asking(question)

    def permission_call(self, call: ToolCall) -> ToolCall:
        return self._session._permission_call(call)

    def fail_turn(self, error: BaseException) -> None:
        self._session._fail_turn(error)
