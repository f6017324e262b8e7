"""One prompt's turn: its events in order, its text, its tool calls as known so far, and its
end — the state machine a session runs one at a time (see :class:`Turn`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from .errors import Error
from .model import Event, ToolCall

if TYPE_CHECKING:
    from .history import History

log = logging.getLogger("minime")

Prompt = str | list[dict[str, Any]]
# Characters of a call's streamed output kept (the editor shows 2,000 lines of it).
MAX_STREAMED = 1024 * 1024
_BACKGROUND: set[asyncio.Task[None]] = set()


def _said(value: Any, before: Any) -> Any:
    return value if value is not None else before


def merged(call: ToolCall, before: ToolCall) -> ToolCall:
    """``call`` as an update or a request names it over what ``before`` said: each field the
    update names (not None, ``""`` included) replaces the earlier one. The one merge of a
    call's updates: events, Session.tool_calls and permission requests carry its result, and
    the editor shows it as it is. ``rawInput: {}`` and an empty content say nothing (agents
    send them while they have none, then the real input, or end an edit without its diff)."""
    return ToolCall(
        id=call.id,
        title=_said(call.title, before.title),
        kind=_said(call.kind, before.kind),
        status=_said(call.status, before.status),
        input=call.input if call.input not in (None, {}) else before.input,
        content=call.content or before.content,
        locations=_said(call.locations, before.locations),
    )


Phase = Literal["waiting", "running", "cancelling", "ended"]

# The legal moves of a turn's phase; an end after the end is no move (the first end wins).
_MOVES: dict[Phase, tuple[Phase, ...]] = {
    "waiting": ("running", "ended"),  # sent; or cancelled (or failed) before it was sent
    "running": ("cancelling", "ended"),
    "cancelling": ("ended",),
    "ended": (),
}


class Turn:
    """The state of one prompt: its queue of events, its phase, and its end.

    Its phase is one state, moved only by :meth:`begin`, :meth:`cancelling`, :meth:`finish`
    and :meth:`fail`: ``waiting`` (its prompt not sent yet) → ``running`` (in flight) →
    ``cancelling`` (session/cancel sent) → ``ended`` (done or failed: nothing more is shown).
    A move the table does not allow raises (a bug of the library, not of the agent).

    A tool call is an upsert: its first ``tool_call`` or ``tool_call_update`` gives a
    ``tool_call`` event, later non-final ones ``tool_update`` (the call as known so far), a
    ``completed``/``failed`` one ``tool_result``.
    """

    def __init__(self, prompt: Prompt, history: History | None = None) -> None:
        self.prompt = prompt
        self._history = history  # told of the turn once it ended, if its prompt went
        self.queue: asyncio.Queue[Event | BaseException] = asyncio.Queue()
        self.parts: list[str] = []
        self._message_id: str | None = None  # of the last text chunk
        self._message_from = 0  # where its message begins in ``parts``
        self._tool_since_text = False  # a tool call came after the last text chunk
        self.calls: dict[str, ToolCall] = {}
        # A command's output so far, per call, when the agent streams it in ``_meta`` chunks:
        # the parts (joined once, when the call ends) and how many characters were kept.
        self.streamed: dict[str, list[str]] = {}
        self._streamed_size: dict[str, int] = {}
        self._phase: Phase = "waiting"
        self._ended = asyncio.Event()  # set by the move into ``ended``, for those who wait
        self._request: asyncio.Task[None] | None = None
        self._deadline: asyncio.TimerHandle | None = None

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def sent(self) -> bool:
        """Its prompt went to the agent (it runs, is cancelled or ended since)."""
        return self._request is not None

    def _move(self, to: Phase) -> None:
        if to not in _MOVES[self._phase]:
            raise RuntimeError(f"a turn cannot go from {self._phase} to {to}")
        self._phase = to

    def begin(self, send: Callable[[Turn], Coroutine[Any, Any, None]]) -> None:
        """waiting → running: ``send(turn)`` runs as the turn's request."""
        self._move("running")
        self._request = asyncio.get_running_loop().create_task(send(self))

    def cancelling(self, seconds: float, error: Error) -> None:
        """running → cancelling: session/cancel is sent; the agent has ``seconds`` to end the
        turn, else it fails with ``error``."""
        self._move("cancelling")
        self._deadline = asyncio.get_running_loop().call_later(seconds, self.fail, error)

    async def wait_ended(self) -> None:
        await self._ended.wait()

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
        if self._phase == "ended":
            log.debug("an update after its turn ended, not shown: %s", event.kind)
            return
        if event.call is not None:
            if event.kind == "tool_call" and event.call.id in self.calls:
                event.kind = "tool_update"  # agents send a call's tool_call again (mm: twice)
            event.call = self.known_call(event.call)
        if event.kind == "text":
            mid = event.message_id
            new_id = mid is not None and self._message_id not in (None, mid)
            # No ids (gemini-cli sends none): text after a tool call is not glued to the line
            # before it (``Running it.All done.``).
            tail = next((part for part in reversed(self.parts) if part), "")
            glued = mid is None and self._tool_since_text and bool(tail)
            glued = glued and not tail.endswith("\n") and not event.text.startswith("\n")
            if self.parts and (new_id or glued):
                self.parts.append("\n\n")  # a new message (claude: text, a tool, more text)
            if new_id or glued or (mid is not None and self._message_id is None):
                self._message_from = len(self.parts)
            self._message_id = mid if mid is not None else self._message_id
            self._tool_since_text = False
            self.parts.append(event.text)
        elif event.call is not None:
            self._tool_since_text = True
        self.queue.put_nowait(event)

    def last_message(self) -> tuple[str | None, str]:
        """The agent's last message in this turn: its id (None: the agent gives none) and its
        text (history.py: where a fork may cut)."""
        return self._message_id, "".join(self.parts[self._message_from :])

    def known_call(self, call: ToolCall) -> ToolCall:
        """An update names only what changed: keep what earlier events said about the call."""
        before = self.calls.get(call.id)
        if before is not None:
            call = merged(call, before)
        self.calls[call.id] = call
        return call

    def finish(self, stop_reason: str, usage: dict[str, Any] | None) -> None:
        """→ ended with ``done`` (its text so far); after the end, nothing."""
        if self._phase == "ended":
            return
        text = "".join(self.parts)
        self.queue.put_nowait(Event(kind="done", stop_reason=stop_reason, usage=usage, text=text))
        self._end()

    def fail(self, error: BaseException) -> None:
        """→ ended with ``error``; after the end, nothing."""
        if self._phase == "ended":
            return
        self.queue.put_nowait(error)
        self._end()

    def _end(self) -> None:
        self._move("ended")
        self._ended.set()
        if self._history is not None and self.sent:
            self._history.add(self)
        if self._deadline is not None:
            self._deadline.cancel()
        request = self._request
        if request is not None and not request.done() and request is not asyncio.current_task():
            request.cancel()


