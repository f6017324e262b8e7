"""The asks of each thread and their turns: an ask waits for its thread's session (started
once, thread.py) or is queued behind the thread's running turn (ask_queue.py), then streams;
the warm-up starts a session before the first ask; :MiniMeCancel, :MiniMeReset and :MiniMeStop
end what runs or waits, mid-start-up too. Each thread's turns run in their own task: one never
waits for, nor draws into, another's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import AuthRequired, Error
from ..session import Session
from ..turn import Prompt
from . import events, ops
from .agent_pool import AgentPool
from .ask_queue import AskQueue
from .baselines import Baselines
from .bridge import NvimBridge
from .budgets import Budgets
from .conversation import Conversation
from .feedback import Feedback
from .mcp_reach import McpReach
from .mentions import prompt_blocks
from .render import to_lua
from .session_modes import SessionModes
from .thread import Thread
from .thread_registry import Threads
from .wire_text import clean

log = logging.getLogger("minime")

BASELINE_LATE = (
    "the review's baseline was not written in time (git is slow here): the agent's first"
    " writes may count as baseline"
)


class Turns:
    def __init__(
        self,
        bridge: NvimBridge,
        threads: Threads,
        conversation: Conversation,
        pool: AgentPool,
        modes: SessionModes,
        budgets: Budgets,
        feedback: Feedback,
    ) -> None:
        self._bridge = bridge
        self._threads = threads
        self._conversation = conversation
        self._pool = pool
        self._modes = modes
        self._budgets = budgets
        self._feedback = feedback
        self.queue = AskQueue(conversation, bridge)
        self._reach = McpReach(bridge)  # says once when an agent dropped the editor's server
        # The review's baseline, taken before each prompt is sent (baselines.py).
        self.baselines = Baselines(bridge)

    async def ask(self, ask: ops.Ask) -> None:
        thread = self._threads.get(ask.thread, ask.cwd)
        self._feedback.word(ask)  # a fix's words, shown queued too
        if ask.queue and (thread.queue or thread.occupied):
            self.queue.enqueue(thread, ask)
            return
        next_ask: ops.Ask | None = ask
        while next_ask is not None:
            await self._ask(thread, next_ask)
            # No await from the turn's end to the next ask's start: nothing runs between.
            next_ask = self.queue.next(thread)

    async def ask_in_branch(
        self, thread: Thread, ask: ops.Ask, first: Callable[[Prompt], Prompt]
    ) -> None:
        """A resent ask, the first of its branch (nvim/resend.py), then the asks queued."""
        next_ask: ops.Ask | None = None
        await self._ask(thread, ask, first)
        while (next_ask := self.queue.next(thread)) is not None:
            await self._ask(thread, next_ask)

    async def _ask(
        self, thread: Thread, ask: ops.Ask, first: Callable[[Prompt], Prompt] | None = None
    ) -> None:
        """One ask's turn; ``first`` makes its prompt a branch's first (nvim/resend.py)."""
        cwd = thread.cwd
        refusal = thread.refusal(":MiniMeCancel stops it; your text is kept for the next input")
        if refusal is not None:
            self._bridge.notify(refusal, "warn")
            self._conversation.keep_text(ask)
            return
        self._budgets.take(thread, ask)
        refusal = self._budgets.refusal(thread) or self._feedback.check(thread, ask)
        if refusal is not None:
            self._bridge.notify(refusal, "warn" if not ask.fix else "info")
            self._conversation.keep_text(ask)
            return
        thread.take_tools(ask)
        if thread.live_session() is None:  # a running session keeps the agent it runs on
            thread.take_agent(ask)
        # This ask's selection (kept in Lua, where it was made) is the one the turn's tools see.
        if ask.ask_id is not None:
            self._bridge.rpc("ask_accepted", thread.id, ask.ask_id)
        # The agent of the session this ask continues (take_agent: a setup() since names the
        # next session's).
        label = clean(thread.label or ask.label or ask.agent or "")
        render = self._conversation.render
        render(thread, events.Begin(prompt=clean(ask.prompt), cwd=cwd, agent=label))
        thread.stopped = False
        waiting = thread.begin_waiting()
        if thread.ready.running():  # a start a cancelled ask left running: this one waits
            render(thread, events.Notice("starting the agent…"))
        try:
            ready = thread.ready.run(lambda: self._open(thread, ask))
            session = await waiting.wait(self._ready_with_baseline(ready, thread, label))
        except AuthRequired as exc:
            self._conversation.fail(thread, f"{exc} — :MiniMeLogin logs in, then ask again")
            return
        except Error as exc:
            self._conversation.fail(thread, str(exc))
            return
        finally:
            thread.finish_waiting(waiting)
        if session is None:  # cancelled or stopped while it started: already said
            return
        if thread.shown_session not in (None, session.session_id):  # after :MiniMeStop, a crash
            render(
                thread, events.Notice("a new session: the agent does not remember the turns above")
            )
        thread.shown_session = session.session_id
        text = ask.context or ask.prompt
        prompt: Prompt = text
        shown = [ask.lines_from] if ask.lines_from else []
        note = None
        if ask.mentions and thread.client is not None:
            built = prompt_blocks(text, ask.mentions, thread.client.agent_capabilities)
            shown += built.shown
            prompt, note = built.blocks, built.message()
        if shown:
            render(thread, events.Attached(names=[clean(n) for n in shown]))
        if note:
            self._bridge.notify(note, "warn")
            # Under the prompt too: the next message would overwrite this one.
            render(thread, events.Notice(clean(note.removeprefix("minime: "))))
        if thread.client is not None:  # the review and diagnostics kept for this ask
            prompt = self._feedback.attach(thread, ask, prompt, thread.client.agent_capabilities)
        if first is not None:
            prompt = first(prompt)
        # No await from here to the turn: the session is busy before another ask can look.
        if await self._run_turn(session, thread, prompt) == "end_turn":
            self._reach.turn_ended(thread, session, ask)  # a first turn cut short: nothing

    async def _ready_with_baseline(
        self, ready: Awaitable[Session], thread: Thread, label: str
    ) -> Session:
        """The session, once ready and the turn's baseline taken (still waiting: a cancel or a
        stop ends the ask here too). The conversation so far goes first: its begin before it."""
        session = await ready
        self._conversation.flush()
        if not await self.baselines.take(thread.id, thread.cwd, label):
            self._conversation.render(thread, events.Notice(BASELINE_LATE))
        return session

    async def warm(self, warm: ops.Warm) -> None:
        """Start the thread's agent and session while the user types its first ask: silent.
        A failure is only logged; the ask that follows starts again and says what went wrong."""
        thread = self._threads.get(warm.thread, warm.cwd)
        thread.take_agent(warm)
        if thread.session is not None or thread.ready.running():
            thread.changed()  # Lua learns of a thread :MiniMeNew made
            return
        if thread.disabled_tools is None:  # the tools a request-discovery agent lists at first
            thread.take_tools(warm)
        thread.changed()
        try:
            await thread.ready.run(lambda: self._open(thread, warm, announce=False))
        except Exception as exc:  # said by the ask, never by the warm-up
            log.info("warm-up for thread %s: %s", thread.id, exc)

    async def _open(self, thread: Thread, ask: ops.AgentOp, announce: bool = True) -> Session:
        """The thread's session, started if need be, in its mode: ready for a first prompt."""

        def notice() -> None:
            self._conversation.render(thread, events.Notice("starting the agent…"))

        try:
            # Said only when an agent process starts: not for a new session on a running agent
            # (after :MiniMeReset, or a second thread of one agent), which is quick and silent;
            # nor for a warm-up.
            session = thread.live_session() or await self._pool.open_session(
                thread, ask, notice if announce else None
            )
        except Error as exc:
            log.warning("no session for thread %s: %s", thread.id, exc)  # said by the ask
            raise
        await self._modes.opened(thread, session, ask.mode)  # before its first prompt
        return session

    async def _run_turn(
        self, session: Session, thread: Thread, prompt: str | list[dict[str, Any]]
    ) -> str | None:
        """Stream one turn into the thread's conversation; why it stopped (None: it failed)."""
        ended = thread.turn_ended = asyncio.Event()
        stop_reason = None
        self._budgets.watch(thread, session)
        try:
            async for event in session.stream(prompt):
                await self._budgets.saw(thread, session, event)
                if self._modes.follow(thread, session, event):
                    continue
                item = to_lua(event)
                if isinstance(item, events.Done):
                    item.session_id = session.session_id
                    item.cwd = thread.cwd
                    stop_reason = event.stop_reason
                    self._budgets.ended(thread, session, item)
                self._conversation.render(thread, item)
        except Error as exc:
            self._conversation.fail(thread, str(exc), session.session_id)
            client = thread.client
            if client is not None and not client.alive:
                self._pool.drop(client)
        finally:
            ended.set()
            if thread.turn_ended is ended:
                thread.turn_ended = None
        return stop_reason

    async def cancel(self, payload: ops.ThreadOp) -> None:
        thread = self._threads.find(payload.thread)
        if thread is None:
            self._bridge.notify(f"minime: no turn running in {payload.cwd}", "info")
            return
        # The queue first: the turn's end would start the next ask.
        dropped = self.queue.drop_shown(thread)
        if not self.end_waiting(thread, "cancelled"):
            if thread.busy and thread.session is not None:
                await thread.session.cancel()
            elif not dropped:
                self._bridge.notify(f"minime: no turn running in {thread.cwd}", "info")
        if dropped:
            asks = f"{dropped} queued asks" if dropped > 1 else "1 queued ask"
            self._bridge.notify(
                f"minime: cancelled; {asks} dropped (the text is the next input's draft)", "info"
            )

    def end_waiting(self, thread: Thread, why: str) -> bool:
        """End the ask waiting for the thread's agent to start (its start goes on, for the
        next ask); False when none waits."""
        waiting = thread.waiting
        if waiting is None:
            return False
        if waiting.end(why):
            done = events.Done(stop_reason=why, cwd=thread.cwd)
            self._conversation.render(thread, done)
        return True

    async def end_turn(self, thread: Thread) -> None:
        """Cancel the thread's running turn and wait until its end is rendered (the library
        ends a turn the agent does not end within cancel_timeout)."""
        ended, current = thread.turn_ended, thread.session
        if current is not None and current.busy:
            await current.cancel()
            if ended is not None:
                await ended.wait()

    async def reset(self, payload: ops.ThreadOp) -> None:
        thread = self._threads.get(payload.thread, payload.cwd)
        self.queue.drop_shown(thread)  # asks of the old conversation: their text is the draft
        if self.end_waiting(thread, "cancelled"):  # an ask of the old conversation
            self._conversation.flush()  # its end reaches Lua (MiniMeTurnDone) before the reset
        # The old turn ends in the old conversation (its "■ cancelled" line and title): the
        # session stays the thread's until then, so an ask meanwhile is refused.
        await self.end_turn(thread)
        self._conversation.flush()
        session, client = thread.session, thread.client
        thread.lost_session()
        self._budgets.reset(thread)
        self._feedback.reset(thread)
        if session is not None and client is not None:
            client.forget(session)
            self._modes.publish(thread, None)
        self._conversation.render(thread, events.Reset())
        self._conversation.flush()  # the float is empty when the message says so
        self._bridge.notify(f"minime: new conversation for {thread.cwd}", "info")

    async def stop(self, stop: ops.Stop) -> None:
        threads = list(self._threads)
        running = [t for t in threads if t.session is not None or t.ready.running()]
        # Never sent: a stop starts no new agent.
        dropped = sum(self.queue.drop_shown(thread) for thread in threads)
        ended = 0
        for thread in threads:
            if thread.busy:
                thread.stopped = True
                ended += 1
            if self.end_waiting(thread, "stopped"):  # an ask whose agent still starts: ended
                ended += 1
        # Let go of every start, session and agent before the first await (an ask that comes
        # while they end starts anew, with the options as they are then); no mode is set on
        # a session being closed.
        starts = asyncio.gather(*(thread.ready.cancel() for thread in threads))
        for thread in threads:
            if thread.session is not None:
                self._modes.publish(thread, None)
        agents = sorted({t.label or t.agent for t in running if t.label or t.agent})
        closing = self._pool.close_all()
        await starts
        await closing
        if not stop.quiet:
            self._bridge.notify(stopped_text(len(running), agents, ended, dropped), "info")


def stopped_text(threads: int, agents: list[str], ended: int, dropped: int) -> str:
    """:MiniMeStop's one line: the threads whose agents it stopped, what it ended, and the
    queued asks it dropped."""
    if threads > 1:
        names = f" ({', '.join(agents)})" if agents else ""
        stopped = f"minime: stopped {threads} threads' agents{names}"
    else:
        stopped = "minime: agent stopped"
    said = []
    if ended:
        said.append(f"{ended} turn{'s' if ended > 1 else ''} ended")
    if dropped:
        asks = f"{dropped} queued asks" if dropped > 1 else "1 queued ask"
        said.append(f"{asks} dropped (the text is the next input's draft)")
    return stopped + ("; " + ", ".join(said) if said else "")
