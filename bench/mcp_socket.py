#!/usr/bin/env python3
"""What peers of the editor's MCP socket can make the host hold (minime/mcp_host.py).

The host runs in a process of its own (this file with ``host``: an McpHost serving one tool,
``size``, that answers the length of its argument), and its VmRSS is read from /proc:

- ``flood``: 60 connections that never send a token, each writing junk (no newline) for as
  long as the host takes it, up to 16 MiB each: the host's RSS at its peak, and once the
  peers have closed (given back?);
- ``lines``: one session's bridges (as many as it may open) each sending one 15 MiB
  ``tools/call``: peak, and after.

Baseline: the host's RSS once started, in the same run. Run it on the code before a change
(a ``git archive`` of it with this file copied in) and after, alternately.

    .venv/bin/python bench/mcp_socket.py
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time

from _common import PYTHON, REPO, emit

BENCH = "mcp_socket"
PEERS = 60
JUNK = 16 << 20
LINE = 15 << 20
MIB = 1 << 20


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


async def host() -> None:
    """The host process: prints its socket path and a session's token, serves until stdin ends."""
    import minime
    from minime.mcp_host import McpHost

    async def tools_for(_scope: object) -> list[minime.Tool]:
        return [minime.Tool("size", lambda r: str(len(r.arguments.get("text", ""))))]

    served = McpHost(tools_for)
    await served.start()
    print(json.dumps({"path": served.path, "token": served.grant(os.getcwd()).token}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await served.close()


def settle(pid: int, seconds: float = 3.0) -> float:
    """The host's RSS once it stops moving (or after ``seconds``)."""
    deadline = time.monotonic() + seconds
    last = rss_mib(pid)
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = rss_mib(pid)
        if abs(now - last) < 0.05:
            return now
        last = now
    return last


def flood(path: str, pid: int) -> tuple[float, float, int]:
    peers, peak, sent = [], 0.0, 0
    chunk = b"x" * (256 * 1024)
    for _ in range(PEERS):
        peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        peer.connect(path)
        peer.setblocking(False)
        peers.append(peer)
    deadline = time.monotonic() + 30
    pending = {peer: 0 for peer in peers}
    while pending and time.monotonic() < deadline:
        for peer in list(pending):
            try:
                n = peer.send(chunk)
                pending[peer] += n
                sent += n
                if pending[peer] >= JUNK:
                    del pending[peer]
            except BlockingIOError:
                pass
            except OSError:  # the host closed it
                del pending[peer]
        peak = max(peak, rss_mib(pid))
        if pending and all_blocked(pending):
            time.sleep(0.05)
            if all_blocked(pending):
                break
    peak = max(peak, settle(pid, 2.0))
    for peer in peers:
        peer.close()
    return peak, settle(pid), sent


def all_blocked(pending: dict[socket.socket, int]) -> bool:
    for peer in pending:
        try:
            peer.send(b"x")
            return False
        except BlockingIOError:
            continue
        except OSError:
            return False
    return True


def lines(path: str, token: str, pid: int, count: int) -> tuple[float, float, list[str]]:
    text = "y" * LINE
    request = {"name": "size", "arguments": {"text": text}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": request})
    peers, answers, peak = [], [], 0.0
    for _ in range(count):
        peer = socket.socket(socket.AF_UNIX)
        peer.connect(path)
        peer.sendall(token.encode() + b"\n")
        peers.append((peer, peer.makefile("rb")))
    for peer, reader in peers:
        if reader.readline() != b"ok\n":
            raise RuntimeError("the host refused the bridge")
        peer.sendall(body.encode() + b"\n")
        peak = max(peak, rss_mib(pid))
    for _peer, reader in peers:
        answers.append(json.loads(reader.readline())["result"]["content"][0]["text"])
        peak = max(peak, rss_mib(pid))
    for peer, reader in peers:
        reader.close()
        peer.close()
    return peak, settle(pid), answers


def main() -> None:
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "load")
    proc = subprocess.Popen(
        [PYTHON, __file__, "host"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO / "rplugin" / "python3")},
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        where = json.loads(proc.stdout.readline())
        started = settle(proc.pid)
        emit(BENCH, "host_rss_started", started, "MiB")
        peak, after, sent = flood(where["path"], proc.pid)
        extra = {"baseline": started, "baseline_of": "host RSS once started"}
        emit(BENCH, "flood_rss_peak", peak, "MiB", peers=PEERS, accepted_mib=sent / MIB, **extra)
        emit(BENCH, "flood_rss_after", after, "MiB", **extra)
        from minime import mcp_host

        count = getattr(mcp_host, "MAX_PER_SESSION", 4)
        peak, after, answers = lines(where["path"], where["token"], proc.pid, count)
        emit(BENCH, "lines_rss_peak", peak, "MiB", bridges=count, line_mib=LINE / MIB, **extra)
        emit(BENCH, "lines_rss_after", after, "MiB", answers=answers, **extra)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(30)


if __name__ == "__main__":
    if sys.argv[1:] == ["host"]:
        asyncio.run(host())
    else:
        main()
