"""One thread's budget: what its session may spend (``budget = { cost, tokens }``, raised by
:MiniMeBudget), what it has spent as the agent says it, and the words every surface shows of
it — made here once (the conversation's lines, the statusline, the messages).

What counts: the session's cumulative ``cost`` of its last ``usage_update`` (in the agent's
currency); for tokens, the context ``used`` of that update, or where the agent sends none, the
token figures of its turns' answers added up. Pure state: budgets.py applies it to the turns.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from .ops import BudgetLimits

# The share of a limit at which one line says it is near.
WARN_AT = 0.8

Kind = Literal["cost", "tokens"]
KINDS: tuple[Kind, ...] = ("cost", "tokens")


class Spent(NamedTuple):
    """What the session spent so far; None where the agent said nothing of it."""

    cost: float | None
    currency: str | None
    tokens: int | None


class Change(NamedTuple):
    """A limit passed: ``at`` is "warn" (80%) or "reached"; ``words`` say how far."""

    at: Literal["warn", "reached"]
    kind: Kind
    words: str


def tokens_text(n: float) -> str:
    """53k, 1.2M: as the statusline shows token counts."""
    if n >= 1e6:
        return f"{n / 1e6:.1f}".removesuffix(".0") + "M"
    if n >= 1000:
        return f"{math.floor(n / 1000 + 0.5)}k"
    return str(math.floor(n))


def money(amount: float, currency: str | None) -> str:
    """$2.00, or 2.00 EUR: the agent's currency (its text, cleaned where it is shown)."""
    if currency in (None, "", "USD"):
        return f"${amount:.2f}"
    return f"{amount:.2f} {currency[:12]}"


