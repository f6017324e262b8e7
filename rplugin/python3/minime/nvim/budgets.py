"""The budget a thread's session may spend, enforced by the client: at 80% one line says so, at
100% the running turn is cancelled (``session/cancel``) and its end says ``■ budget reached``,
and the next ask in the thread is refused (its text kept as the draft) until :MiniMeBudget
raises the budget or :MiniMeReset starts a new conversation. Where the agent sends nothing the
budget can count, one line says so (and :checkhealth, from what Lua is told).

Why in the client: agents report what a session costs (``usage_update``) but none stops.
Each thread's Budget (budget.py) is kept here, by thread, and goes with it.
"""

from __future__ import annotations

import logging
import weakref

from ..errors import Error
from ..model import Event
from ..session import Session
from . import events, ops
from .bridge import NvimBridge
from .budget import Budget, parse_amount
from .conversation import Conversation
from .thread import Thread
from .thread_registry import Threads
from .wire_text import clean

log = logging.getLogger("minime")

USAGE = ":MiniMeBudget takes an amount: 5 (sets the cost), +2 (raises it), 300k (tokens)"


class Budgets:
    def __init__(self, bridge: NvimBridge, conversation: Conversation, threads: Threads) -> None:
        self._bridge = bridge
        self._conversation = conversation
        self._threads = threads
        self._of: weakref.WeakKeyDictionary[Thread, Budget] = weakref.WeakKeyDictionary()
        self._shown: weakref.WeakKeyDictionary[Thread, events.BudgetState | None] = (
            weakref.WeakKeyDictionary()
        )
        self._watched: weakref.WeakSet[Session] = weakref.WeakSet()

    def of(self, thread: Thread) -> Budget:
        budget = self._of.get(thread)
        if budget is None:
            budget = self._of[thread] = Budget()
        return budget

    # -- an ask ------------------------------------------------------------------------------

    def take(self, thread: Thread, ask: ops.AgentOp) -> None:
        """The budget the ask's agent is configured with (setup, or its definition)."""
        budget = self.of(thread)
        budget.configured = ask.budget or ops.BudgetLimits()
        budget.follow(thread.session)
        self.publish(thread)

    def refusal(self, thread: Thread) -> str | None:
        """Why an ask may not start in this thread now (its budget is reached), or None."""
        budget = self.of(thread)
        budget.follow(thread.session)
        reached = budget.reached() if budget.active else None
        if reached is None:
            return None
        return (
            f"minime: the budget of this thread is reached ({clean(reached)}) — "
            ":MiniMeBudget <amount> (or +N) raises it, :MiniMeReset starts a new conversation; "
            "your text is kept for the next input"
        )

    # -- what the agent says it spent -------------------------------------------------------

    def watch(self, thread: Thread, session: Session) -> None:
        """Follow ``session``'s usage between turns too (once per session)."""
        self.of(thread).follow(session)
        if session in self._watched:
            return
        self._watched.add(session)

        def between_turns(event: Event) -> None:
            if event.kind == "usage" and thread.session is session:
                self._usage(thread, session, running=False)

        session.subscribe(between_turns)

    async def saw(self, thread: Thread, session: Session, event: Event) -> None:
        """An event of the running turn: a usage_update may pass a limit (then the turn is
        cancelled)."""
        if event.kind == "usage" and self._usage(thread, session, running=True):
            try:
                await session.cancel()
            except Error as exc:  # the agent is gone: its turn ends anyway
                log.info("budget: cancel failed: %s", exc)

    def _usage(self, thread: Thread, session: Session, running: bool) -> bool:
        """Take the session's usage; say what it passed. True: cancel the running turn."""
        budget = self.of(thread)
        budget.follow(session)
        budget.usage = session.usage
        cancel = False
        if budget.active:
            for change in budget.changes():
                words = clean(change.words)
                if change.at == "warn":
                    line = events.BudgetLine(f"budget: over 80% used ({words})")
                    self._conversation.render(thread, line)
                elif running and session.busy:
                    budget.cancelled, cancel = words, True
                else:
                    line = events.BudgetLine(f"budget reached ({words})", level="reached")
                    self._conversation.render(thread, line)
        self.publish(thread)
        return cancel

    def ended(self, thread: Thread, session: Session, done: events.Done) -> None:
        """The turn's end: its token figures count; the budget it reached is said on its line;
        what cannot be enforced for this agent is said once."""
        budget = self.of(thread)
        budget.follow(session)
        budget.usage = session.usage
        budget.add_turn(done.usage)
        if budget.cancelled is not None:
            done.budget, budget.cancelled = budget.cancelled, None
        if budget.active:
            for change in budget.changes():  # the turn's own figures passed a limit
                words = clean(change.words)
                if change.at == "reached" and done.budget is None:
                    done.budget = words
                elif change.at == "warn":
                    line = events.BudgetLine(f"budget: over 80% used ({words})")
                    self._conversation.render(thread, line)
            why = budget.unenforced(session.agent_name)
            if why is not None and not budget.unenforced_said:
                budget.unenforced_said = True
                self._conversation.render(thread, events.BudgetLine(clean(why), level="info"))
        self.publish(thread)

    # -- :MiniMeBudget and :MiniMeReset -----------------------------------------------------

    async def set(self, payload: ops.SetBudget) -> None:
        thread = self._threads.get(payload.thread, payload.cwd)
        budget = self.of(thread)
        budget.follow(thread.session)
        if not payload.amount.strip():
            self._say_state(thread, budget)
            return
        parsed = parse_amount(payload.amount, budget)
        if parsed is None:
            self._bridge.notify(f"minime: {USAGE} (got {clean(payload.amount)!r})", "warn")
            return
        kind, value, relative = parsed
        budget.raise_to(kind, value, relative)
        self.publish(thread)
        words = clean(budget.words(kind))
        if budget.reached() is not None:
            self._bridge.notify(
                f"minime: budget now {words} — still reached: raise it above what is spent",
                "warn",
            )
        else:
            self._bridge.notify(f"minime: budget now {words} in {thread.cwd}", "info")

    def _say_state(self, thread: Thread, budget: Budget) -> None:
        if not budget.active:
            self._bridge.notify(
                f"minime: no budget in {thread.cwd} — setup{{ budget = {{ cost = 2 }} }} or "
                ":MiniMeBudget <amount> sets one",
                "info",
            )
            return
        self._bridge.notify(f"minime: budget in {thread.cwd}: {clean(budget.shown())}", "info")

    def reset(self, thread: Thread) -> None:
        """:MiniMeReset: the next session starts from nothing, with the configured budget."""
        self.of(thread).start_over()
        self.publish(thread)

    # -- what Lua shows ----------------------------------------------------------------------

    def publish(self, thread: Thread) -> None:
        """Tell Lua the thread's budget (lua/minime/budget.lua) when what it shows changed."""
        budget = self.of(thread)
        state = None
        if budget.active:
            why = budget.unenforced(thread.session.agent_name) if thread.session else None
            state = events.BudgetState(
                shown=clean(budget.shown()),
                state=budget.state(),
                agent=clean(thread.label or thread.agent),
                cost=budget.limit("cost") is not None,
                known=budget.turns > 0,
                unenforced=None if why is None else clean(why),
            )
        if thread in self._shown and self._shown[thread] == state:
            return
        self._shown[thread] = state
        self._bridge.rpc("budget_update", thread.id, state)
