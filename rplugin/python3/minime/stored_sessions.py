"""Stored sessions of an agent: ``session/list``, ``session/load`` and ``session/resume``.

Part of :class:`~minime.client.Client` (a mixin), kept apart: the client opens and runs
sessions; this is how it finds and reopens the ones the agent kept.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import Error, describe
from .session_state import take_answer

if TYPE_CHECKING:
    from .client import Client
    from .session import Session


def dump(model: Any) -> dict[str, Any]:
    """An SDK model as plain JSON data with the wire's names (None: empty)."""
    if model is None:
        return {}
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class StoredSessions:
    """The stored-session requests of a Client."""

    async def load_session(
        self: Client,
        session_id: str,
        cwd: str | None = None,
        on_update: Callable[[Any], None] | None = None,
    ) -> Session:
        """Reopen a stored session; its replayed history goes to ``on_update`` as events (until
        the agent answers ``session/load``)."""
        return await self._reopen("session/load", session_id, cwd, on_update)

    async def resume_session(self: Client, session_id: str, cwd: str | None = None) -> Session:
        """Reopen a stored session without a replay of its history (``session/resume``)."""
        return await self._reopen("session/resume", session_id, cwd, None)

    async def _reopen(
        self: Client,
        method: str,
        session_id: str,
        cwd: str | None,
        on_update: Callable[[Any], None] | None,
    ) -> Session:
        self._check_alive()
        cwd = os.path.abspath(cwd or self.cwd)
        if self._scopes.cwds.get(session_id, cwd) != cwd:  # reopened elsewhere: tools anew
            self.tool_service.forget([session_id])
        opening = self._scopes.begin_known(session_id, cwd)
        session = self._register(session_id, cwd)
        session.on_update = on_update
        self.mcp.ended(session_id)  # a token of its earlier opening is refused from now on
        servers, grant = self.mcp.open(cwd)
        self.mcp.opened(grant, session_id)  # its id is known: its tools may be asked at once
        if method == "session/load":
            request = self.rpc.load_session(cwd=cwd, session_id=session_id, mcp_servers=servers)
        else:
            request = self.rpc.resume_session(session_id=session_id, cwd=cwd, mcp_servers=servers)
        try:
            answer = await self.until_ready(method, request)
        except BaseException:
            self.sessions.pop(session_id, None)
            self._end_open(opening, None)
            self.mcp.ended(session_id)
            raise
        finally:
            # The replay is over with the answer: later updates (between turns) are not
            # history, and must not be drawn into the loaded turn.
            session.on_update = None
        self._end_open(opening, session_id)
        take_answer(session, answer)
        return session

    async def list_sessions(self: Client, cwd: str | None = None) -> list[dict[str, Any]]:
        """The agent's stored sessions (``session/list``); any failure is a :class:`Error`."""
        self._check_alive()
        try:
            response = await self.rpc.list_sessions(cwd=os.path.abspath(cwd or self.cwd))
            return [dump(item) for item in response.sessions]
        except Exception as exc:
            if isinstance(exc, ConnectionError) or not self.alive:
                await self.death_or(exc)  # how the agent died, if it did
                if self.death is not None:
                    raise self.death from None
            raise Error(f"session/list failed: {describe(exc)}{self._stderr_hint()}") from None

    async def close_session(self: Client, session_id: str) -> None:
        """``session/close`` (where the agent advertises ``sessionCapabilities.close``): the
        agent frees it; this client forgets it."""
        await self._manage("session/close", session_id)

    async def delete_session(self: Client, session_id: str) -> None:
        """``session/delete`` (``sessionCapabilities.delete``): the agent forgets it for good.
        The SDK (0.12.1) has no method for it: sent through the transport."""
        await self._manage("session/delete", session_id)

    async def _manage(self: Client, method: str, session_id: str) -> None:
        self._check_alive()
        try:
            if method == "session/close":
                await self.rpc.close_session(session_id=session_id)
            else:
                await self.transport.request(method, {"sessionId": session_id})
        except Exception as exc:
            if isinstance(exc, ConnectionError) or not self.alive:
                raise await self.death_or(exc) from None
            raise Error(f"{method} failed: {describe(exc)}") from None
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.fail_turn(Error(f"the session was closed ({method})"))
