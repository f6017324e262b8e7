#!/usr/bin/env python3
"""The editor while an agent pipelines MCP tool calls: 2,000 ``read_buffer`` calls written at
once to the editor's MCP server (bench/agent.py ``mcppipe``), and Neovim probed meanwhile.

One headless Neovim with the plugin, ``editor_tools = "mcp"``, bench/agent.py as the agent.
A probe is ``nvim.eval("1")`` from this process, timed here, one after another. Baseline: the
same probes with the editor idle, in the same run, before each round. Each call of the
pipeline is one exec_lua on Neovim's main loop: what matters is how many the host lets queue
there at once (minime/mcp_server.py IN_FLIGHT), not the total.

Run it on the code before a change (a ``git archive`` of it with bench/ copied in) and after,
alternately, and compare the medians at similar load.

    .venv/bin/python bench/mcp_pipeline.py [CALLS] [ROUNDS] [LINES of the buffer read]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import AGENT, PYTHON, emit, lua_str, plugin_editor, quantile, read_json, wait_file
from editor_tools import EXTRA_INIT  # _G.bench_done counts the turns done

BENCH = "mcp_pipeline"
IDLE_PROBES = 200


def probe(nvim: Any) -> float:
    began = time.perf_counter()
    nvim.eval("1")
    return (time.perf_counter() - began) * 1e3


def wait_done(nvim: Any, before: int) -> None:
    deadline = time.monotonic() + 120
    while nvim.exec_lua("return _G.bench_done") <= before:
        if time.monotonic() > deadline:
            raise RuntimeError("the turn did not end")
        time.sleep(0.01)


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    lines = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "load")
    args = json.dumps({"path": "small.txt"})
    idle: list[float] = []
    busy: list[float] = []
    totals: list[float] = []
    with tempfile.TemporaryDirectory(prefix="minime-bench-pipe-") as tmp:
        root = Path(os.path.realpath(tmp))
        (root / "small.txt").write_text("".join(f"line {i}\n" for i in range(lines)))
        agent = f"{{ cmd = {{ {lua_str(PYTHON)}, {lua_str(AGENT)} }} }}"
        with plugin_editor(
            root, f"{{ agent = {agent}, editor_tools = 'mcp' }}", EXTRA_INIT
        ) as nvim:
            nvim.command(f"badd {root / 'small.txt'}")
            out = root / "out.json"
            warm = f"mcp read_buffer 1 0 {out} {args}"
            done = nvim.exec_lua("return _G.bench_done")
            nvim.exec_lua("require('minime').ask(...)", warm)
            wait_file(out)
            wait_done(nvim, done)
            for _ in range(rounds):
                idle += [probe(nvim) for _ in range(IDLE_PROBES)]
                out.unlink(missing_ok=True)
                done = nvim.exec_lua("return _G.bench_done")
                nvim.exec_lua(
                    "require('minime').ask(...)", f"mcppipe read_buffer {calls} {out} {args}"
                )
                while not out.exists():
                    busy.append(probe(nvim))
                wait_file(out)
                data = read_json(out)
                if data["answered"] != calls or data["failed"]:
                    raise RuntimeError(f"the pipeline failed: {data}")
                totals.append(data["ns"] / 1e6)
                wait_done(nvim, done)
            nvim.exec_lua("require('minime').stop()")
    base = {"baseline_of": "the same probe, editor idle"}
    for q, label in ((0.5, "p50"), (0.99, "p99")):
        value = quantile(busy, q)
        emit(BENCH, f"probe_{label}", value, "ms", baseline=quantile(idle, q), n=len(busy), **base)
    emit(BENCH, "probe_max", max(busy), "ms", baseline=max(idle), n=len(busy), **base)
    emit(
        BENCH, "pipeline_total", quantile(totals, 0.5), "ms", calls=calls, lines=lines, runs=totals
    )


if __name__ == "__main__":
    main()
