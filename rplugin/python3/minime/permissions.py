"""Answers to ``session/request_permission``: the caller's decision mapped to the agent's ids."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from .model import PermissionOption, PermissionRequest
from .threads import permission_pool

log = logging.getLogger("minime")


class Decision(msgspec.Struct, frozen=True):
    """What ``on_permission`` returns. Build it with ALLOW, REJECT or choose()."""

    kind: str  # "allow_once", "reject_once" or "option"
    option_id: str | None = None


ALLOW = Decision("allow_once")
REJECT = Decision("reject_once")


def choose(option_id: str) -> Decision:
    """One of the options the agent offered, by its id; an id it did not offer counts as REJECT."""
    return Decision("option", option_id)


PermissionCallback = Callable[[PermissionRequest], Any]


def _first_of_kind(options: Sequence[PermissionOption], *kinds: str) -> str | None:
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None


def option_for(decision: Any, options: Sequence[PermissionOption]) -> str | None:
    """The option id to answer with; None means the outcome ``cancelled``."""
    offered = {option.option_id for option in options}
    if isinstance(decision, Decision):
        if decision.kind == "option" and decision.option_id in offered:
            return decision.option_id
        if decision.kind == "allow_once":
            found = _first_of_kind(options, "allow_once")
            if found is not None:
                return found
    # Anything else, including an id the agent did not offer, is a refusal.
    return _first_of_kind(options, "reject_once", "reject_always")


async def decide(callback: PermissionCallback | None, request: PermissionRequest) -> str | None:
    """Ask the callback; no callback, or one that fails (even with SystemExit), rejects."""
    decision: Any = REJECT
    if callback is not None:
        try:
            if inspect.iscoroutinefunction(callback):
                decision = await callback(request)
            else:
                decision = await permission_pool.run(callback, request)
                if inspect.isawaitable(decision):
                    decision = await decision
        except asyncio.CancelledError:
            request.cancelled.set()  # a sync callback sees it; an async one got the error
            raise
        except (Exception, SystemExit, KeyboardInterrupt):
            log.exception("on_permission failed; rejecting")
            decision = REJECT
    return option_for(decision, request.options)