class TurnHooks(msgspec.Struct, frozen=True):
    """What a turn's stream asks of its session: send it (``begin``), let it go once ended
    (``release``), say its caller left it early (``abandon``: the session is free for the
    next turn, which waits for this one's end), cancel it (``cancel``), and how long an agent
    has to end it."""

    begin: Callable[[Turn], Coroutine[Any, Any, None]]
    release: Callable[[Turn], None]
    abandon: Callable[[Turn], None]
    cancel: Callable[[Turn], Coroutine[Any, Any, None]]
    cancel_timeout: float


class TurnStream:
    """Async iterator over one turn's events (see :meth:`Session.stream`)."""

    def __init__(self, turn: Turn, hooks: TurnHooks) -> None:
        self._hooks = hooks
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
                await self._hooks.begin(turn)
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
        self._hooks.release(self._turn)

    async def _abandon(self, wait: bool) -> None:
        if self._finished:
            return
        self._finished = True
        turn = self._turn
        self._hooks.abandon(turn)
        await self._hooks.cancel(turn)
        if wait:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.shield(turn.wait_ended()), self._hooks.cancel_timeout + 1
                )
        if turn.phase == "ended":
            self._hooks.release(turn)
        # Otherwise the next turn waits for it to end (Session.stream keeps it as _ending).

    async def aclose(self) -> None:
        """End the turn if it still runs (sends ``session/cancel``) and wait for its end."""
        await self._abandon(wait=True)

    def __del__(self) -> None:
        if self._finished:
            return
        turn = self._turn
        self._hooks.abandon(turn)
        with contextlib.suppress(RuntimeError):  # no loop any more: nothing left to cancel
            task = asyncio.get_running_loop().create_task(self._hooks.cancel(turn))
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)
