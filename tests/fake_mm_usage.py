"""The fake mm's usage commands: what an agent that reports its spending sends (``usage_update``,
ACP: the context ``used`` of its window ``size``, and the session's cumulative ``cost``).

Added to demo/scripted_mm's script by tests/fake_mm.py; same signature as its commands.

==============================  ================================================================
``/usage k=v ...``              one ``usage_update``: ``cost`` (amount), ``currency`` (USD),
                                ``used``, ``size`` (default 1000 / 200000); then ``usage sent``.
``/spend N STEP [CURRENCY]``    N ``usage_update``s, 50 ms apart, the cost growing by STEP each
                                (STEP, 2·STEP, …), each followed by ``spent <amount>``: a turn
                                that costs more the longer it runs (session/cancel stops it).
==============================  ================================================================
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from scripted_mm.agent import Turn
from scripted_mm.script import SLOW_INTERVAL, Command

if TYPE_CHECKING:
    from fake_mm import FakeMM


def usage_update(
    cost: float | None, currency: str = "USD", used: int = 1000, size: int = 200_000
) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": "usage_update", "used": used, "size": size}
    if cost is not None:
        update["cost"] = {"amount": cost, "currency": currency}
    return update


async def _usage(mm: FakeMM, turn: Turn, rest: str) -> None:
    fields = dict(part.split("=", 1) for part in rest.split() if "=" in part)
    cost = float(fields["cost"]) if "cost" in fields else None
    update = usage_update(
        cost,
        fields.get("currency", "USD"),
        int(fields.get("used", 1000)),
        int(fields.get("size", 200_000)),
    )
    await mm.update(turn.session.id, update)
    await mm.say(turn, "usage sent")


async def _spend(mm: FakeMM, turn: Turn, rest: str) -> None:
    count, step, *currency = rest.split()
    for i in range(1, int(count) + 1):
        amount = round(float(step) * i, 6)
        await mm.update(turn.session.id, usage_update(amount, *currency[:1]))
        await mm.say(turn, f"spent {amount}\n")
        await asyncio.sleep(SLOW_INTERVAL)


USAGE: dict[str, Command] = {"/usage": _usage, "/spend": _spend}
