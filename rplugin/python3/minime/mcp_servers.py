"""The ``mcpServers`` a client sends with each ``session/new``, ``session/load`` and
``session/resume``: the program's own (``connect(mcp_servers=...)``, in ACP's shape) and, with
``tools_via="mcp"``, one entry for the program's tools, served by :class:`McpHost` for that
session alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import tools as tools_mod
from .errors import Error
from .mcp_host import SERVER_NAME, Grant, McpHost
from .mcp_server import Scope
from .tools import Tool, ToolSource

log = logging.getLogger("minime")

_REMOTE = ("http", "sse")  # the transports an agent must advertise in mcpCapabilities


def _pairs(where: str, value: Any, key: str) -> list[dict[str, str]]:
    """``env``/``headers`` as ACP's list of ``{name, value}``; a mapping is accepted too."""
    if value is None:
        return []
    if isinstance(value, Mapping):
        value = [{"name": k, "value": v} for k, v in value.items()]
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise Error(f"{where}: {key} must be a list of {{name, value}} or a table of strings")
    pairs = list(value)
    for pair in pairs:
        if not (
            isinstance(pair, Mapping)
            and isinstance(pair.get("name"), str)
            and isinstance(pair.get("value"), str)
        ):
            raise Error(f"{where}: each of {key} must be {{name = string, value = string}}")
    return [{"name": p["name"], "value": p["value"]} for p in pairs]


def checked_servers(servers: Any) -> list[dict[str, Any]]:
    """The program's own MCP servers in ACP's wire shape, or an Error saying which is wrong:
    ``{name, command, args?, env?}`` (stdio) or ``{name, url, headers?, type?}`` (http)."""
    if isinstance(servers, str | bytes | Mapping) or not isinstance(servers, Iterable):
        raise Error("mcp_servers must be a list of servers ({name, command} or {name, url})")
    checked: list[dict[str, Any]] = []
    for index, server in enumerate(servers):
        name = server.get("name") if isinstance(server, Mapping) else None
        where = f"mcp_servers[{index + 1}]" + (f" ({name})" if isinstance(name, str) else "")
        if not isinstance(name, str) or not name.strip():
            raise Error(f"{where}: a server needs a name")
        if name == SERVER_NAME:
            raise Error(f'{where}: the name "{SERVER_NAME}" is the editor\'s own server')
        if isinstance(server.get("url"), str):
            kind = server.get("type") or "http"
            if kind not in _REMOTE:
                raise Error(f'{where}: type must be "http" or "sse", got {kind!r}')
            headers = _pairs(where, server.get("headers"), "headers")
            checked.append({"type": kind, "name": name, "url": server["url"], "headers": headers})
            continue
        command, args = server.get("command"), server.get("args") or []
        if not isinstance(command, str) or not command:
            raise Error(f"{where}: a server needs a command (stdio) or a url (http)")
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise Error(f"{where}: args must be a list of strings")
        env = _pairs(where, server.get("env"), "env")
        checked.append({"name": name, "command": command, "args": list(args), "env": env})
    return checked


class SessionServers:
    """What one client offers each session over MCP, and the grants of those it opened."""

    def __init__(self, tools: ToolSource | None, servers: Sequence[dict[str, Any]]) -> None:
        self.tools = tools  # None: the tools (if any) go over mm's client-tools extension
        self._servers = list(servers)
        self.host: McpHost | None = None
        self.dropped: list[str] = []  # the names of servers this agent cannot reach

    async def start(self) -> None:
        if self.tools is not None and (callable(self.tools) or self.tools):
            self.host = McpHost(self._tools_for)
            try:
                await self.host.start()
            except OSError as exc:
                await self.host.close()
                where = self.host.directory or "a temporary directory"
                raise Error(
                    f"cannot serve the tools over MCP: no socket in {where}: {exc.strerror or exc}"
                ) from None

    def fit(self, capabilities: Mapping[str, Any]) -> None:
        """Keep only the servers the agent can reach: an http (or sse) one needs the agent's
        ``mcpCapabilities`` to name that transport (else a warning naming it)."""
        offered = capabilities.get("mcpCapabilities") or {}
        kept = []
        for server in self._servers:
            kind = server.get("type")
            if kind in _REMOTE and not offered.get(kind):
                log.warning(
                    "MCP server %s not passed: the agent does not take %s servers",
                    server["name"],
                    kind,
                )
                self.dropped.append(server["name"])
            else:
                kept.append(server)
        self._servers = kept

    def open(self, cwd: str) -> tuple[list[Any], Grant | None]:
        """The ``mcpServers`` of a session opening in ``cwd`` (SDK models), and its grant."""
        from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer

        grant = self.host.grant(cwd) if self.host is not None else None
        entries = [*self._servers, *([self.host.entry(grant)] if grant and self.host else [])]
        models = {"http": HttpMcpServer, "sse": SseMcpServer, None: McpServerStdio}
        return [models[e.get("type")].model_validate(e) for e in entries], grant

    def opened(self, grant: Grant | None, session_id: str | None) -> None:
        """The open ended: bound to its session, or (no id: it failed) revoked."""
        if grant is None or self.host is None:
            return
        if session_id is None:
            self.host.revoke(grant)
        else:
            self.host.bind(grant, session_id)

    def reached(self, session_id: str) -> bool | None:
        """Whether the agent started the editor's server for this session (None: it was
        given none). Agents that drop a client's mcpServers (gemini-cli in a folder it does not
        trust) never do, without a word."""
        return self.host.reached(session_id) if self.host is not None else None

    def ended(self, session_id: str) -> None:
        if self.host is not None:
            self.host.revoke_session(session_id)

    async def close(self) -> None:
        if self.host is not None:
            await self.host.close()

    async def _tools_for(self, scope: Scope) -> list[Tool]:
        source = self.tools or ()
        found = source(scope.session_id or "", scope.cwd) if callable(source) else source
        if asyncio.iscoroutine(found):
            found = await found
        return tools_mod.keep_valid(list(found or []), f"MCP tools for {scope.cwd}")
