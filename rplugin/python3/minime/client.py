"""One agent process, one ACP connection, any number of sessions.

``connect()`` spawns the agent and runs ``initialize``; ``Client.new_session(cwd)`` opens a
session. Client tools are answered here: from the list given at ``initialize`` (discovery
``meta``) or from a function of ``(session_id, cwd)`` asked at each ``_org.mini-me/tools/list``
(discovery ``request``), so each session keeps its own tools.

The parts: the connection and its one error policy (connection.py), the sessions and how they
open (session_registry.py), the agent's requests (handler.py, which hands them to this client).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any, cast

from . import tools as tools_mod
from .branch import Branch, branch
from .capabilities import lent_capabilities
from .connection import Connection
from .errors import Error, method_names
from .handler import Handler
from .mcp_servers import SessionServers
from .options import Options, checked
from .process import AgentProcess
from .scopes import Scopes
from .session import Session
from .session_registry import SessionRegistry, dump
from .terminals import Terminal, Terminals
from .tool_service import ToolService
from .transport import LineTransport

_BACKGROUND: set[asyncio.Task[None]] = set()
TOOLS_META_KEY = "org.mini-me/tools"
CLIENT_NAME = "minime.py"
CLIENT_VERSION = "0.1.0"


class Client:
    """A connection to one agent process. Build it with :func:`connect`."""

    def __init__(self, options: Options) -> None:
        """``options``: as :func:`minime.options.checked` made them (``connect`` does)."""
        self.options = options
        self.terminals: Terminals | None = options.terminal
        scopes = self._scopes = Scopes()  # which cwd each session's tools run in
        via_mcp = options.tools_via == "mcp"
        self.mcp = SessionServers(options.tools if via_mcp else None, options.mcp_servers)
        self._tools = ToolService(() if via_mcp else options.tools, options.discovery, scopes)
        if not via_mcp and not callable(options.tools):
            self._tools.set_static(options.tools)
        self._connection = Connection(
            options.command,
            cwd=options.cwd,
            env=options.env,
            on_stderr=options.on_stderr,
            ready_timeout=options.ready_timeout,
            on_death=self._died,
        )
        self._registry = SessionRegistry(
            self._connection,
            cwd=options.cwd,
            scopes=scopes,
            tools=self._tools,
            mcp=self.mcp,
            terminals=self.terminals,
            cancel_timeout=options.cancel_timeout,
        )
        if self.terminals is not None:
            self.terminals.on_grew = self._registry.terminal_grew
        self._closing = False
        self._closed = asyncio.Event()
        # The loop time by which connect and a first session are due (ready_timeout from
        # the first request on: the spawn and the SDK's import are not the agent's).
        self.ready_by: float | None = None

    # -- what it is ---------------------------------------------------------------------

    @property
    def argv(self) -> list[str]:
        return self._connection.argv

    @property
    def cwd(self) -> str:
        return self.options.cwd

    @property
    def label(self) -> str:
        return self._connection.label

    @property
    def definition_label(self) -> str | None:
        return self._connection.definition_label

    @definition_label.setter
    def definition_label(self, label: str | None) -> None:
        self._connection.definition_label = label

    @property
    def agent_info(self) -> dict[str, Any]:
        return self._connection.agent_info

    @property
    def agent_capabilities(self) -> dict[str, Any]:
        return self._registry.agent_capabilities

    @property
    def auth_methods(self) -> list[dict[str, Any]]:
        return self._connection.auth_methods

    @property
    def process(self) -> AgentProcess | None:
        return self._connection.process

    @property
    def transport(self) -> LineTransport | None:
        return self._connection.transport

    @property
    def alive(self) -> bool:
        return self._connection.alive

    @property
    def death(self) -> Error | None:
        return self._connection.death

    @property
    def sessions(self) -> dict[str, Session]:
        return self._registry.sessions

    # -- start-up -------------------------------------------------------------------

    async def _open(self) -> None:
        """Spawn the agent and ``initialize`` it (:func:`connect` does it)."""
        await self.mcp.start()
        connection = self._connection
        handler = Handler(
            self._registry,
            on_permission=self.options.on_permission,
            on_elicitation=self.options.on_elicitation,
            fs=self.options.fs,
        )
        await connection.open(cast(Any, handler), self._registry.replay_over)
        assert connection.process is not None
        if self.terminals is not None:  # the agent's tree holds its terminals' commands too
            self.terminals.agent_tag = connection.process.tag
        try:
            self.ready_by = asyncio.get_running_loop().time() + self.options.ready_timeout
            response = await connection.until_ready("initialize", self._initialize(), self.ready_by)
        except BaseException:
            await self.close()
            raise
        connection.agent_info = dump(response.agent_info)
        self._registry.agent_capabilities = dump(response.agent_capabilities)
        self.mcp.fit(self.agent_capabilities)
        connection.auth_methods = [dump(method) for method in response.auth_methods or []]

    async def _initialize(self) -> Any:
        from acp import PROTOCOL_VERSION
        from acp.schema import ClientCapabilities, Implementation

        meta: dict[str, Any] = {}
        if self.options.discovery == "request" and self.mcp.tools is None:
            meta[TOOLS_META_KEY] = True
        elif self._tools.static:
            meta[TOOLS_META_KEY] = tools_mod.descriptions(self._tools.static)
        lent = lent_capabilities(
            fs=self.options.fs is not None,
            questions=self.options.on_elicitation is not None,
            terminal_auth=self.options.terminal_auth,
            terminal=self.terminals is not None,
        )
        return await self._connection.rpc.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(field_meta=meta or None, **lent),
            client_info=Implementation(name=CLIENT_NAME, version=CLIENT_VERSION),
        )

    def _died(self, error: Error) -> None:
        self._registry.fail_all(error)
        if self.terminals is not None:  # nobody is left to read or release them
            task = asyncio.get_running_loop().create_task(self.terminals.close())
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)

    # -- sessions ---------------------------------------------------------------------

    async def new_session(
        self,
        cwd: str | None = None,
        additional_directories: Sequence[str] = (),
        *,
        ready_by: float | None = None,
    ) -> Session:
        """Open a session whose tools run in ``cwd`` (default: the client's cwd), within
        ``ready_timeout`` (or by the loop time ``ready_by``: ``start`` gives what
        ``initialize`` left of it); ``additional_directories`` (absolute paths) widen the
        agent's own workspace where it advertises ``sessionCapabilities.additionalDirectories``."""
        return await self._registry.open_new(cwd, ready_by, additional_directories)

    async def fork_session(
        self, session: Session, meta: dict[str, Any], additional_directories: Sequence[str] = ()
    ) -> Session:
        """``session/fork`` (where the agent advertises ``sessionCapabilities.fork``): a new
        session holding ``session``'s history up to the fork point ``meta`` names (its
        ``_meta``; see history.fork_meta). A rewind calls it through :meth:`branch`."""
        return await self._registry.fork(session, meta, additional_directories)

    async def branch(
        self, session: Session, before: int, additional_directories: Sequence[str] = ()
    ) -> Branch:
        """A new session that continues ``session``'s conversation from before its ask
        ``before`` (1-based): forked where the agent forks, else given the asks and answers
        before it with its first prompt (``Branch.prompt``); ``Branch.how`` says which."""
        return await branch(self, session, before, additional_directories)

    async def load_session(
        self, session_id: str, cwd: str | None = None, on_update: Any = None
    ) -> Session:
        """Reopen a stored session; its replayed history goes to ``on_update`` as events (until
        the agent answers ``session/load``)."""
        return await self._registry.reopen("session/load", session_id, cwd, on_update)

    async def resume_session(self, session_id: str, cwd: str | None = None) -> Session:
        """Reopen a stored session without a replay of its history (``session/resume``)."""
        return await self._registry.reopen("session/resume", session_id, cwd, None)

    async def list_sessions(self, cwd: str | None = None) -> list[dict[str, Any]]:
        """The agent's stored sessions (``session/list``); any failure is a :class:`Error`."""
        return await self._registry.list_stored(cwd)

    async def close_session(self, session_id: str) -> None:
        """``session/close`` (where the agent advertises ``sessionCapabilities.close``): the
        agent frees it; this client forgets it."""
        await self._registry.manage("session/close", session_id)

    async def delete_session(self, session_id: str) -> None:
        """``session/delete`` (``sessionCapabilities.delete``): the agent forgets it for good."""
        await self._registry.manage("session/delete", session_id)

    def forget(self, session: Session) -> None:
        """The program is done with ``session``: its tools and terminals end here."""
        self._registry.forget(session)

    async def authenticate(self, method_id: str) -> None:
        """``authenticate`` with one of the agent's ``authMethods``; any failure an Error."""
        connection = self._connection
        connection.check_alive()
        if not any(m.get("id") == method_id for m in self.auth_methods):
            offered = method_names(self.auth_methods) or "none"
            raise Error(f"no login method {method_id!r}; the agent offers: {offered}")
        await connection.request("authenticate", connection.rpc.authenticate(method_id=method_id))

    # -- the client terminal ------------------------------------------------------------

    def terminal(self, terminal_id: str) -> Terminal | None:
        """This client's terminal ``terminal_id`` (None: no such terminal)."""
        return self.terminals.get(terminal_id) if self.terminals is not None else None

    # -- shutdown -------------------------------------------------------------------------

    async def close(self, grace: float = 5.0) -> None:
        """Close stdin, wait up to ``grace`` s, then kill the whole process group. Idempotent."""
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        self._registry.fail_all(Error("the agent connection was closed"))
        try:
            if self.terminals is not None:
                await self.terminals.close()
            await self._connection.close(grace)
        finally:
            await self.mcp.close()
            self._closed.set()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


async def connect(config: str | os.PathLike[str] | None = None, **options: Any) -> Client:
    """Start ``<mm> -acp -config <config>`` (or any ACP agent ``command``) and initialize it.
    The options (:class:`minime.options.Options`): ``cwd``, ``mm``, ``tools``, ``discovery``,
    ``on_permission``, ``on_stderr``, ``command``, ``env``, ``ready_timeout``,
    ``cancel_timeout``, ``fs``, ``tools_via`` (``"mcp"``: ``tools`` are an MCP server of each
    session), ``mcp_servers``, ``on_elicitation``, ``terminal_auth``, ``terminal`` (True, or a
    :class:`~minime.terminals.Terminals`: the agent's commands run here)."""
    return await connect_with(checked("connect", {"config": config, **options}))


async def connect_with(options: Options) -> Client:
    """:func:`connect` with options already checked (``start`` checks them as its own)."""
    client = Client(options)
    await client._open()
    return client
