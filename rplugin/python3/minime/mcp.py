"""The editor's MCP server as an agent spawns it: ``python -m minime.mcp`` (or this file run
as a script), one per session, named in that session's ``mcpServers`` entry.

It is a relay, not a server: it connects to the running host over the Unix socket named by
``$MINIME_MCP_SOCKET`` (in a directory only this user can enter), presents the session's
token (``$MINIME_MCP_TOKEN``), and then copies MCP's JSON lines both ways; the host answers
them (minime/mcp_server.py) for that session's cwd alone. Standard library only, so that it
starts in tens of milliseconds: the official MCP SDK takes over a second to import, and the
agent waits for every MCP server before its session opens. It exits as soon as either side
ends: the host gone (its socket closed), or the agent gone (its stdin closed).
"""

from __future__ import annotations

# The C modules under `socket` and `threading`: `socket` itself imports enum, selectors and
# collections, which took 55 ms of a bridge start of about 100 ms on the 2-core machine.
import _socket
import _thread
import os
import sys

SOCKET_ENV = "MINIME_MCP_SOCKET"
TOKEN_ENV = "MINIME_MCP_TOKEN"
ACCEPTED = b"ok\n"
CHUNK = 1 << 16


def _fail(message: str) -> int:
    sys.stderr.write(f"minime.mcp: {message}\n")
    sys.stderr.flush()
    return 1


def _read_line(conn: _socket.socket) -> bytes:
    """The host's one-line answer to the token, read byte by byte: nothing after it is taken
    from the socket before the relay starts."""
    line = bytearray()
    while not line.endswith(b"\n") and len(line) < 4096:
        byte = conn.recv(1)
        if not byte:
            break
        line += byte
    return bytes(line)


def _stdin_to_socket(conn: _socket.socket) -> None:
    try:
        while chunk := os.read(0, CHUNK):
            conn.sendall(chunk)
    except OSError:
        pass
    os._exit(0)  # the agent closed our stdin (or the host went): nothing more to relay


def main() -> int:
    path = os.environ.get(SOCKET_ENV)
    token = os.environ.get(TOKEN_ENV)
    if not path or not token:
        return _fail(f"${SOCKET_ENV} and ${TOKEN_ENV} must be set (the editor sets them)")
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.connect(path)
        conn.sendall(token.encode() + b"\n")
        answer = _read_line(conn)
    except OSError as exc:
        return _fail(f"cannot reach the editor at {path}: {exc.strerror or exc}")
    if answer != ACCEPTED:
        why = answer.decode(errors="replace").strip() or "the editor closed the connection"
        return _fail(why)
    _thread.start_new_thread(_stdin_to_socket, (conn,))
    try:
        while chunk := conn.recv(CHUNK):
            view = memoryview(chunk)
            while view:
                view = view[os.write(1, view) :]
    except OSError:
        pass
    return 0  # the host closed the socket: the editor, or this session, is gone


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # without waiting on the stdin thread's blocking read