@dataclass
class Budget:
    """See the module's docstring. ``session`` is the one whose figures count: another one
    (a reset, a reopened session) starts from nothing."""

    configured: BudgetLimits = field(default_factory=BudgetLimits)
    raised: dict[Kind, float] = field(default_factory=dict)  # :MiniMeBudget's, per kind
    session: Any = None
    usage: dict[str, Any] | None = None  # the session's last usage_update
    turn_tokens: int | None = None  # the turns' answers' token figures, added up
    turns: int = 0  # turns ended in this session
    passed: set[tuple[str, Kind]] = field(default_factory=set)  # lines already said
    cancelled: str | None = None  # the running turn was cancelled for the budget: its words
    unenforced_said: bool = False

    def limit(self, kind: Kind) -> float | None:
        if kind in self.raised:
            return self.raised[kind]
        value = getattr(self.configured, kind)
        return float(value) if isinstance(value, int | float) and value > 0 else None

    @property
    def active(self) -> bool:
        return any(self.limit(kind) is not None for kind in KINDS)

    def follow(self, session: Any) -> None:
        """Figures count for ``session`` from now on (a new one starts from nothing)."""
        if session is not self.session:
            self.session, self.usage, self.turn_tokens, self.turns = session, None, None, 0
            self.passed.clear()
            self.unenforced_said = False

    def start_over(self) -> None:
        """:MiniMeReset: a new conversation, the configured limits again."""
        self.follow(None)
        self.raised.clear()
        self.cancelled = None

    def add_turn(self, usage: Any) -> None:
        """A turn's answer ended with ``usage`` (its token figures, or None)."""
        self.turns += 1
        if not isinstance(usage, dict):
            return
        total = usage.get("total_tokens")
        if not isinstance(total, int):
            parts = [usage.get(k) for k in ("input_tokens", "output_tokens")]
            total = sum(p for p in parts if isinstance(p, int)) if any(parts) else None
        if isinstance(total, int):
            self.turn_tokens = (self.turn_tokens or 0) + total

    def spent(self) -> Spent:
        usage = self.usage or {}
        cost = usage.get("cost")
        amount = cost.get("amount") if isinstance(cost, dict) else None
        currency = cost.get("currency") if isinstance(cost, dict) else None
        used = usage.get("used")
        return Spent(
            float(amount) if isinstance(amount, int | float) else None,
            currency if isinstance(currency, str) else None,
            used if isinstance(used, int) else self.turn_tokens,
        )

    def _figures(self, kind: Kind) -> tuple[float | None, float | None]:
        spent = self.spent()
        return (spent.cost if kind == "cost" else spent.tokens), self.limit(kind)

    def words(self, kind: Kind, between: str = " of ") -> str:
        """ "$1.62 of $2.00", "53k of 100k tokens" ("?" for what the agent never said)."""
        value, limit = self._figures(kind)
        if kind == "cost":
            currency = self.spent().currency
            shown = "?" if value is None else money(value, currency)
            return shown + between + money(limit or 0.0, currency)
        shown = "?" if value is None else tokens_text(value)
        return f"{shown}{between}{tokens_text(limit or 0)} tokens"

    def state(self) -> Literal["ok", "warned", "reached"]:
        worst: Literal["ok", "warned", "reached"] = "ok"
        for kind in KINDS:
            value, limit = self._figures(kind)
            if value is None or limit is None:
                continue
            if value >= limit:
                return "reached"
            if value >= WARN_AT * limit:
                worst = "warned"
        return worst

    def reached(self) -> str | None:
        """The words of a limit reached ("$2.00 of $2.00"), or None."""
        for kind in KINDS:
            value, limit = self._figures(kind)
            if value is not None and limit is not None and value >= limit:
                return self.words(kind)
        return None

    def changes(self) -> list[Change]:
        """The limits passed since the last call (each said once per session and limit)."""
        found = []
        for kind in KINDS:
            value, limit = self._figures(kind)
            if value is None or limit is None:
                continue
            at: Literal["warn", "reached"] | None = None
            if value >= limit:
                at = "reached"
            elif value >= WARN_AT * limit:
                at = "warn"
            if at is not None and (at, kind) not in self.passed:
                self.passed.add((at, kind))
                if at == "reached":
                    self.passed.add(("warn", kind))
                found.append(Change(at, kind, self.words(kind)))
        return found

    def shown(self) -> str:
        """The statusline's and the footer's piece: "$1.62/$2.00 · 53k/100k tokens"."""
        return " · ".join(self.words(k, "/") for k in KINDS if self.limit(k) is not None)

    def unenforced(self, agent: str) -> str | None:
        """Why a limit cannot be enforced for this agent, once a turn showed what it sends."""
        if self.turns == 0:
            return None
        spent = self.spent()
        missing = []
        if self.limit("cost") is not None and spent.cost is None:
            also = "count for budget.tokens" if self.limit("tokens") else "would count for tokens"
            missing.append(
                f"budget.cost cannot be enforced for {agent}: it sends no cost"
                + (f" (its token figures {also})" if spent.tokens is not None else "")
            )
        if self.limit("tokens") is not None and spent.tokens is None:
            missing.append(
                f"budget.tokens cannot be enforced for {agent}: it sends no token figures"
            )
        return "; ".join(missing) or None

    def raise_to(self, kind: Kind, value: float, relative: bool) -> float:
        current = self.limit(kind) or 0.0
        self.raised[kind] = current + value if relative else value
        self.passed = {p for p in self.passed if p[1] != kind}
        self.cancelled = None
        return self.raised[kind]


_AMOUNT = re.compile(r"^(\+)?\s*(\d+(?:\.\d+)?|\.\d+)\s*([kKmM])?\s*(tokens?)?$")


def parse_amount(text: str, budget: Budget) -> tuple[Kind, float, bool] | None:
    """:MiniMeBudget's argument: ``5`` (sets), ``+2`` (raises), ``300k`` or ``+50000 tokens``
    (tokens). A plain number is the cost, unless the thread's budget has tokens only."""
    found = _AMOUNT.match(text.strip())
    if found is None:
        return None
    plus, number, suffix, word = found.groups()
    value = float(number) * {"k": 1e3, "m": 1e6}.get((suffix or "").lower(), 1)
    tokens = bool(suffix or word) or (budget.limit("cost") is None and budget.limit("tokens"))
    kind: Kind = "tokens" if tokens else "cost"
    return kind, (float(round(value)) if kind == "tokens" else value), bool(plus)
