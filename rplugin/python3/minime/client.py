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
import shutil
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import cancel_request
from . import tools as tools_mod
from .errors import Error
from .model import PermissionOption, PermissionRequest, ToolRequest
from .permissions import PermissionCallback, decide
from .process import AgentProcess
from .session import Session
from .tools import Tool, ToolSource
from .updates import _tool_call

log = logging.getLogger("minime")

TOOLS_META_KEY = "org.mini-me/tools"
TOOLS_LIST_METHOD = "org.mini-me/tools/list"  # the SDK strips the leading "_"
CLIENT_NAME = "minime.py"
CLIENT_VERSION = "0.1.0"


def resolve_binary(mm: str | None) -> str:
    """``mm`` argument, else ``$MM_BIN``, else ``mm`` on PATH."""
    wanted = mm or os.environ.get("MM_BIN") or "mm"
    if os.sep in wanted:
        path = os.path.abspath(os.path.expanduser(wanted))
        if not os.path.isfile(path):
            raise Error(f"agent binary not found: {path}")
        if not os.access(path, os.X_OK):
            raise Error(f"agent binary is not executable: {path}")
        return path
    found = shutil.which(wanted)
    if found is None:
        raise Error(f"agent binary not found: {wanted!r} is not on PATH (set MM_BIN or pass mm=)")
    return found


class _Handler:
    """The ACP ``Client`` side the SDK calls into: permissions, updates, extension methods."""

    def __init__(self, owner: Client) -> None:
        self._owner = owner

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **_: Any
    ) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        request = PermissionRequest(
            session_id=session_id,
            tool_call=_tool_call(tool_call),
            options=[
                PermissionOption(option_id=o.option_id, name=o.name, kind=o.kind) for o in options
            ],
        )
        session = self._owner.sessions.get(session_id)
        task = asyncio.ensure_future(decide(self._owner.on_permission, request))
        if session is not None:
            session.pending_permissions.add(task)
        try:
            option_id = await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise
            option_id = None  # the turn was cancelled while the prompt was open
        finally:
            if session is not None:
                session.pending_permissions.discard(task)
        if option_id is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option_id)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        # No await before this: the SDK runs each notification in its own task, and only
        # handling it synchronously keeps the chunks in order.
        self._owner.route_update(session_id, update)

    async def ext_method(self, method: str, params: dict[str, Any]) -> Any:
        if method == TOOLS_LIST_METHOD:
            return await self._owner.list_tools(params)
        return await self._owner.call_tool("_" + method, params)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("ignored notification _%s", method)


