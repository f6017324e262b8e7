"""The agents the host runs: one client per agent (argv, env, discovery), shared by every
thread that asks it (two threads of one agent: two sessions of one process), started once
however many asks arrive while it starts (single_flight.py); each thread's session
(thread.py) is opened here.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import msgspec

from .. import permissions
from ..client import Client, connect
from ..elicitations import ElicitationAnswer, ElicitationRequest
from ..errors import Error
from ..model import PermissionRequest
from ..session import Session
from . import agentfile, ops
from .agent_env import agent_env
from .bridge import NvimBridge
from .single_flight import SingleFlight
from .thread import Thread
from .thread_registry import Threads

log = logging.getLogger("minime")

ClientKey = tuple[Any, ...]


class AgentHooks(Protocol):
    """What a new client gets from the host: the editor's tools and file system, who answers
    the agent's permission requests and questions, where its stderr goes, the setup's
    additional directories for each new session."""

    def tool_source(self, discovery: str, names: str) -> Any: ...
    def file_system(self) -> Any: ...
    async def ask_permission(self, request: PermissionRequest) -> permissions.Decision: ...
    async def ask_question(self, request: ElicitationRequest) -> ElicitationAnswer: ...
    def agent_stderr(self, line: str) -> None: ...
    def additional_directories(self) -> list[str]: ...


class AgentPool:
    def __init__(self, bridge: NvimBridge, threads: Threads, hooks: AgentHooks) -> None:
        self._bridge = bridge
        self._hooks = hooks
        self.clients: dict[ClientKey, Client] = {}
        self._threads = threads
        # "This agent has started": one start per client key.
        self._starting: SingleFlight[ClientKey, Client] = SingleFlight()
        self._told_disabled: set[str] = set()
        # Clients a session is being opened on (id -> how many): in use, though no session yet.
        self._claimed: collections.Counter[int] = collections.Counter()
        # Agents being ended because no session uses them (end_unused): still ours to kill.
        self._ending: dict[asyncio.Task[None], Client] = {}

    # -- each thread's session ------------------------------------------------------------

    async def open_session(
        self, thread: Thread, payload: ops.AgentOp, on_start: Callable[[], None] | None = None
    ) -> Session:
        """A new session for ``thread``, now its own; ``on_start`` is called only when an agent
        process is really being started for it (a new session on a running agent is not).
        Its caller runs it once per thread at a time (Thread.ready)."""
        client = await self.client_for(payload, on_start)
        dirs = self._hooks.additional_directories()
        self._claimed[id(client)] += 1
        try:
            session = await client.new_session(thread.cwd, additional_directories=dirs)
        finally:
            self._claimed[id(client)] -= 1
            if self._claimed[id(client)] <= 0:
                del self._claimed[id(client)]
        thread.take_agent(payload)
        thread.opened(client, session)
        log.info("session %s for thread %s in %s", session.session_id, thread.id, thread.cwd)
        self.end_unused()
        return session

    def adopt(self, thread: Thread, client: Client, session: Session) -> None:
        """``session`` (reopened on ``client``) is now the thread's; the one it had is
        forgotten."""
        current, runs_on = thread.session, thread.client
        same = (runs_on, current and current.session_id) == (client, session.session_id)
        if current is not None and runs_on is not None and not same:
            runs_on.forget(current)
        thread.opened(client, session)

    # -- clients keyed on (argv, env, discovery) -----------------------------------------

    async def client_for(
        self, payload: ops.AgentOp, on_start: Callable[[], None] | None = None
    ) -> Client:
        command, discovery = self._agent_argv(payload)
        key = (
            tuple(command),
            tuple(sorted(payload.agent_env.items())),
            discovery,
            payload.editor_tools,
            payload.tool_names,
            msgspec.json.encode(payload.mcp_servers),
        )
        client = self.clients.get(key)
        if client is not None and client.alive:
            return client
        if on_start is not None:
            on_start()
        return await self._starting.run(
            key, lambda: self._start_client(key, payload, command, discovery)
        )

    def _agent_argv(self, payload: ops.AgentOp) -> tuple[list[str], str]:
        """(command, discovery) for this ask. Lua resolved the agent (lua/minime/agents/); an
        agent with an ``agent_file`` (mm) gets the discovery that file names: mm offers tools
        only to a client in the file's mode."""
        command = payload.agent_cmd
        if not command:
            raise Error("no agent command: the agent's definition gave none (see :h minime-agents)")
        wanted = payload.discovery
        config = payload.agent_file or None
        if not config:
            return list(command), wanted or "meta"
        try:
            block = agentfile.client_tools(config)
        except FileNotFoundError:
            raise Error(f"agent file not found: {config}") from None
        except Exception as exc:
            raise Error(f"cannot read the agent file {config}: {exc}") from None
        named = agentfile.named_discovery(block)
        if agentfile.disabled(block) and config not in self._told_disabled:
            self._told_disabled.add(config)  # once: the file is read at every ask
            log.warning("client tools are off in the agent file %s", config)
            self._bridge.notify(
                f"minime: the agent file {config} turns client tools off "
                "(acp.clientTools.enabled: false): the agent cannot read your buffers",
                "warn",
            )
        mode = named or "meta"
        if wanted and wanted != mode:
            log.warning(
                "discovery %r ignored: the agent file %s uses %r (acp.clientTools.discovery)",
                wanted,
                config,
                mode,
            )
            self._bridge.notify(
                f"minime: discovery = {wanted!r} conflicts with the agent file ({mode!r}); "
                f"using {mode!r}",
                "warn",
            )
        else:
            log.info("discovery %s (from %s)", mode, "the agent file" if named else "mm's default")
        return list(command), mode

    async def _start_client(
        self,
        key: ClientKey,
        payload: ops.AgentOp,
        command: list[str],
        discovery: str,
    ) -> Client:
        via = payload.editor_tools
        client = await connect(
            command=command,
            env=agent_env(payload.agent_env),
            # Over MCP each session's tools are asked for its cwd (as with discovery request).
            tools=()
            if via == "none"
            else self._hooks.tool_source(
                "request" if via == "mcp" else discovery, payload.tool_names
            ),
            tools_via="mcp" if via == "mcp" else "client",
            mcp_servers=payload.mcp_servers,
            fs=self._hooks.file_system(),
            discovery=discovery if via == "client" else "meta",
            on_permission=self._hooks.ask_permission,
            on_elicitation=self._hooks.ask_question,
            terminal_auth=True,  # :MiniMeLogin runs them in a terminal (login.py)
            terminal=True,  # the agent's commands, shown live (minime/terminals.py)
            on_stderr=self._hooks.agent_stderr,
            cwd=os.path.realpath(payload.cwd),
            ready_timeout=_seconds(payload.ready_timeout, 60.0),
            cancel_timeout=_seconds(payload.cancel_timeout, 30.0),
        )
        client.definition_label = payload.label
        self.clients[key] = client
        for name in client.mcp.dropped:
            self._bridge.notify(
                f"minime: the MCP server {name!r} was not passed: {client.label} does not "
                "take http MCP servers (mcpCapabilities.http)",
                "warn",
            )
        assert client.process is not None
        self._bridge.lua("require('minime.rpc').track_agent(...)", client.process.pid)
        log.info("agent started: %s (pid %d)", " ".join(client.argv), client.process.pid)
        return client

    def end_unused(self) -> None:
        """End the agents no session uses any more: a thread reset after setup() changed the
        agent opens its session on the new one, and the old one would run on, idle, until
        Neovim quits (one more process at each such reset); a thread closed may leave its
        agent with no session either."""
        used = {id(t.client) for t in self._threads.with_sessions()}
        used |= set(self._claimed)
        for key, client in list(self.clients.items()):
            if id(client) in used:
                continue
            del self.clients[key]
            log.info("agent no session uses ended: %s", " ".join(client.argv))
            task = asyncio.get_running_loop().create_task(client.close(grace=2.0))
            self._ending[task] = client
            task.add_done_callback(lambda done: self._ending.pop(done, None))

    def drop(self, client: Client) -> None:
        """``client`` died: neither it nor its sessions are used again."""
        for key, known in list(self.clients.items()):
            if known is client:
                del self.clients[key]
        for thread in self._threads.with_sessions():
            if thread.client is client:
                thread.lost_session()

    def close_all(self) -> Awaitable[None]:
        """Every agent ends, those still starting too (who waited for them gets
        ``StartCancelled``). Let go of at once, before the caller's next await: an ask from then
        on starts a new agent and session. Returns what to await for their processes' end."""
        starting = self._starting.cancel_all()
        clients = [*self.clients.values(), *self._ending.values()]
        self.clients.clear()
        for thread in self._threads.with_sessions():
            thread.lost_session()
        return self._close(starting, clients)

    async def _close(self, starting: Awaitable[object], clients: list[Client]) -> None:
        await starting
        for client in clients:
            await client.close(grace=2.0)  # idempotent: one being ended is waited for

    def kill_all(self) -> None:
        """Neovim is gone: end every agent's process tree now, without waiting on asyncio."""
        for client in [*self.clients.values(), *self._ending.values()]:
            if client.terminals is not None:
                client.terminals.kill_now()
            if client.process is not None:
                client.process.kill_tree()


def _seconds(value: float | None, default: float) -> float:
    """A timeout option from Lua: a positive number of seconds, else the default."""
    return float(value) if value is not None and value > 0 else default
