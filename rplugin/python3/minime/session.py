"""One ACP session: its turns, streamed as events, cancelled on request."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import session_state
from .errors import Busy, Error
from .live_terminals import LiveTerminals
from .model import AvailableCommand, ConfigOption, Event, Result, SessionModes, ToolCall
from .transport import STOP_REASON_META
from .updates import TERMINAL_STATUSES, ended_call, terminal_chunk, to_event

if TYPE_CHECKING:
    from .client import Client

log = logging.getLogger("minime")

Prompt = str | list[dict[str, Any]]
_BACKGROUND: set[asyncio.Task[None]] = set()
# Characters of a call's streamed output kept (the editor shows 2,000 lines of it).
MAX_STREAMED = 1024 * 1024


def merged(call: ToolCall, before: ToolCall) -> ToolCall:
    """``call`` as an update or a request names it, with what ``before`` said where it says
    nothing (an empty input counts as nothing: agents send ``rawInput: {}``)."""
    return ToolCall(
        id=call.id,
        title=call.title or before.title,
        kind=call.kind or before.kind or "other",
        status=call.status or before.status,
        input=call.input if call.input not in (None, {}) else before.input,
        content=call.content or before.content,
        locations=call.locations if call.locations is not None else before.locations,
    )


class Turn:
    """The state of one prompt: its queue of events, its end, and whether it was cancelled.

    A tool call is an upsert: its first ``tool_call`` or ``tool_call_update`` gives a
    ``tool_call`` event, later non-final ones ``tool_update`` (the call as known so far), a
    ``completed``/``failed`` one ``tool_result``.
    """

    def __init__(self, prompt: Prompt) -> None:
        self.prompt = prompt
        self.queue: asyncio.Queue[Event | BaseException] = asyncio.Queue()
        self.parts: list[str] = []
        self._message_id: str | None = None  # of the last text chunk
        self.calls: dict[str, ToolCall] = {}
        # A command's output so far, per call, when the agent streams it in ``_meta`` chunks:
        # the parts (joined once, when the call ends) and how many characters were kept.
        self.streamed: dict[str, list[str]] = {}
        self._streamed_size: dict[str, int] = {}
        self.ended = asyncio.Event()
        self.request: asyncio.Task[None] | None = None
        self.cancel_sent = False
        self.abandoned = False
        self._deadline: asyncio.TimerHandle | None = None

    def keep_output(self, call_id: str, chunk: str) -> None:
        """A chunk of the streamed output of ``call_id``, kept up to MAX_STREAMED characters (a
        command can print without end; what is shown is cut far sooner)."""
        size = self._streamed_size.get(call_id, 0)
        parts = self.streamed.setdefault(call_id, [])
        if size < MAX_STREAMED:
            parts.append(chunk[: MAX_STREAMED - size])
        self._streamed_size[call_id] = size + len(chunk)

    def streamed_output(self, call_id: str) -> str:
        text = "".join(self.streamed.get(call_id, ()))
        more = self._streamed_size.get(call_id, 0) - len(text)
        return f"{text}\n… ({more} more characters not kept)\n" if more > 0 else text

    def push(self, event: Event) -> None:
        if self.ended.is_set():
            log.debug("an update after its turn ended, not shown: %s", event.kind)
            return
        if event.call is not None:
            if event.kind == "tool_call" and event.call.id in self.calls:
                event.kind = "tool_update"  # agents send a call's tool_call again (mm: twice)
            event.call = self.known_call(event.call)
        if event.kind == "text":
            mid = event.message_id
            if self.parts and mid is not None and self._message_id not in (None, mid):
                self.parts.append("\n\n")  # a new message (claude: text, a tool, more text)
            self._message_id = mid if mid is not None else self._message_id
            self.parts.append(event.text)
        self.queue.put_nowait(event)

    def known_call(self, call: ToolCall) -> ToolCall:
        """An update names only what changed: keep what earlier events said about the call."""
        before = self.calls.get(call.id)
        if before is not None:
            call = merged(call, before)
        elif not call.kind:  # a first tool_call_update that names no kind: ACP's default
            call.kind = "other"
        self.calls[call.id] = call
        return call

    def finish(self, stop_reason: str, usage: dict[str, Any] | None) -> None:
        if self.ended.is_set():
            return
        text = "".join(self.parts)
        self.queue.put_nowait(Event(kind="done", stop_reason=stop_reason, usage=usage, text=text))
        self._end()

    def fail(self, error: BaseException) -> None:
        if self.ended.is_set():
            return
        self.queue.put_nowait(error)
        self._end()

    def _end(self) -> None:
        self.ended.set()
        if self._deadline is not None:
            self._deadline.cancel()
        request = self.request
        if request is not None and not request.done() and request is not asyncio.current_task():
            request.cancel()

    def arm_deadline(self, seconds: float, error: Error) -> None:
        self._deadline = asyncio.get_running_loop().call_later(seconds, self.fail, error)


class Session:
    """A conversation on a :class:`~minime.client.Client`. One turn at a time."""

    def __init__(self, client: Client, session_id: str, cwd: str) -> None:
        self.client = client
        self.session_id = session_id
        self.cwd = cwd
        self.pending_permissions: set[asyncio.Future[Any]] = set()
        self.on_update: Callable[[Event], None] | None = None
        self._turn: Turn | None = None
        self._ending: Turn | None = None
        # What the agent's answer to session/new (load, resume) and its updates say.
        self.modes: SessionModes | None = None
        self.config_options: list[ConfigOption] = []
        self.usage: dict[str, Any] | None = None  # the last usage_update: {used, size, cost?}
        self.title: str | None = None  # the last session_info_update's title
        # The agent's slash commands, as its last available_commands_update listed them (one
        # sent before the session/new answer too: the client keeps those for the session).
        self.commands: list[AvailableCommand] = []
        # Tool call ids of the turns before the running one: a late update for one of them
        # (codex-acp sends a cancelled turn's last one ~10 s later) is not the new turn's.
        self._past_calls: set[str] = set()
        self._replay: Turn | None = None  # what a session/load replay gathers (_replaying)
        self.terminals = LiveTerminals(self)  # the client terminals its calls show

    @property
    def busy(self) -> bool:
        return self._turn is not None and not self._turn.abandoned

    # -- updates from the agent ------------------------------------------------------

    def on_acp_update(self, update: Any) -> None:
        turn = self._turn
        live = turn is not None and turn.request is not None
        # Where a command's streamed output is gathered: the running turn, or the history a
        # session/load replays (codex-acp 2.6 replays it in updates without a status).
        gathering = turn if live else self._replaying()
        call_id = getattr(update, "tool_call_id", None) or ""
        earlier = gathering.calls.get(call_id) if gathering else None
        ending = gathering is not None and getattr(update, "status", None) in TERMINAL_STATUSES
        streamed = gathering.streamed_output(call_id) if ending and gathering else ""
        text_of = self.client.terminal_text if self.client.terminals is not None else None
        event = session_state.state_event(update) or to_event(update, earlier, streamed, text_of)
        if event is None:
            return
        if not session_state.follow(self, event):  # mode and config: known between turns too
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
            shown.extend(self.terminals.shown_by(event.call))
        for one in shown:
            self._show(one, turn if live else None)

    def running_turn(self) -> Turn | None:
        """The turn whose prompt is in flight (not one that only ends, nor a replay)."""
        turn = self._turn
        return turn if turn is not None and turn.request is not None else None

    def _replaying(self) -> Turn | None:
        """The store of a replay's streamed output while ``on_update`` takes one."""
        if self.on_update is None:
            self._replay = None
        elif self._replay is None:
            self._replay = Turn("")
        return self._replay

    def _show(self, event: Event, turn: Turn | None) -> None:
        if turn is not None:
            turn.push(event)
        elif self.on_update is not None:
            try:
                self.on_update(event)
            except (Exception, SystemExit, KeyboardInterrupt):  # the caller's bug: logged, no exit
                log.exception("on_update failed")
        else:
            # Between turns (codex-acp sends a cancelled turn's last tool_call_update ~10 s
            # later): its turn is over, and no other may be drawn into.
            log.debug("an update between turns, not shown: %s", event.kind)

    def permission_call(self, call: ToolCall) -> ToolCall:
        """The call a permission request names, completed with what the running turn knows of
        it where the request says nothing (claude-agent-acp asks to approve a plan with empty
        rawInput and content: the plan came in the call's tool_call_update). A call the turn
        has not seen is drawn from the request (qwen-code asks before it sends the call's
        ``tool_call``, then sends only its final, untitled ``tool_call_update``)."""
        turn = self._turn
        before = turn.calls.get(call.id) if turn is not None else None
        if before is not None:
            return merged(call, before)
        call.kind = call.kind or "other"  # ACP's default
        if turn is not None and turn.request is not None:
            turn.push(Event(kind="tool_call", call=call))
        return call

    def _is_past(self, update: Any, turn: Turn) -> bool:
        """A tool_call_update for a call of an earlier turn that this turn does not have (the
        SDK's example agent reuses ids per turn, with a tool_call first)."""
        if getattr(update, "session_update", None) != "tool_call_update":
            return False
        call_id = update.tool_call_id
        return call_id in self._past_calls and call_id not in turn.calls

    def fail_turn(self, error: BaseException) -> None:
        for turn in (self._turn, self._ending):
            if turn is not None:
                turn.fail(error)
        for task in list(self.pending_permissions):
            task.cancel()

    # -- modes and config options ----------------------------------------------------------

    async def set_mode(self, mode_id: str) -> None:
        """``session/set_mode``, allowed mid-turn; a mode the agent did not offer is refused
        (:class:`Error`) and nothing is sent."""
        session_state.check_mode(self, mode_id)
        rpc = self.client.rpc
        call = lambda: rpc.set_session_mode(session_id=self.session_id, mode_id=mode_id)  # noqa: E731
        await session_state.request(self, "session/set_mode", call)
        session_state.mode_changed(self, mode_id)

    async def set_config_option(self, config_id: str, value: str | bool) -> list[ConfigOption]:
        """``session/set_config_option``: a select option takes one of its values, a boolean
        one True or False; anything else is refused (:class:`Error`) and nothing is sent.
        Returns every option as the agent now says they are."""
        option = session_state.check_option(self, config_id, value)
        rpc = self.client.rpc
        call = lambda: rpc.set_config_option(  # noqa: E731
            config_id=config_id, session_id=self.session_id, value=value
        )
        response = await session_state.request(self, "session/set_config_option", call)
        session_state.option_changed(self, option, value, response)
        return self.config_options

    # -- turns --------------------------------------------------------------------------

    def stream(self, prompt: Prompt) -> TurnStream:
        """The turn as events; the last one is ``done``. Leaving the loop early cancels it."""
        if self.busy:
            raise Busy()
        if self._turn is not None:  # abandoned, still ending: the next turn waits for it
            self._ending = self._turn
        turn = Turn(prompt)
        self._turn = turn
        return TurnStream(self, turn)

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
            await self.cancel_turn(self._turn)

    async def cancel_turn(self, turn: Turn) -> None:
        """Cancel this very turn (not whichever turn runs when the call is finally made)."""
        if turn.ended.is_set() or turn.cancel_sent:
            return
        turn.cancel_sent = True
        for task in list(self.pending_permissions):
            task.cancel()
        if turn.request is None:  # never sent: nothing to tell the agent
            turn.finish("cancelled", None)
            return
        bound = self.client.cancel_timeout
        turn.arm_deadline(
            bound,
            Error(f"the agent did not end the turn within {bound:g} s of session/cancel"),
        )
        with contextlib.suppress(Exception):
            await self.client.rpc.cancel(session_id=self.session_id)

    async def _begin(self, turn: Turn) -> None:
        ending = self._ending
        if ending is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ending.ended.wait(), self.client.cancel_timeout + 1)
            self._past_calls.update(ending.calls)
            self._ending = None
        if turn.ended.is_set():  # cancelled before it was sent
            return
        if not self.client.alive:
            turn.fail(self.client.death or Error("the agent connection is closed"))
            return
        turn.request = asyncio.get_running_loop().create_task(self._send(turn))

    async def _send(self, turn: Turn) -> None:
        from acp import text_block

        prompt = turn.prompt
        blocks: list[Any] = [text_block(prompt)] if isinstance(prompt, str) else list(prompt)
        try:
            response = await self.client.rpc.prompt(session_id=self.session_id, prompt=blocks)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if isinstance(exc, ConnectionError) or not self.client.alive:
                turn.fail(await self.client.death_or(exc))
            else:
                turn.fail(self.client.failure(exc))
            return
        usage = None
        if response.usage is not None:
            usage = response.usage.model_dump(mode="json", exclude_none=True)
        meta = response.field_meta or {}
        passed = meta.get(STOP_REASON_META)  # one the SDK's schema does not know: as sent
        turn.finish(passed if isinstance(passed, str) else response.stop_reason, usage)

    def _release(self, turn: Turn) -> None:
        if turn.ended.is_set():
            self._past_calls.update(turn.calls)
        if self._turn is turn and turn.ended.is_set():
            self._turn = None
        if self._ending is turn and turn.ended.is_set():
            self._ending = None


