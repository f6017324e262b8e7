#!/usr/bin/env python3
"""Each editor tool end to end through the plugin, next to its parts measured alone.

For each scenario (open_buffers at 10/100/1000 buffers, read_buffer at 1k/100k lines,
diagnostics at 10/1k/10k items), in one run:

* ``plugin``: the tool call end to end, timed on the agent's clock. bench/agent.py (the SDK's
  agent side, discovery ``request`` like mm's, no permission asked, as with ``yolo: true``) is
  the plugin's agent (``setup{ agent = { cmd = ... }, discovery = "request" }``); prompted, it
  calls the tool's method N times one after another: agent -> library -> host -> one
  ``exec_lua`` in Neovim -> back.
* ``raw``: the Lua read alone, ``exec_lua("return require('minime.tools').call(...)", name,
  args, ctx)`` from a pynvim client (this process), same ctx as the host sends; measured in
  halves alternating with the plugin's, so a change of load hits both alike.
* ``bare``: the bare SDK round trip (the same agent, an SDK-only client whose ext_method
  returns the very answer the plugin gave in that scenario, so the payload size is the same).

Targets: the cost grows linearly (the cost of one more item does not grow with the size: the
slope between the two larger sizes is at most 2x the slope between the two smaller ones);
open_buffers at 100 buffers under 1.5 x (bare + raw) at p50; open_buffers at 1000 buffers
under 30 ms. The tools' default limits apply (max_lines 2000, max_bytes 100000): read_buffer
and diagnostics answers are cut at those bounds, and the answer size is printed.

    .venv/bin/python bench/editor_tools.py [LABEL_PREFIX ...]   # e.g. open_buffers_1000
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import (
    BareSession,
    bench_agent_opts,
    emit,
    plugin_editor,
    quantile,
    read_json,
    turn_ended,
    wait_file,
)

BENCH = "editor_tools"
TARGET_RATIO_100 = 1.5
TARGET_1000_MS = 10.0
LINEAR_SLOPE_RATIO = 2.0
ROUNDS = 2

EXTRA_INIT = r"""
_G.bench_done = 0
vim.api.nvim_create_autocmd('User', { pattern = 'MiniMeTurnDone', callback = function()
  _G.bench_done = _G.bench_done + 1
end })
_G.bench_bufs = {}
function _G.bench_clear()
  for _, b in ipairs(_G.bench_bufs) do
    if vim.api.nvim_buf_is_valid(b) then pcall(vim.api.nvim_buf_delete, b, { force = true }) end
  end
  _G.bench_bufs = {}
end
function _G.bench_open(paths)
  for _, p in ipairs(paths) do
    local b = vim.fn.bufadd(p)
    vim.bo[b].buflisted = true
    vim.fn.bufload(b)
    table.insert(_G.bench_bufs, b)
  end
  return #_G.bench_bufs
end
function _G.bench_diagnostics(path, n)
  local b = vim.fn.bufadd(path)
  vim.bo[b].buflisted = true
  vim.fn.bufload(b)
  table.insert(_G.bench_bufs, b)
  local ns = vim.api.nvim_create_namespace('minime.bench')
  local items = {}
  for i = 0, n - 1 do
    items[#items + 1] = { lnum = i, col = 0, end_lnum = i, end_col = 4,
      severity = (i % 4) + 1, source = 'bench', code = 'B' .. (i % 97),
      message = 'bench diagnostic number ' .. i .. ': something is not quite right here' }
  end
  vim.diagnostic.set(ns, b, items)
  return #vim.diagnostic.get(b)
