"""One agent process, one ACP connection, any number of sessions.

``connect()`` spawns the agent and runs ``initialize``; ``Client.new_session(cwd)`` opens a
session. Client tools are answered here: from the list given at ``initialize`` (discovery
``meta``) or from a function of ``(session_id, cwd)`` asked at each ``_org.mini-me/tools/list``
(discovery ``request``), so each session keeps its own tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from . import agent_file, sdk_log
from . import tools as tools_mod
from .arguments import agent_argv, check_connect_arguments, working_directory
from .auth import Authentication
from .capabilities import lent_capabilities, session_roots
from .elicitations import ElicitationCallback
from .errors import AUTH_REQUIRED, Error, describe
from .fs import FileSystem, file_system
from .handler import Handler
from .mcp_servers import SessionServers, checked_servers
from .permissions import PermissionCallback
from .process import AgentProcess
from .scopes import Opening, Scopes
from .session import Session
from .session_state import take_answer
from .stored_sessions import StoredSessions, dump
from .terminals import Terminal, Terminals
from .tool_service import ToolService
from .tools import Tool, ToolSource
from .transport import LineTransport

log = logging.getLogger("minime")

_BACKGROUND: set[asyncio.Task[None]] = set()
TOOLS_META_KEY = "org.mini-me/tools"
CLIENT_NAME = "minime.py"
CLIENT_VERSION = "0.1.0"


class Client(StoredSessions, Authentication):
    """A connection to one agent process. Build it with :func:`connect`."""

    def __init__(
        self,
        *,
        argv: list[str],
        cwd: str,
        tools: ToolSource,
        discovery: str,
        on_permission: PermissionCallback | None,
        on_stderr: Callable[[str], None] | None,
        ready_timeout: float,
        cancel_timeout: float,
        env: dict[str, str] | None,
        fs: FileSystem | None = None,
        mcp_tools: ToolSource | None = None,
        mcp_servers: Sequence[dict[str, Any]] = (),
        on_elicitation: ElicitationCallback | None = None,
        terminal_auth: bool = False,
        terminals: Terminals | None = None,
    ) -> None:
        self.argv = argv
        self.terminals = terminals
        if terminals is not None:
            terminals.on_grew = self._terminal_grew
        self.terminal_auth = terminal_auth
        self.on_elicitation = on_elicitation
        self.fs = fs
        self.cwd = cwd
        self.discovery = discovery
        self.on_permission = on_permission
        self.ready_timeout = ready_timeout
        self.cancel_timeout = cancel_timeout
        self.sessions: dict[str, Session] = {}
        self.agent_info: dict[str, Any] = {}
        self.agent_capabilities: dict[str, Any] = {}
        self.auth_methods: list[dict[str, Any]] = []  # initialize's authMethods, as sent
        # How the caller's definition names the agent (the editor's ``label``), for messages.
        self.definition_label: str | None = None
        self.process: AgentProcess | None = None
        self._scopes = Scopes()
        self.mcp = SessionServers(mcp_tools, mcp_servers)  # or tools over MCP, per session
        self.tool_service = ToolService(tools, discovery, self._scopes)
        self._on_stderr = on_stderr
        self._env = env
        self.rpc: Any = None  # the SDK's ClientSideConnection
        self.transport: LineTransport = None  # type: ignore[assignment]
        self._ended: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = asyncio.Event()
        self.death: Error | None = None
        self.ready_by: float | None = None  # loop time by which connect + a first session are due

    # -- start-up -------------------------------------------------------------------

    @property
    def binary(self) -> str:
        return self.argv[0]

    @property
    def label(self) -> str:
        return os.path.basename(self.binary)

    @property
    def alive(self) -> bool:
        return self.death is None and not self._closing

    async def _start(self) -> None:
        await self.mcp.start()
        try:
            self.process = await AgentProcess.spawn(
                self.argv, cwd=self.cwd, env=self._env, on_stderr=self._on_stderr
            )
        except OSError as exc:
            raise Error(f"cannot start {self.binary}: {exc.strerror or exc}") from None
        if self.terminals is not None:  # the agent's tree holds its terminals' commands too
            self.terminals.agent_tag = self.process.tag
        # Imported only now: `import acp` costs about a second (pydantic models) and the
        # agent is already starting in parallel.
        import acp

        process = self.process.process
        assert process.stdout is not None and process.stdin is not None
        self.transport = LineTransport(process.stdout, process.stdin, on_end=self._output_ended)
        self.transport.on_load_answered = self._replay_over
        sdk_log.install()  # its tracebacks of hostile messages: one line on our logger
        # The SDK's Client protocol names every client method; terminal/* answer
        # method_not_found without terminals (terminal_requests.py). The SDK (0.12.1)
        # serves elicitation/create only with the unstable protocol on; ACP stabilised
        # elicitation, and this client defines no other unstable method.
        handler = cast("acp.Client", Handler(self))
        self.rpc = acp.connect_to_agent(handler, self.transport, use_unstable_protocol=True)
        self._watch = asyncio.get_running_loop().create_task(self._watch_exit())
        try:
            # From the first request on (the spawn and the SDK's import are not the agent's).
            self.ready_by = asyncio.get_running_loop().time() + self.ready_timeout
            response = await self.until_ready("initialize", self._initialize(), self.ready_by)
        except BaseException:
            await self.close()
            raise
        self.agent_info = dump(response.agent_info)
        self.agent_capabilities = dump(response.agent_capabilities)
        self.mcp.fit(self.agent_capabilities)
        self.auth_methods = [dump(method) for method in response.auth_methods or []]

    async def _initialize(self) -> Any:
        from acp import PROTOCOL_VERSION
        from acp.schema import ClientCapabilities, Implementation

        meta: dict[str, Any] = {}
        if self.discovery == "request" and self.mcp.tools is None:
            meta[TOOLS_META_KEY] = True
        elif self.tool_service.static:
            meta[TOOLS_META_KEY] = tools_mod.descriptions(self.tool_service.static)
        lent = lent_capabilities(
            fs=self.fs is not None,
            questions=self.on_elicitation is not None,
            terminal_auth=self.terminal_auth,
            terminal=self.terminals is not None,
        )
        return await self.rpc.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(field_meta=meta or None, **lent),
            client_info=Implementation(name=CLIENT_NAME, version=CLIENT_VERSION),
        )

    async def until_ready(self, what: str, work: Any, ready_by: float | None = None) -> Any:
        """Run a start-up step within ``ready_timeout`` (or until the loop time ``ready_by``,
        the one bound of a whole start), failing fast if the agent exits."""
        assert self.process is not None
        timeout = self.ready_timeout
        if ready_by is not None:
            timeout = max(0.0, ready_by - asyncio.get_running_loop().time())
        step = asyncio.ensure_future(work)
        exited = asyncio.ensure_future(self.process.wait())
        try:
            done, _ = await asyncio.wait(
                {step, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            step.cancel()
            raise
        finally:
            exited.cancel()
        if step in done:
            try:
                return step.result()
            except Error:
                raise
            except Exception as exc:
                if getattr(exc, "code", None) == AUTH_REQUIRED:
                    raise self._auth_required(what, exc) from None
                # A closed connection usually means the agent is exiting: let its status speak.
                if await self.process.wait(2.0 if isinstance(exc, ConnectionError) else 0) is None:
                    raise Error(f"{what} failed: {describe(exc)}{self._stderr_hint()}") from None
        step.cancel()
        if self.process.returncode is not None or exited in done:
            await self.process.wait(2.0)
            raise Error(
                f"{self.binary} exited before it was ready ({what}): "
                f"{self.process.exit_text()}{self._stderr_hint()}"
            )
        since = " of its start" if ready_by is not None and what != "initialize" else ""
        raise Error(
            f"{self.binary} did not answer {what} within {self.ready_timeout:g} s{since}"
            f"{self._stderr_hint()}"
        )

    def _stderr_hint(self) -> str:
        line = self.process.last_stderr_line if self.process else ""
        return f" (last stderr line: {line})" if line else ""

    async def _watch_exit(self) -> None:
        assert self.process is not None
        await self.process.wait()
        if self._closing or self.death is not None:
            return
        self._die(Error(f"{self.label} exited: {self.process.exit_text()}{self._stderr_hint()}"))

    def _die(self, error: Error) -> None:
        self.death = error
        for session in list(self.sessions.values()):
            session.fail_turn(error)
        if self.terminals is not None:  # nobody is left to read or release them
            task = asyncio.get_running_loop().create_task(self.terminals.close())
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)

    def _output_ended(self) -> None:
        if not self._closing and self._ended is None:
            self._ended = asyncio.get_running_loop().create_task(self._stop_mute_agent())

    async def _stop_mute_agent(self) -> None:
        """The agent's stdout ended: whether or not it still runs, it can answer nothing more."""
        assert self.process is not None
        if await self.process.wait(1.0) is not None or self._closing or self.death is not None:
            return  # it exited: _watch_exit tells how
        self._die(Error(f"{self.label} closed its output while still running; it was stopped"))
        await self.process.stop(0)

    def failure(self, exc: BaseException) -> Error:
        """The error a turn reports: how the agent died, else its own words."""
        if self.death is not None:
            return self.death
        # No stderr hint: the agent is alive and answered in its own words; its last stderr
        # line is whatever it last logged (mm: "[acp] session … client tools …"), unrelated.
        return Error(f"turn failed: {describe(exc)}")

    async def death_or(self, exc: BaseException) -> Error:
        """After a broken connection, wait briefly for the exit status to tell the real story."""
        if self.process is not None and self.process.returncode is None:
            await self.process.wait(2.0)
        if (
            self.process is not None
            and self.process.returncode is not None
            and not self._closing
            and self.death is None
        ):
            # The same death _watch_exit would declare: every session's prompts end with it.
            self._die(
                Error(f"{self.label} exited: {self.process.exit_text()}{self._stderr_hint()}")
            )
        return self.failure(exc)

    # -- sessions ---------------------------------------------------------------------

    async def new_session(
        self, cwd: str | None = None, additional_directories: Sequence[str] = ()
    ) -> Session:
        """Open a session whose tools run in ``cwd`` (default: the client's cwd), within
        ``ready_timeout``; ``additional_directories`` (absolute paths) widen the agent's own
        workspace where it advertises ``sessionCapabilities.additionalDirectories``."""
        return await self.open_first_session(cwd, None, additional_directories)

    async def open_first_session(
        self, cwd: str | None, ready_by: float | None, additional_directories: Sequence[str] = ()
    ) -> Session:
        """``new_session`` bounded by ``ready_by`` (``start()``: one bound for the whole start,
        so a slow ``initialize`` leaves ``session/new`` only the rest of ``ready_timeout``)."""
        self._check_alive()
        cwd = os.path.abspath(cwd or self.cwd)
        opening = self._scopes.begin_new(cwd)
        servers, grant = self.mcp.open(cwd)
        session_id: str | None = None
        try:
            roots = session_roots(self.agent_capabilities, additional_directories)
            response = await self.until_ready(
                "session/new",
                self.rpc.new_session(cwd=cwd, mcp_servers=servers, **roots),
                ready_by,
            )
            if self._scopes.conflicts(response.session_id, cwd):
                raise Error(
                    f"{self.label} answered session/new with session {response.session_id!r}, "
                    "which it had listed tools for in another directory"
                )
            session_id = response.session_id
            return self._register(response.session_id, cwd, response)
        finally:
            self._end_open(opening, session_id)
            self.mcp.opened(grant, session_id)

    def _end_open(self, opening: Opening, session_id: str | None) -> None:
        before = set(self._scopes.cwds)
        self._scopes.end(opening, session_id)
        self.tool_service.forget(before - set(self._scopes.cwds))

    def _register(self, session_id: str, cwd: str, answer: Any = None) -> Session:
        session = Session(self, session_id, cwd)
        take_answer(session, answer)  # its modes and options; updates sent before it follow
        self.sessions[session_id] = session
        for update in self._scopes.take_early(session_id):
            session.on_acp_update(update)
        return session

    def _replay_over(self, session_id: Any) -> None:
        """session/load answered: what comes next is not history (``on_update`` is for the
        replay only; later updates between turns are not shown)."""
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is not None:
            session.on_update = None

    def forget(self, session: Session) -> None:
        self.sessions.pop(session.session_id, None)
        self.mcp.ended(session.session_id)  # its MCP token is refused from now on
        if self.terminals is not None and self.terminals.of_session(session.session_id):
            task = asyncio.get_running_loop().create_task(
                self.terminals.end_session(session.session_id)
            )
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)

    # -- the client terminal ---------------------------------------------------------------

    def terminal(self, terminal_id: str) -> Terminal | None:
        return self.terminals.get(terminal_id) if self.terminals is not None else None

    def terminal_text(self, terminal_id: str) -> str | None:
        """The output of this client's terminal ``terminal_id`` (None: no such terminal)."""
        terminal = self.terminals.get(terminal_id) if self.terminals is not None else None
        return terminal.text if terminal is not None else None

    def _terminal_grew(self, session_id: str, terminal_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.terminals.grew(terminal_id)

    def _check_alive(self) -> None:
        if self.death is not None:
            raise self.death
        if self._closing:
            raise Error("the agent connection is closed")

    def route_update(self, session_id: str, update: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.on_acp_update(update)
        else:
            self._scopes.keep_early(session_id, update)

    # -- client tools -------------------------------------------------------------------

    def set_static_tools(self, tools: Iterable[Tool]) -> None:
        self.tool_service.set_static(tools)

    async def list_tools(self, params: Any) -> dict[str, Any]:
        return await self.tool_service.answer_list(params)

    async def call_tool(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await self.tool_service.call(method, params, self.sessions.__contains__)

    # -- shutdown -------------------------------------------------------------------------

    async def close(self, grace: float = 5.0) -> None:
        """Close stdin, wait up to ``grace`` s, then kill the whole process group. Idempotent."""
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        closed = Error("the agent connection was closed")
        for session in list(self.sessions.values()):
            session.fail_turn(closed)
        try:
            if self.terminals is not None:
                await self.terminals.close()
            if self.process is not None:
                await self.process.stop(grace)
            if self.rpc is not None:
                with contextlib.suppress(Exception):
                    await self.rpc.close()
            for task in (self._watch, self._ended):
                if task is not None:
                    task.cancel()
        finally:
            await self.mcp.close()
            self._closed.set()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


async def connect(
    config: str | os.PathLike[str] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    mm: str | None = None,
    tools: ToolSource = (),
    discovery: str = "meta",
    on_permission: PermissionCallback | None = None,
    on_stderr: Callable[[str], None] | None = None,
    command: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
    ready_timeout: float = 60.0,
    cancel_timeout: float = 30.0,
    fs: Any = None,
    tools_via: str = "client",
    mcp_servers: Sequence[dict[str, Any]] = (),
    on_elicitation: ElicitationCallback | None = None,
    terminal_auth: bool = False,
    terminal: bool | Terminals = False,
) -> Client:
    """Start ``<mm> -acp -config <config>`` (or any ACP agent ``command``) and initialize it.
    ``tools_via="mcp"``: ``tools`` are an MCP server of each session (see mcp_servers.py).
    ``terminal``: True (or a :class:`~minime.terminals.Terminals`, to be told when output
    grows) lends the client terminal: the agent's commands run here (terminals.py)."""
    if not isinstance(terminal, bool | Terminals):
        raise Error(f"terminal must be True, False or a Terminals, got {type(terminal).__name__}")
    if on_elicitation is not None and not callable(on_elicitation):
        raise Error(f"on_elicitation must be a function, got {type(on_elicitation).__name__}")
    check_connect_arguments(
        config=config,
        cwd=cwd,
        mm=mm,
        tools=tools,
        discovery=discovery,
        on_permission=on_permission,
        on_stderr=on_stderr,
        command=command,
        env=env,
        ready_timeout=ready_timeout,
        cancel_timeout=cancel_timeout,
        tools_via=tools_via,
    )
    if discovery not in ("meta", "request"):
        raise Error(f'discovery must be "meta" or "request", got {discovery!r}')
    servers, mcp_tools = checked_servers(mcp_servers), None
    if tools_via == "mcp":  # mm's client-tools extension then offers none
        mcp_tools, tools = (tools if callable(tools) else tools_mod.validate(tools)), ()
    if discovery == "meta" and callable(tools):
        raise Error('tools given as a function need discovery="request" (or tools_via="mcp")')
    if not callable(tools):
        tools = tools_mod.validate(tools)  # refused before anything is spawned
    handlers = file_system(fs)
    workdir = working_directory(cwd)
    argv = agent_argv(config, mm, command)
    if not command and (callable(tools) or tools):  # mm would say why only on its stderr
        for words in agent_file.mismatches(argv[-1], discovery):
            log.warning("%s", words)
    client = Client(
        argv=argv,
        cwd=workdir,
        tools=tools,
        discovery=discovery,
        on_permission=on_permission,
        on_stderr=on_stderr,
        ready_timeout=ready_timeout,
        cancel_timeout=cancel_timeout,
        env=dict(os.environ, **env) if env else None,
        fs=handlers,
        mcp_tools=mcp_tools,
        mcp_servers=servers,
        on_elicitation=on_elicitation,
        terminal_auth=terminal_auth,
        terminals=terminal
        if isinstance(terminal, Terminals)
        else Terminals()
        if terminal
        else None,
    )
    if not callable(tools):
        client.set_static_tools(tools)
    await client._start()
    return client