class Client:
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
    ) -> None:
        self.argv = argv
        self.cwd = cwd
        self.discovery = discovery
        self.on_permission = on_permission
        self.ready_timeout = ready_timeout
        self.cancel_timeout = cancel_timeout
        self.sessions: dict[str, Session] = {}
        self.agent_info: dict[str, Any] = {}
        self.agent_capabilities: dict[str, Any] = {}
        self.process: AgentProcess | None = None
        self._tool_source = tools
        self._static_tools: dict[str, Tool] = {}
        self._session_tools: dict[str, dict[str, Tool]] = {}
        self._session_cwds: dict[str, str] = {}
        self._early_updates: dict[str, list[Any]] = {}
        self._on_stderr = on_stderr
        self._env = env
        self._conn: Any = None
        self._watch: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = asyncio.Event()
        self.death: Error | None = None

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
        try:
            self.process = await AgentProcess.spawn(
                self.argv, cwd=self.cwd, env=self._env, on_stderr=self._on_stderr
            )
        except OSError as exc:
            raise Error(f"cannot start {self.binary}: {exc.strerror or exc}") from None
        # Imported only now: `import acp` costs about a second (pydantic models) and the
        # agent is already starting in parallel.
        import acp

        self._conn = acp.connect_to_agent(
            _Handler(self), self.process.process.stdin, self.process.process.stdout
        )
        cancel_request.install(self._conn)
        self._watch = asyncio.get_running_loop().create_task(self._watch_exit())
        try:
            response = await self.until_ready("initialize", self._initialize())
        except BaseException:
            await self.close()
            raise
        self.agent_info = _dump(response.agent_info)
        self.agent_capabilities = _dump(response.agent_capabilities)

    async def _initialize(self) -> Any:
        from acp import PROTOCOL_VERSION
        from acp.schema import ClientCapabilities, Implementation

        meta: dict[str, Any] = {}
        if self.discovery == "request":
            meta[TOOLS_META_KEY] = True
        elif self._static_tools:
            meta[TOOLS_META_KEY] = tools_mod.descriptions(self._static_tools.values())
        return await self._conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(field_meta=meta or None),
            client_info=Implementation(name=CLIENT_NAME, version=CLIENT_VERSION),
        )

    async def until_ready(self, what: str, work: Any) -> Any:
        """Run a start-up step within ``ready_timeout``, failing fast if the agent exits."""
        assert self.process is not None
        step = asyncio.ensure_future(work)
        exited = asyncio.ensure_future(self.process.wait())
        try:
            done, _ = await asyncio.wait(
                {step, exited}, timeout=self.ready_timeout, return_when=asyncio.FIRST_COMPLETED
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
                # A closed connection usually means the agent is exiting: let its status speak.
                if await self.process.wait(2.0 if isinstance(exc, ConnectionError) else 0) is None:
                    raise Error(f"{what} failed: {_describe(exc)}{self._stderr_hint()}") from None
        step.cancel()
        if self.process.returncode is not None or exited in done:
            await self.process.wait(2.0)
            raise Error(
                f"{self.binary} exited before it was ready ({what}): "
                f"{self.process.exit_text()}{self._stderr_hint()}"
            )
        raise Error(
            f"{self.binary} did not answer {what} within {self.ready_timeout:g} s"
            f"{self._stderr_hint()}"
        )

    def _stderr_hint(self) -> str:
        line = self.process.last_stderr_line if self.process else ""
        return f" (last stderr line: {line})" if line else ""

    async def _watch_exit(self) -> None:
        assert self.process is not None
        await self.process.wait()
        if self._closing:
            return
        self.death = Error(f"{self.label} exited: {self.process.exit_text()}{self._stderr_hint()}")
        for session in list(self.sessions.values()):
            session.fail_turn(self.death)

    def failure(self, exc: BaseException) -> Error:
        """The error a turn reports: how the agent died, else its own words."""
        if self.death is not None:
            return self.death
        return Error(f"turn failed: {_describe(exc)}{self._stderr_hint()}")

    async def death_or(self, exc: BaseException) -> Error:
        """After a broken connection, wait briefly for the exit status to tell the real story."""
        if self.process is not None and self.process.returncode is None:
            await self.process.wait(2.0)
        if self.process is not None and self.process.returncode is not None and not self._closing:
            self.death = self.death or Error(
                f"{self.label} exited: {self.process.exit_text()}{self._stderr_hint()}"
            )
        return self.failure(exc)

    # -- sessions ---------------------------------------------------------------------

    async def new_session(self, cwd: str | None = None) -> Session:
        """Open a session whose tools run in ``cwd`` (default: the client's cwd)."""
        self._check_alive()
        cwd = os.path.abspath(cwd or self.cwd)
        response = await self.until_ready(
            "session/new", self._conn.new_session(cwd=cwd, mcp_servers=[])
        )
        return self._register(response.session_id, cwd)

    async def load_session(
        self,
        session_id: str,
        cwd: str | None = None,
        on_update: Callable[[Any], None] | None = None,
    ) -> Session:
        """Reopen a stored session; its replayed history goes to ``on_update`` as events."""
        self._check_alive()
        cwd = os.path.abspath(cwd or self.cwd)
        session = self._register(session_id, cwd)
        session.on_update = on_update
        try:
            await self.until_ready(
                "session/load",
                self._conn.load_session(cwd=cwd, session_id=session_id, mcp_servers=[]),
            )
        except BaseException:
            self.sessions.pop(session_id, None)
            raise
        return session

    async def resume_session(self, session_id: str, cwd: str | None = None) -> Session:
        """Reopen a stored session without a replay of its history (``session/resume``)."""
        self._check_alive()
        cwd = os.path.abspath(cwd or self.cwd)
        session = self._register(session_id, cwd)
        try:
            await self.until_ready(
                "session/resume",
                self._conn.resume_session(session_id=session_id, cwd=cwd, mcp_servers=[]),
            )
        except BaseException:
            self.sessions.pop(session_id, None)
            raise
        return session

    async def list_sessions(self, cwd: str | None = None) -> list[dict[str, Any]]:
        self._check_alive()
        response = await self._conn.list_sessions(cwd=os.path.abspath(cwd or self.cwd))
        return [_dump(item) for item in response.sessions]

    def _register(self, session_id: str, cwd: str) -> Session:
        session = Session(self, session_id, cwd)
        self.sessions[session_id] = session
        self._session_cwds.setdefault(session_id, cwd)
        for update in self._early_updates.pop(session_id, []):
            session.on_acp_update(update)
        return session

    def forget(self, session: Session) -> None:
        self.sessions.pop(session.session_id, None)

    def _check_alive(self) -> None:
        if self.death is not None:
            raise self.death
        if self._closing:
            raise Error("the agent connection is closed")

    def route_update(self, session_id: str, update: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.on_acp_update(update)
        elif len(self._early_updates) < 64:
            self._early_updates.setdefault(session_id, []).append(update)

    # -- client tools -------------------------------------------------------------------

    def set_static_tools(self, tools: Iterable[Tool]) -> None:
        self._static_tools = {tool.wire_method: tool for tool in tools_mod.validate(tools)}

    async def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = params.get("sessionId")
        cwd = params.get("cwd")
        if not isinstance(session_id, str) or not isinstance(cwd, str):
            from acp import RequestError

            raise RequestError.invalid_params({"details": "sessionId and cwd must be strings"})
        source = self._tool_source
        found = source(session_id, cwd) if callable(source) else source
        if asyncio.iscoroutine(found):
            found = await found
        checked = tools_mod.validate(found or [])
        self._session_tools[session_id] = {tool.wire_method: tool for tool in checked}
        self._session_cwds[session_id] = cwd
        return {"tools": tools_mod.descriptions(checked)}

    async def call_tool(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from acp import RequestError

        session_id, arguments = tools_mod.split_params(params)
        known = session_id is not None and (
            session_id in self.sessions or session_id in self._session_tools
        )
        table = self._session_tools.get(session_id or "", self._static_tools)
        tool = table.get(method) if known else self._any_tool(method)
        if tool is None:
            raise RequestError.method_not_found(method)
        if not known:
            return tools_mod.text_result(
                f"unknown session {session_id!r}: this client never opened it", is_error=True
            )
        request = ToolRequest(
            session_id=session_id or "",
            arguments=arguments,
            cwd=self._session_cwds.get(session_id or ""),
            tool=tool.name,
        )
        return await tools_mod.run(tool, request)

    def _any_tool(self, method: str) -> Tool | None:
        if method in self._static_tools:
            return self._static_tools[method]
        for table in self._session_tools.values():
            if method in table:
                return table[method]
        return None

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
            if self.process is not None:
                await self.process.stop(grace)
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    await self._conn.close()
            if self._watch is not None:
                self._watch.cancel()
        finally:
            self._closed.set()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


def _dump(model: Any) -> dict[str, Any]:
    if model is None:
        return {}
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _describe(exc: BaseException) -> str:
    code = getattr(exc, "code", None)
    message = str(exc) or type(exc).__name__
    data = getattr(exc, "data", None)
    text = f"{message} ({code})" if code is not None else message
    if data:
        detail = data.get("details") if isinstance(data, dict) else data
        text += f": {detail}"
    return text


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
) -> Client:
    """Start ``<mm> -acp -config <config>`` (or any ACP agent ``command``) and initialize it."""
    if discovery not in ("meta", "request"):
        raise Error(f'discovery must be "meta" or "request", got {discovery!r}')
    if discovery == "meta" and callable(tools):
        raise Error('tools given as a function need discovery="request"')
    if not callable(tools):
        tools = tools_mod.validate(tools)  # refused before anything is spawned
    workdir = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
    if not os.path.isdir(workdir):
        raise Error(f"working directory not found: {workdir}")
    if command:
        argv = [resolve_binary(command[0]), *command[1:]]
    else:
        if config is None:
            raise Error("an agent file is required (config=...)")
        config_path = os.path.abspath(os.path.expanduser(os.fspath(config)))
        if not os.path.isfile(config_path):
            raise Error(f"agent file not found: {config_path}")
        argv = [resolve_binary(mm), "-acp", "-config", config_path]
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
    )
    if not callable(tools):
        client.set_static_tools(tools)
    await client._start()
    return client