end
"""


@dataclass
class Scenario:
    tool: str
    size: int
    unit: str
    n: int
    warmup: int
    args: dict[str, Any] = field(default_factory=dict)
    plugin: list[float] = field(default_factory=list)
    raw: list[float] = field(default_factory=list)
    bare: list[float] = field(default_factory=list)
    raw_cpu: list[float] = field(default_factory=list)  # Neovim main-thread CPU ms per call
    answer: Any = None

    @property
    def label(self) -> str:
        return f"{self.tool}_{self.size}_{self.unit}"

    def p(self, which: str, q: float) -> float:
        return quantile(getattr(self, which), q)


SCENARIOS = [
    Scenario("open_buffers", 10, "buffers", 200, 10),
    Scenario("open_buffers", 100, "buffers", 200, 10),
    Scenario("open_buffers", 1000, "buffers", 60, 5),
    Scenario("read_buffer", 1000, "lines", 200, 10, {"path": "big.txt"}),
    Scenario("read_buffer", 100000, "lines", 100, 5, {"path": "big.txt"}),
    Scenario("diagnostics", 10, "items", 200, 10),
    Scenario("diagnostics", 1000, "items", 100, 5),
    Scenario("diagnostics", 10000, "items", 30, 3),
]


def prepare_files(work: Path, size: int) -> list[str]:
    """The files of the open_buffers scenario of ``size`` buffers (written again if there)."""
    folder = work / f"ob{size}"
    folder.mkdir(exist_ok=True)
    paths = []
    for i in range(size):
        path = folder / f"file{i:04d}.py"
        path.write_text("".join(f"line {j} of file {i}\n" for j in range(20)))
        paths.append(str(path))
    return paths


def prepare(nvim: Any, work: Path, sc: Scenario) -> None:
    """Fresh editor state for one scenario: only its buffers are open."""
    nvim.exec_lua("_G.bench_clear()")
    if sc.tool == "open_buffers":
        paths = prepare_files(work, sc.size)
        count = nvim.exec_lua("return _G.bench_open(...)", paths)
        assert count == sc.size, count
    elif sc.tool == "read_buffer":
        path = work / "big.txt"
        with path.open("w") as f:
            for i in range(sc.size):
                f.write(f"line {i:6d}: the quick brown fox jumps over the lazy dog\n")
        nvim.exec_lua("return _G.bench_open(...)", [str(path)])
    else:
        path = work / f"diag{sc.size}.txt"
        path.write_text("".join(f"line {i}\n" for i in range(sc.size)))
        count = nvim.exec_lua("return _G.bench_diagnostics(...)", str(path), sc.size)
        assert count == sc.size, count


def run_plugin(nvim: Any, work: Path, sc: Scenario, turn: int, n: int) -> None:
    out = work / f"{sc.label}-{turn}.json"
    out.unlink(missing_ok=True)
    prompt = f"tool {sc.tool} {n} {sc.warmup} {out} {json.dumps(sc.args)}"
    nvim.exec_lua("require('minime').ask(...)", prompt)
    wait_file(out, ended=turn_ended(nvim, turn))
    deadline = time.monotonic() + 30
    while nvim.exec_lua("return _G.bench_done") < turn:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{sc.label}: the turn did not end")
        time.sleep(0.02)
    data = read_json(out)
    sc.plugin.extend(v / 1e6 for v in data["ns"])
    sc.answer = data["last"]
    if not isinstance(sc.answer, dict) or sc.answer.get("isError"):
        raise RuntimeError(f"{sc.label}: the tool failed: {sc.answer!r}")


def main_thread_cpu_ns(nvim: Any) -> int:
    """Time Neovim's main thread (where Lua runs) spent on a CPU: /proc/PID/schedstat."""
    pid = nvim.call("getpid")
    with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def run_raw(nvim: Any, work: Path, sc: Scenario, n: int) -> None:
    ctx = nvim.exec_lua("return require('minime.config').tool_ctx(...)", str(work))
    ctx["cwd"] = str(work)
    code = "return require('minime.tools').call(...)"
    clock = time.perf_counter
    for _ in range(sc.warmup):
        nvim.exec_lua(code, sc.tool, sc.args, ctx)
    cpu0 = main_thread_cpu_ns(nvim)
    for _ in range(n):
        t0 = clock()
        answer = nvim.exec_lua(code, sc.tool, sc.args, ctx)
        sc.raw.append((clock() - t0) * 1e3)
    # On a shared machine the wall time swings 2x with the load; CPU time hardly does.
    sc.raw_cpu.append((main_thread_cpu_ns(nvim) - cpu0) / n / 1e6)
    if not answer.get("ok"):
        raise RuntimeError(f"{sc.label}: raw call failed: {answer!r}")


async def run_bare(work: Path) -> None:
    current: dict[str, Any] = {}
    bare = BareSession(lambda method, params: current["answer"])
    try:
        await bare.start(str(work))
        for sc in SCENARIOS:
            current["answer"] = sc.answer
            out = work / f"bare-{sc.label}.json"
            await bare.prompt(f"rt _minime.nvim/tools/{sc.tool} {sc.n} {sc.warmup} {out} {{}}")
            data = read_json(out)
            sc.bare = [v / 1e6 for v in data["ns"]]
    finally:
        await bare.close()


def answer_bytes(sc: Scenario) -> int:
    return len(sc.answer["content"][0]["text"].encode())


