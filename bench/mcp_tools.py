#!/usr/bin/env python3
"""The editor tools over MCP next to the same tools over mm's client-tools extension, in one run.

One headless Neovim with the plugin; bench/agent.py is the agent. In one cwd it runs with
``editor_tools = "client"`` (the tools come in ``initialize``'s ``_meta``, each call an ACP
extension request: agent -> library -> host -> Lua -> back); in another with
``editor_tools = "mcp"`` (the agent spawns the session's MCP server, the bridge, and each call
is a ``tools/call`` on its stdin: agent -> bridge -> Unix socket -> host -> Lua -> back). Both
call ``read_buffer`` on the same small buffer, timed on the agent's clock, in alternating
rounds so that a change of load hits both alike.

Bridge start: the agent times each session's MCP server from its spawn to the answer to its
``tools/list`` (the time an agent waits for it before the session opens), once per session
over several cwds; next to it, the bare start of the same interpreter (``python -I -c pass``).

Targets: MCP round trip p50 <= 2 x client p50 + 1 ms; bridge start < 300 ms (p50).

    .venv/bin/python bench/mcp_tools.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import AGENT, PYTHON, emit, lua_str, plugin_editor, quantile, read_json, wait_file
from editor_tools import EXTRA_INIT  # _G.bench_done counts the turns done

BENCH = "mcp_tools"
ROUNDS = 4
CALLS = 150
WARMUP = 20
SESSIONS = 8
TARGET_START_MS = 300.0


def ask(nvim: Any, cwd: Path, prompt: str, out: Path) -> dict[str, Any]:
    """One turn in ``cwd`` (its own session); the agent's timings."""
    out.unlink(missing_ok=True)
    done = nvim.exec_lua("return _G.bench_done")
    nvim.command(f"cd {cwd}")
    nvim.exec_lua("require('minime').ask(...)", prompt)
    wait_file(out)
    deadline = time.monotonic() + 30
    while nvim.exec_lua("return _G.bench_done") <= done:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the turn in {cwd} did not end")
        time.sleep(0.01)
    data = read_json(out)
    last = data["last"]
    if not isinstance(last, dict) or last.get("isError"):
        raise RuntimeError(f"the tool failed in {cwd}: {last!r}")
    return data


def project(root: Path, name: str) -> Path:
    cwd = root / name
    cwd.mkdir()
    (cwd / "small.txt").write_text("".join(f"line {i}\n" for i in range(10)))
    return cwd


def python_start_ms(n: int = 8) -> list[float]:
    times = []
    for _ in range(n):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "pass"], check=True)
        times.append((time.perf_counter() - began) * 1e3)
    return times


def main() -> None:
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "load")
    args = json.dumps({"path": "small.txt"})
    with tempfile.TemporaryDirectory(prefix="minime-bench-mcp-") as tmp:
        root = Path(os.path.realpath(tmp))
        client_cwd, mcp_cwd = project(root, "client"), project(root, "mcp")
        agent = f"{{ cmd = {{ {lua_str(PYTHON)}, {lua_str(AGENT)} }} }}"
        opts = f"{{ agent = {agent}, editor_tools = 'client' }}"
        options = "require('minime.config').options"
        client: list[float] = []
        mcp: list[float] = []
        starts: list[float] = []
        with plugin_editor(root, opts, EXTRA_INIT) as nvim:
            for cwd in (client_cwd, mcp_cwd):
                nvim.command(f"badd {cwd / 'small.txt'}")
            for turn in range(ROUNDS):
                nvim.exec_lua(f"{options}.editor_tools = 'client'")
                data = ask(
                    nvim,
                    client_cwd,
                    f"tool read_buffer {CALLS} {WARMUP} {root / 'c.json'} {args}",
                    root / "c.json",
                )
                client.extend(v / 1e6 for v in data["ns"])
                nvim.exec_lua(f"{options}.editor_tools = 'mcp'")
                prompt = f"mcp read_buffer {CALLS} {WARMUP} {root / 'm.json'} {args}"
                data = ask(nvim, mcp_cwd, prompt, root / "m.json")
                mcp.extend(v / 1e6 for v in data["ns"])
                if turn == 0:
                    starts.append(data["start_ns"] / 1e6)
            for i in range(SESSIONS - 1):  # each new cwd: a new session, a new bridge
                cwd = project(root, f"s{i}")
                nvim.command(f"badd {cwd / 'small.txt'}")
                data = ask(
                    nvim, cwd, f"mcp read_buffer 1 0 {root / 's.json'} {args}", root / "s.json"
                )
                starts.append(data["start_ns"] / 1e6)
            nvim.exec_lua("require('minime').stop()")
    c50, m50 = quantile(client, 0.5), quantile(mcp, 0.5)
    emit(BENCH, "client_roundtrip_p50", c50, "ms", n=len(client))
    emit(BENCH, "client_roundtrip_p99", quantile(client, 0.99), "ms", n=len(client))
    target = 2 * c50 + 1
    emit(
        BENCH,
        "mcp_roundtrip_p50",
        m50,
        "ms",
        baseline=c50,
        baseline_of="client tools p50",
        target=f"<= 2 x client p50 + 1 ms = {target:.3f} ms",
        met=m50 <= target,
        n=len(mcp),
    )
    emit(
        BENCH,
        "mcp_roundtrip_p99",
        quantile(mcp, 0.99),
        "ms",
        baseline=quantile(client, 0.99),
        baseline_of="client tools p99",
        n=len(mcp),
    )
    bare = python_start_ms()
    s50 = quantile(starts, 0.5)
    emit(
        BENCH,
        "bridge_start_p50",
        s50,
        "ms",
        baseline=quantile(bare, 0.5),
        baseline_of="python -I -c pass",
        target=f"< {TARGET_START_MS:g} ms",
        met=s50 < TARGET_START_MS,
        n=len(starts),
    )
    emit(BENCH, "bridge_start_max", max(starts), "ms", n=len(starts))


if __name__ == "__main__":
    main()
