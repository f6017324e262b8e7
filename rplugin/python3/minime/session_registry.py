"""The sessions of one connection: opened (``session/new``), reopened (``session/load``,
``session/resume``), listed, closed and deleted, each known by its id and its cwd.

A session's cwd is the client's choice alone (scopes.py); its tools (tool_service.py, or an
MCP server of its own, mcp_servers.py) are bound to it for as long as it is open.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from .capabilities import session_roots
from .connection import Connection
from .errors import Error
from .mcp_servers import SessionServers
from .scopes import Opening, Scopes
from .session import Inbound, Session
from .terminals import Terminals
from .tool_service import ToolService

T = TypeVar("T")
_BACKGROUND: set[asyncio.Task[None]] = set()


def dump(model: Any) -> dict[str, Any]:
    """An SDK model as plain JSON data with the wire's names (None: empty)."""
    if model is None:
        return {}
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class SessionRegistry:
    """Every open session of a connection, by id; how they open and end."""

    def __init__(
        self,
        connection: Connection,
        *,
        cwd: str,
        scopes: Scopes,
        tools: ToolService,
        mcp: SessionServers,
        terminals: Terminals | None,
        cancel_timeout: float,
    ) -> None:
        self.sessions: dict[str, Session] = {}
        self.agent_capabilities: dict[str, Any] = {}
        self._connection = connection
        self._cwd = cwd
        self._scopes = scopes
        self._tools = tools
        self._mcp = mcp
        self._terminals = terminals
        self._cancel_timeout = cancel_timeout
        # The titles the last session/list gave: a session reopened keeps its own until the
        # agent names another (an agent rarely sends session_info_update on load).
        self._listed_titles: dict[str, str] = {}

    # -- opening -----------------------------------------------------------------------------

    async def open_new(
        self, cwd: str | None, ready_by: float | None, additional_directories: Sequence[str] = ()
    ) -> Session:
        connection = self._connection
        connection.check_alive()
        cwd = os.path.abspath(cwd or self._cwd)
        opening = self._scopes.begin_new(cwd)
        servers, grant = self._mcp.open(cwd)
        session_id: str | None = None
        try:
            roots = session_roots(self.agent_capabilities, additional_directories)
            response = await connection.until_ready(
                "session/new",
                connection.rpc.new_session(cwd=cwd, mcp_servers=servers, **roots),
                ready_by,
            )
            if self._scopes.conflicts(response.session_id, cwd):
                raise Error(
                    f"{connection.label} answered session/new with session "
                    f"{response.session_id!r}, which it had listed tools for in another directory"
                )
            session_id = response.session_id
            return self._register(response.session_id, cwd, response)
        finally:
            self._end_open(opening, session_id)
            self._mcp.opened(grant, session_id)

    async def fork(
        self, session: Session, meta: dict[str, Any], additional_directories: Sequence[str] = ()
    ) -> Session:
        """``session/fork`` of ``session`` (unstable in ACP; ``meta`` its ``_meta``, the fork
        point): a new session in the same cwd, with its own tools, as session/new opens one."""
        connection = self._connection
        connection.check_alive()
        cwd = session.cwd
        opening = self._scopes.begin_new(cwd)
        servers, grant = self._mcp.open(cwd)
        session_id: str | None = None
        try:
            roots = session_roots(self.agent_capabilities, additional_directories)
            work = connection.rpc.fork_session(
                session_id=session.session_id, cwd=cwd, mcp_servers=servers, **roots, **meta
            )
            response = await connection.until_ready("session/fork", work)
            session_id = response.session_id
            return self._register(response.session_id, cwd, response)
        finally:
            self._end_open(opening, session_id)
            self._mcp.opened(grant, session_id)

    async def reopen(
        self,
        method: str,
        session_id: str,
        cwd: str | None,
        on_update: Callable[[Any], None] | None,
    ) -> Session:
        """``session/load`` (its replay to ``on_update``, until the answer), or
        ``session/resume``."""
        connection = self._connection
        connection.check_alive()
        cwd = os.path.abspath(cwd or self._cwd)
        if self._scopes.cwds.get(session_id, cwd) != cwd:  # reopened elsewhere: tools anew
            self._tools.forget([session_id])
        opening = self._scopes.begin_known(session_id, cwd)
        session = self._register(session_id, cwd)
        replay = session.inbound.begin_replay(on_update) if on_update is not None else None
        self._mcp.ended(session_id)  # a token of its earlier opening is refused from now on
        servers, grant = self._mcp.open(cwd)
        self._mcp.opened(grant, session_id)  # its id is known: its tools may be asked at once
        rpc = connection.rpc
        if method == "session/load":
            request = rpc.load_session(cwd=cwd, session_id=session_id, mcp_servers=servers)
        else:
            request = rpc.resume_session(session_id=session_id, cwd=cwd, mcp_servers=servers)
        try:
            answer = await connection.until_ready(method, request)
        except BaseException:
            self.sessions.pop(session_id, None)
            self._end_open(opening, None)
            self._mcp.ended(session_id)
            raise
        finally:
            # The replay is over with the answer: later updates (between turns) are not
            # history, and must not be drawn into the loaded turn.
            if replay is not None:
                replay()
        self._end_open(opening, session_id)
        session.inbound.take_answer(answer)
        listed = self._listed_titles.get(session_id)
        if session.title is None and listed:
            from acp.schema import SessionInfoUpdate

            update = SessionInfoUpdate(session_update="session_info_update", title=listed)
            session.inbound.update(update)  # as if the agent had said it
        return session

    def replay_over(self, session_id: Any) -> None:
        """session/load answered: what comes next is not history."""
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is not None:
            session.inbound.end_replay()

    def _end_open(self, opening: Opening, session_id: str | None) -> None:
        before = set(self._scopes.cwds)
        self._scopes.end(opening, session_id)
        self._tools.forget(before - set(self._scopes.cwds))

    def _register(self, session_id: str, cwd: str, answer: Any = None) -> Session:
        session = Session(
            self._connection,
            session_id,
            cwd,
            terminals=self._terminals,
            cancel_timeout=self._cancel_timeout,
        )
        session.inbound.take_answer(answer)  # its modes and options; updates sent before it follow
        self.sessions[session_id] = session
        for update in self._scopes.take_early(session_id):
            session.inbound.update(update)
        return session

    # -- the stored ones ---------------------------------------------------------------------

    async def list_stored(self, cwd: str | None) -> list[dict[str, Any]]:
        connection = self._connection
        where = os.path.abspath(cwd or self._cwd)
        response = await connection.request("session/list", connection.rpc.list_sessions(cwd=where))
        try:
            found = [dump(item) for item in response.sessions]
        except Exception as exc:  # an answer of the wrong shape
            raise await connection.failure("session/list", exc) from None
        self._listed_titles = {
            str(item["sessionId"]): item["title"]
            for item in found
            if item.get("sessionId") and isinstance(item.get("title"), str) and item["title"]
        }
        return found

    async def manage(self, method: str, session_id: str) -> None:
        """``session/close`` or ``session/delete`` (the SDK 0.12.1 has no method for this one:
        sent through the transport); the session is forgotten here."""
        connection = self._connection
        if method == "session/close":
            work = connection.rpc.close_session(session_id=session_id)
        else:
            assert connection.transport is not None
            work = connection.transport.request(method, {"sessionId": session_id})
        await connection.request(method, work)
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.inbound.fail_turn(Error(f"the session was closed ({method})"))

    # -- while open --------------------------------------------------------------------------

    # -- the handler's sink (handler.py): what the agent sends ----------------------------------

    @property
    def terminals(self) -> Terminals | None:
        return self._terminals

    def session(self, session_id: Any) -> Inbound | None:
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        return session.inbound if session is not None else None

    async def list_tools(self, params: Any) -> dict[str, Any]:
        return await self._tools.answer_list(params)

    async def call_tool(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await self._tools.call(method, params, self.sessions.__contains__)

    async def cancellable(self, work: Awaitable[T]) -> T:
        transport = self._connection.transport
        assert transport is not None
        return await transport.cancellable(work)

    def update(self, session_id: str, update: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.inbound.update(update)
        else:
            self._scopes.keep_early(session_id, update)

    def terminal_grew(self, session_id: str, terminal_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.inbound.terminal_grew(terminal_id)

    def forget(self, session: Session) -> None:
        self.sessions.pop(session.session_id, None)
        self._mcp.ended(session.session_id)  # its MCP token is refused from now on
        terminals = self._terminals
        if terminals is not None and terminals.of_session(session.session_id):
            task = asyncio.get_running_loop().create_task(terminals.end_session(session.session_id))
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)

    def fail_all(self, error: Error) -> None:
        for session in list(self.sessions.values()):
            session.inbound.fail_turn(error)