def report() -> None:
    for sc in SCENARIOS:
        emit(
            BENCH,
            f"{sc.label}_p50",
            sc.p("plugin", 0.5),
            "ms",
            p99=sc.p("plugin", 0.99),
            raw_p50=sc.p("raw", 0.5),
            raw_p99=sc.p("raw", 0.99),
            raw_cpu_ms=quantile(sc.raw_cpu, 0.5),
            bare_p50=sc.p("bare", 0.5),
            bare_p99=sc.p("bare", 0.99),
            baseline=sc.p("raw", 0.5) + sc.p("bare", 0.5),
            baseline_of="raw exec_lua read + bare SDK round trip (p50s)",
            answer_bytes=answer_bytes(sc),
            n=len(sc.plugin),
        )
    by_tool: dict[str, list[Scenario]] = {}
    for sc in SCENARIOS:
        by_tool.setdefault(sc.tool, []).append(sc)
    for tool, group in by_tool.items():
        slopes = []
        for a, b in itertools.pairwise(group):
            slopes.append((b.p("plugin", 0.5) - a.p("plugin", 0.5)) / (b.size - a.size) * 1e3)
        fields: dict[str, Any] = {
            "sizes": [sc.size for sc in group],
            "p50_ms": [round(sc.p("plugin", 0.5), 3) for sc in group],
            "raw_p50_ms": [round(sc.p("raw", 0.5), 3) for sc in group],
        }
        if len(slopes) >= 2 and slopes[0] > 0:
            ratio = slopes[-1] / slopes[0]
            fields["target"] = f"slope ratio <= {LINEAR_SLOPE_RATIO}"
            fields["met"] = ratio <= LINEAR_SLOPE_RATIO
            fields["slope_ratio"] = round(ratio, 3)
        emit(BENCH, f"{tool}_slope_per_item", [round(s, 3) for s in slopes], "us/item", **fields)
    sc100 = next((s for s in SCENARIOS if s.tool == "open_buffers" and s.size == 100), None)
    if sc100 is not None:
        report_open_buffers_100(sc100)
    sc1000 = next((s for s in SCENARIOS if s.tool == "open_buffers" and s.size == 1000), None)
    if sc1000 is not None:
        report_open_buffers_1000(sc1000)


def report_open_buffers_100(sc100: Scenario) -> None:
    parts = sc100.p("raw", 0.5) + sc100.p("bare", 0.5)
    ratio = sc100.p("plugin", 0.5) / parts
    emit(
        BENCH,
        "open_buffers_100_ratio_to_parts",
        ratio,
        "x",
        value_p50_ms=sc100.p("plugin", 0.5),
        baseline=parts,
        baseline_of="raw exec_lua read + bare SDK round trip (p50s)",
        target=f"< {TARGET_RATIO_100}",
        met=ratio < TARGET_RATIO_100,
    )


def report_open_buffers_1000(sc1000: Scenario) -> None:
    p50, p99 = sc1000.p("plugin", 0.5), sc1000.p("plugin", 0.99)
    emit(
        BENCH,
        "open_buffers_1000_p50",
        p50,
        "ms",
        p99=p99,
        target=f"< {TARGET_1000_MS}",
        met=p50 < TARGET_1000_MS,
        met_p99=p99 < TARGET_1000_MS,
    )


def first_ask(nvim: Any) -> None:
    """The first ask (the host, the agent, its session started), ended (EXTRA_INIT counts)."""
    nvim.exec_lua("require('minime').ask('say warm up')")
    deadline = time.monotonic() + 60
    while nvim.exec_lua("return _G.bench_done") < 1:
        if time.monotonic() > deadline:
            raise RuntimeError("the first ask did not end")
        time.sleep(0.05)


def main() -> None:
    # Optional arguments keep only the scenarios whose label starts with one of them.
    if sys.argv[1:]:
        SCENARIOS[:] = [s for s in SCENARIOS if s.label.startswith(tuple(sys.argv[1:]))]
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "procs")
    with tempfile.TemporaryDirectory(prefix="minime-bench-tools-") as tmp:
        work = Path(os.path.realpath(tmp))
        with plugin_editor(work, bench_agent_opts("request"), EXTRA_INIT) as nvim:
            first_ask(nvim)
            turn = 1
            for sc in SCENARIOS:
                prepare(nvim, work, sc)
                # Alternating halves, so a change of load on the machine hits both alike.
                for half in (sc.n // ROUNDS,) * ROUNDS:
                    turn += 1
                    run_plugin(nvim, work, sc, turn, half)
                    run_raw(nvim, work, sc, half)
        asyncio.run(run_bare(work))
    report()


if __name__ == "__main__":
    main()
