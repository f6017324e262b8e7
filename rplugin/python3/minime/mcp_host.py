"""The host's end of the editor's MCP server: a Unix socket the bridges (minime/mcp.py)
connect to, and the token of each session that may.

Security: the socket lives in a fresh directory of mode 0700 (under ``$XDG_RUNTIME_DIR``,
else the temporary directory), so only this user can reach it. A bridge presents its
session's random token first; an unknown token, or one whose session has ended, is refused
and the connection closed. A token serves its own session's cwd and nothing else. Revoking it
(the session ended) closes its connections; closing the host removes the directory, and every
bridge, seeing its socket close, exits.

Bounds, so that no peer (this user's other programs included) can make the host hold much:
before its token a connection may send one line of at most TOKEN_BYTES within TOKEN_TIMEOUT,
and at most MAX_UNAUTHENTICATED connections wait for theirs at once; a session has at most
MAX_PER_SESSION connections; a message is at most MAX_LINE bytes (longer: answered, then the
connection is closed). What a connection has sent and the host has not read is at most about
READ_LIMIT bytes: past that the socket is not read (the peer's writes wait).
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
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from . import mcp as bridge
from .mcp_server import McpSession, Scope
from .tools import Tool

log = logging.getLogger("minime")

SERVER_NAME = "minime"
MAX_SOCKET_PATH = 104  # sun_path is 108 bytes on Linux, 104 on the BSDs
MAX_LINE = 16 * 1024 * 1024  # a tool call's arguments; answers are capped at 8 MiB (tools.py)
# The bridge writes its token (43 characters) the moment it has connected: a peer that has not
# sent a line that short within a few seconds has no token to give.
TOKEN_TIMEOUT = 3.0
TOKEN_BYTES = 128
# Connections still owing their token. A bridge owes it for a moment only: agents start one
# bridge per session, so 16 at once is a burst no real start-up reaches; a 17th is closed.
MAX_UNAUTHENTICATED = 16
# A session's live connections: one bridge, and a few while an agent restarts its server (the
# old one's end may be seen after the new one's start).
MAX_PER_SESSION = 4
# The stream's buffer: what the host holds of a connection before it reads it.
READ_LIMIT = 64 * 1024
CHUNK = 64 * 1024


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


class McpHost:
    """``tools_for(scope)`` gives the tools of a session (its id may still be unknown: agents
    start their MCP servers while they open the session, before they answer)."""

    def __init__(self, tools_for: Callable[[Scope], Awaitable[list[Tool]]]) -> None:
        self._tools_for = tools_for
        self._grants: dict[str, Grant] = {}
        self._server: asyncio.AbstractServer | None = None
        self._sessions: set[McpSession] = set()
        self._waiting: dict[asyncio.StreamWriter, None] = {}  # owe their token, oldest first
        self.directory = ""
        self.path = ""

    async def start(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="minime-mcp-", dir=_socket_base())  # mode 0700
        os.chmod(self.directory, 0o700)
        self.path = os.path.join(self.directory, "socket")
        self._server = await asyncio.start_unix_server(self._serve, self.path, limit=READ_LIMIT)
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
            grant = await self._admit(reader, writer)
            if grant is not None:
                await self._relay(grant, reader, writer)
        except (TimeoutError, ConnectionError, ValueError, asyncio.IncompleteReadError) as exc:
            log.info("an MCP connection ended: %s", exc or type(exc).__name__)
        finally:
            if grant is not None:
                grant.connections.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _admit(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> Grant | None:
        """The grant whose token the peer sent first (and "ok" said), or None (refused)."""
        if len(self._waiting) >= MAX_UNAUTHENTICATED:
            # The one that has waited longest goes: a crowd of silent peers cannot keep a
            # bridge out, which sends its token the moment it has connected.
            oldest = next(iter(self._waiting))
            del self._waiting[oldest]
            log.warning("closed an MCP connection: %d others owe their token", MAX_UNAUTHENTICATED)
            _refuse(oldest, "too many connections waiting")
        self._waiting[writer] = None
        try:
            token = await asyncio.wait_for(reader.readuntil(b"\n"), TOKEN_TIMEOUT)
        except (TimeoutError, asyncio.LimitOverrunError, asyncio.IncompleteReadError):
            token = b""
        finally:
            self._waiting.pop(writer, None)
        if writer.is_closing():
            return None  # made room for a newer one (said above)
        grant = None
        if 0 < len(token) <= TOKEN_BYTES:
            grant = self._grants.get(token.rstrip(b"\n").decode(errors="replace"))
        if grant is None:
            log.warning("refused an MCP connection: unknown or ended session token")
            _refuse(writer, "the token is not that of an open session")
            return None
        if len(grant.connections) >= MAX_PER_SESSION:
            log.warning("refused an MCP connection: its session has %d", MAX_PER_SESSION)
            _refuse(writer, "this session has too many connections")
            return None
        writer.write(bridge.ACCEPTED)
        grant.connections.add(writer)
        return grant

    async def _relay(
        self, grant: Grant, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        async def send(line: bytes) -> None:
            if not writer.is_closing():
                writer.write(line + b"\n")
                await writer.drain()  # the agent reads slowly: its answers wait, not pile up

        session = McpSession(grant.scope, self._tools_for, send)
        self._sessions.add(session)
        try:
            async for line in _lines(reader):
                if grant.token not in self._grants:
                    break
                if line is None:
                    await send(session.too_long(MAX_LINE))
                    break
                if line and not line.isspace():
                    await session.receive(line)
                    del line  # a large one is not kept while the next is awaited
                    await session.room()
        finally:
            self._sessions.discard(session)
            session.cancel_all()


def _refuse(writer: asyncio.StreamWriter, why: str) -> None:
    """Say why (the bridge prints it) and close."""
    if not writer.is_closing():
        writer.write(f"refused: {why}\n".encode())
    writer.close()


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes | None]:
    """The connection's lines without their newline; None for one longer than MAX_LINE (then
    nothing more). Read a chunk at a time: the stream's own readline would need a buffer as
    large as the longest line for every connection, authenticated or not."""
    partial = bytearray()
    while chunk := await reader.read(CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if len(partial) + end - start > MAX_LINE:
                yield None
                return
            if partial:
                partial += chunk[start:end]
                yield bytes(partial)
                partial = bytearray()  # not clear(): its buffer, as large as the line, goes
            else:
                yield chunk[start:end]
            start = end + 1
        partial += chunk[start:]
        if len(partial) > MAX_LINE:
            yield None
            return