class TurnStream:
    """Async iterator over one turn's events (see :meth:`Session.stream`)."""

    def __init__(self, session: Session, turn: Turn) -> None:
        self._session = session
        self._turn = turn
        self._started = False
        self._finished = False

    def __aiter__(self) -> TurnStream:
        return self

    async def __anext__(self) -> Event:
        if self._finished:
            raise StopAsyncIteration
        turn = self._turn
        try:
            if not self._started:
                self._started = True
                await self._session._begin(turn)
            item = await turn.queue.get()
        except asyncio.CancelledError:
            await self._abandon(wait=True)
            raise
        if isinstance(item, BaseException):
            self._close()
            raise item
        if item.kind == "done":
            self._close()
        return item

    def _close(self) -> None:
        self._finished = True
        self._session._release(self._turn)

    async def _abandon(self, wait: bool) -> None:
        if self._finished:
            return
        self._finished = True
        turn = self._turn
        turn.abandoned = True
        await self._session.cancel_turn(turn)
        if wait:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.shield(turn.ended.wait()), self._session.client.cancel_timeout + 1
                )
        if turn.ended.is_set():
            self._session._release(turn)
        # Otherwise the next turn waits for it to end (Session.stream keeps it as _ending).

    async def aclose(self) -> None:
        """End the turn if it still runs (sends ``session/cancel``) and wait for its end."""
        await self._abandon(wait=True)

    def __del__(self) -> None:
        if self._finished:
            return
        turn = self._turn
        turn.abandoned = True
        with contextlib.suppress(RuntimeError):  # no loop any more: nothing left to cancel
            task = asyncio.get_running_loop().create_task(self._session.cancel_turn(turn))
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)
