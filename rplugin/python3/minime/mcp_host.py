"""The host's end of the editor's MCP server: a Unix socket the bridges (minime/mcp.py)
connect to, and the token of each session that may.

Security: the socket lives in a fresh directory of mode 0700 (under ``$XDG_RUNTIME_DIR``,
else the temporary directory), so only this user can reach it. A bridge presents its
session's random token first; an unknown token, or one whose session has ended, is refused
and the connection closed. A token serves its own session's cwd and nothing else. Revoking it
(the session ended) closes its connections; closing the host removes the directory, and every
bridge, seeing its socket close, exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any

from . import mcp as bridge
from .mcp_server import McpSession, Scope
from .tools import Tool

log = logging.getLogger("minime")

SERVER_NAME = "minime"
AUTH_TIMEOUT = 10.0
MAX_SOCKET_PATH = 104  # sun_path is 108 bytes on Linux, 104 on the BSDs
MAX_LINE = 16 * 1024 * 1024  # a tool call's arguments; answers are capped at 8 MiB (tools.py)


def _socket_base() -> str:
    """``$XDG_RUNTIME_DIR`` (this user's own), else the temporary directory, else /tmp: the
    first in which the socket's path fits a Unix socket address (about 107 bytes)."""
    for base in (os.environ.get("XDG_RUNTIME_DIR"), tempfile.gettempdir(), "/tmp"):
        if base and os.path.isdir(base) and len(os.fsencode(base)) + 32 <= MAX_SOCKET_PATH:
            return base
    return "/tmp"


class Grant:
    """One session's right to the tools: its token, its scope, its live connections."""

    def __init__(self, cwd: str) -> None:
        self.token = secrets.token_urlsafe(32)
        self.scope = Scope(cwd=cwd)
        self.connections: set[asyncio.StreamWriter] = set()
        self.reached = False  # a bridge of the session presented the token (it was started)


class McpHost:
    """``tools_for(scope)`` gives the tools of a session (its id may still be unknown: agents
    start their MCP servers while they open the session, before they answer)."""

    def __init__(self, tools_for: Callable[[Scope], Awaitable[list[Tool]]]) -> None:
        self._tools_for = tools_for
        self._grants: dict[str, Grant] = {}
        self._server: asyncio.AbstractServer | None = None
        self._sessions: set[McpSession] = set()
        self.directory = ""
        self.path = ""

    async def start(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="minime-mcp-", dir=_socket_base())  # mode 0700
        os.chmod(self.directory, 0o700)
        self.path = os.path.join(self.directory, "socket")
        self._server = await asyncio.start_unix_server(self._serve, self.path, limit=MAX_LINE)
        os.chmod(self.path, 0o600)

    def grant(self, cwd: str) -> Grant:
        grant = Grant(cwd)
        self._grants[grant.token] = grant
        return grant

    def bind(self, grant: Grant, session_id: str) -> None:
        grant.scope.session_id = session_id

    def revoke(self, grant: Grant) -> None:
        """The grant's session has ended (or never opened): its token is refused from now on
        and its connections are closed."""
        self._grants.pop(grant.token, None)
        for writer in list(grant.connections):
            writer.close()
        grant.connections.clear()

    def reached(self, session_id: str) -> bool | None:
        """Whether the agent started the session's server (a bridge came with its token);
        None: the session has no grant here."""
        grants = [g for g in self._grants.values() if g.scope.session_id == session_id]
        return any(g.reached for g in grants) if grants else None

    def revoke_session(self, session_id: str) -> None:
        for grant in [g for g in self._grants.values() if g.scope.session_id == session_id]:
            self.revoke(grant)

    def entry(self, grant: Grant) -> dict[str, Any]:
        """The session's ``mcpServers`` entry (ACP's stdio shape): this interpreter runs the
        bridge file itself, isolated (-I) and without site (-S: it needs only the standard
        library), so no package path need be set for it and it starts sooner."""
        return {
            "name": SERVER_NAME,
            "command": sys.executable,
            "args": ["-I", "-S", os.path.abspath(bridge.__file__)],
            "env": [
                {"name": bridge.SOCKET_ENV, "value": self.path},
                {"name": bridge.TOKEN_ENV, "value": grant.token},
            ],
        }

    async def close(self) -> None:
        for grant in list(self._grants.values()):
            self.revoke(grant)
        for session in list(self._sessions):
            session.cancel_all()
        if self._server is not None:
            self._server.close()
            self._server = None
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        grant = None
        try:
            token = await asyncio.wait_for(reader.readline(), AUTH_TIMEOUT)
            grant = self._grants.get(token.rstrip(b"\n").decode(errors="replace"))
            if grant is None:
                log.warning("refused an MCP connection: unknown or ended session token")
                writer.write(b"refused: the token is not that of an open session\n")
                return
            writer.write(bridge.ACCEPTED)
            grant.reached = True
            grant.connections.add(writer)
            await self._relay(grant, reader, writer)
        except (TimeoutError, ConnectionError, ValueError, asyncio.IncompleteReadError) as exc:
            log.info("an MCP connection ended: %s", exc or type(exc).__name__)
        finally:
            if grant is not None:
                grant.connections.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _relay(
        self, grant: Grant, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        def send(line: bytes) -> None:
            if not writer.is_closing():
                writer.write(line + b"\n")

        session = McpSession(grant.scope, self._tools_for, send)
        self._sessions.add(session)
        try:
            while grant.token in self._grants and (line := await reader.readline()):
                if line.strip():
                    session.receive(line)
        finally:
            self._sessions.discard(session)
            session.cancel_all()
