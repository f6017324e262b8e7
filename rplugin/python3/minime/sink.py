"""The shapes library modules know each other by, so that neither imports the other: the sink
the ACP handler (handler.py) hands the agent's requests and updates to (session_registry.py's
registry is the one), and the client a session names (a :class:`minime.client.Client`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .model import ToolCall

if TYPE_CHECKING:
    from .mcp_servers import SessionServers
    from .options import Options
    from .terminals import Terminals

T = TypeVar("T")


class AskedSession(Protocol):
    """A session as the agent's requests need it (a :class:`minime.session.Inbound`)."""

    @property
    def session_id(self) -> str: ...

    @property
    def cwd(self) -> str: ...

    def permission_call(self, call: ToolCall) -> ToolCall: ...

    def asking(self, question: asyncio.Future[Any]) -> AbstractContextManager[None]: ...


class Sink(Protocol):
    """Where the handler hands what the agent sends (session_registry.py's registry)."""

    @property
    def terminals(self) -> Terminals | None: ...

    def session(self, session_id: Any) -> AskedSession | None: ...

    def update(self, session_id: str, update: Any) -> None: ...

    async def list_tools(self, params: Any) -> dict[str, Any]: ...

    async def call_tool(self, method: str, params: dict[str, Any]) -> dict[str, Any]: ...

    async def cancellable(self, work: Awaitable[T]) -> T: ...


class SessionClient(Protocol):
    """The client a session runs on (``session.client``), as its readers use it: a
    :class:`minime.client.Client`, which imports session.py, so session.py cannot name it."""

    @property
    def options(self) -> Options: ...

    @property
    def alive(self) -> bool: ...

    @property
    def agent_capabilities(self) -> dict[str, Any]: ...

    @property
    def terminals(self) -> Terminals | None: ...

    @property
    def mcp(self) -> SessionServers: ...

    def forget(self, session: Any) -> None: ...
