"""A conversation continued from before one of its asks (a rewind's "edit and resend"): a new
session of the same agent, in the same cwd, that knows the exchanges before that ask and not
the ones after it.

Three ways, the first that applies (``Branch.how`` says which):
  * ``new``: the first ask: a new session, nothing to carry;
  * ``fork``: the agent advertises ``sessionCapabilities.fork`` and its last message before
    that ask has an id: ``session/fork`` cut at that message (history.fork_meta). A fork the
    agent refuses falls back to the next way, and ``Branch.note`` says why;
  * ``history``: a new session whose first prompt carries the asks and answers before it
    (history.history_block), then the new ask: ``Branch.prompt`` builds it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

from .errors import Error
from .history import Exchange, fork_meta, history_block

if TYPE_CHECKING:
    from .session import Session
    from .turn import Prompt

log = logging.getLogger("minime")

How = Literal["new", "fork", "history"]


class Branch(msgspec.Struct, kw_only=True):
    """The new session, how it continues the old one, and the exchanges it continues."""

    session: Any  # Session (msgspec keeps it as it is)
    how: How
    kept: list[Exchange]
    block: dict[str, Any] | None = None  # the history's prompt block (``history`` only)
    note: str | None = None  # why a fork was not used, when it was tried

    def prompt(self, prompt: Prompt) -> Prompt:
        """The first prompt of the branch: ``prompt``, after the history where it is carried."""
        if self.block is None:
            return prompt
        blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else list(prompt)
        return [self.block, *blocks]


class Opener(Protocol):
    """What a branch asks of the client (client.Client)."""

    @property
    def agent_capabilities(self) -> dict[str, Any]: ...

    async def fork_session(
        self, session: Session, meta: dict[str, Any], additional_directories: Sequence[str] = ()
    ) -> Session: ...

    async def new_session(
        self, cwd: str | None = None, additional_directories: Sequence[str] = ()
    ) -> Session: ...


def can_fork(agent_capabilities: dict[str, Any]) -> bool:
    caps = agent_capabilities.get("sessionCapabilities") or {}
    return isinstance(caps, dict) and caps.get("fork") is not None


async def branch(
    client: Opener,
    session: Session,
    before: int,
    additional_directories: Sequence[str] = (),
) -> Branch:
    """Continue ``session`` from before its ask ``before`` (1-based) in a new session (see the
    module's docstring). ``session`` is left as it is: forget or close it when done."""
    exchanges = session.history.exchanges
    if not 1 <= before <= len(exchanges) + 1:
        raise Error(f"no ask {before} in this session: it has {len(exchanges)}")
    kept = list(exchanges[: before - 1])
    caps = client.agent_capabilities
    note = None
    new: Session | None = None
    how: How = "new" if not kept else "history"
    meta = fork_meta(kept) if kept and can_fork(caps) else None
    if meta is not None:
        try:
            new = await client.fork_session(session, meta, additional_directories)
            how = "fork"
        except Error as exc:
            log.warning("session/fork refused, the history goes as text: %s", exc)
            note = f"the agent refused the fork ({exc})"
    if new is None:
        new = await client.new_session(session.cwd, additional_directories)
    new.history.extend(kept)
    block = history_block(kept, caps) if how == "history" else None
    return Branch(session=new, how=how, kept=kept, block=block, note=note)
