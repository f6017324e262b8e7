#!/usr/bin/env python3
"""A client-tool call inside a real turn, as mm makes it, next to the raw Lua read.

bench/editor_tools.py times a tool call from an agent that sends no session updates. mm sends,
around each call, the ``tool_call`` update (pending), a ``tool_call_update`` (in_progress),
then the request, then the completed ``tool_call_update`` carrying the answer's text: the
conversation float (open, following the turn) draws each of those, and that drawing runs on
the same main loop as the tool's Lua. Here bench/agent.py's ``mmtool`` makes the calls that way
(request out -> answer in, on the agent's clock), with the float open.

Per size (100 and 1,000 loaded buffers), in one run, in halves alternating so that a change of
load on the machine hits each alike:

* ``turn``: ``mmtool open_buffers`` (the updates around each call, as mm sends them);
* ``bare_turn``: ``tool open_buffers`` (the same calls, no updates: editor_tools.py's figure);
* ``raw``: ``exec_lua("return require('minime.tools').call(...)")`` from pynvim, the read alone.

Sections: ``headless`` (no UI: Neovim never redraws) and ``ui`` (bench/ui_client.py attached,
as plugin.py's stream_ui: Neovim lays out and sends the float as for a terminal).

Targets (issue 23): p50 <= 1.5 x (raw p50 + 0.5 ms) at 100 buffers, p50 < 10 ms at 1,000.

    .venv/bin/python bench/tool_turn.py [headless|ui ...]
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import (
    bench_agent_opts,
    emit,
    plugin_editor,
    quantile,
    read_json,
    turn_ended,
    ui_attached,
    wait_file,
)
from editor_tools import EXTRA_INIT, Scenario, first_ask, prepare, prepare_files, run_raw

BENCH = "tool_turn"
SIZES = {100: 120, 1000: 60}  # buffers: calls per figure (two halves)
WARMUP = 5
TARGET_RATIO_100 = 1.5
TARGET_SLACK_MS = 0.5
TARGET_1000_MS = 10.0
SETTLED_S = 2.5  # scope.lua's SETTLED_SECONDS (2) and a margin


@contextlib.contextmanager
def editor(work: Path, ui: bool) -> Iterator[Any]:
    """The plugin with bench/agent.py (discovery request); with ``ui`` a UI attached."""
    if not ui:
        with plugin_editor(work, bench_agent_opts("request"), EXTRA_INIT) as nvim:
            yield nvim
        return
    sock, stamps = work / "nvim.sock", work / "flushes.txt"
    with (
        plugin_editor(
            work, bench_agent_opts("request"), EXTRA_INIT, ("--listen", str(sock))
        ) as nvim,
        ui_attached(nvim, sock, stamps),
    ):
        yield nvim


def cpu_ns(pid: int, thread: int | None = None) -> int:
    """CPU time of a process's threads (or of one): /proc/PID/task/TID/schedstat."""
    tasks = [str(thread)] if thread else os.listdir(f"/proc/{pid}/task")
    total = 0
    for tid in tasks:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


def host_pid(nvim: Any) -> int:
    """The plugin's Python host: the child of Neovim running ``minime``."""
    pid = nvim.call("getpid")
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    for child in children:
        with open(f"/proc/{child}/cmdline", "rb") as f:
            if b"minime" in f.read():
                return int(child)
    raise RuntimeError("no host process")


class Turns:
    """Turns of bench/agent.py; ``cpu[command]`` collects the CPU ms per call of Neovim's main
    thread and of the host (all threads): on a loaded machine wall times swing, CPU hardly."""

    def __init__(self, nvim: Any, work: Path) -> None:
        self.nvim, self.work, self.done = nvim, work, 0
        self.cpu: dict[str, dict[str, list[float]]] = {}

    def run(self, command: str, sc: Scenario, n: int) -> list[float]:
        """One turn of ``command`` (mmtool or tool): its n timed calls, in ms."""
        nvim_pid, host = self.nvim.call("getpid"), host_pid(self.nvim)
        before = cpu_ns(nvim_pid, nvim_pid), cpu_ns(host)
        times = self._run(command, sc, n)
        per = self.cpu.setdefault(command, {"nvim": [], "host": []})
        per["nvim"].append((cpu_ns(nvim_pid, nvim_pid) - before[0]) / (n + WARMUP) / 1e6)
        per["host"].append((cpu_ns(host) - before[1]) / (n + WARMUP) / 1e6)
        return times

    def _run(self, command: str, sc: Scenario, n: int) -> list[float]:
        self.done += 1
        out = self.work / f"{command}-{sc.label}-{self.done}.json"
        self.nvim.exec_lua(
            "require('minime').ask(...)", f"{command} {sc.tool} {n} {WARMUP} {out} {{}}"
        )
        wait_file(out, ended=turn_ended(self.nvim, self.done))
        deadline = time.monotonic() + 60
        while self.nvim.exec_lua("return _G.bench_done") < self.done:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{sc.label}: the turn did not end")
            time.sleep(0.01)
        data = read_json(out)
        last = data["last"]
        if not isinstance(last, dict) or last.get("isError"):
            raise RuntimeError(f"{sc.label}: the tool failed: {last!r}")
        return [v / 1e6 for v in data["ns"]]


def float_open(nvim: Any) -> bool:
    return bool(
        nvim.exec_lua(
            "local s = require('minime.ui.turn').get(vim.fn.getcwd())"
            " return s ~= nil and s.win ~= nil and vim.api.nvim_win_is_valid(s.win)"
        )
    )


def files_made(work: Path) -> float:
    """The buffers' files, made before the editor starts (prepare writes them again, which
    changes no directory): open_buffers trusts a directory's stamp once it is SETTLED_S old
    (lua/minime/editor/scope.lua), as a user's files are, not files made a second ago."""
    for size in SIZES:
        prepare_files(work, size)
    return time.monotonic() + SETTLED_S


def section(ui: bool) -> None:
    suffix = "_ui" if ui else ""
    with tempfile.TemporaryDirectory(prefix="minime-bench-toolturn-") as tmp:
        work = Path(os.path.realpath(tmp))
        settled = files_made(work)
        with editor(work, ui) as nvim:
            turns = Turns(nvim, work)
            turns.done += 1
            first_ask(nvim)
            if not float_open(nvim):
                raise RuntimeError("the conversation float is not open")
            time.sleep(max(0.0, settled - time.monotonic()))
            for size, n in SIZES.items():
                sc = Scenario("open_buffers", size, "buffers", n, WARMUP)
                prepare(nvim, work, sc)
                turn: list[float] = []
                bare: list[float] = []
                for half in (n // 2, n - n // 2):
                    turn += turns.run("mmtool", sc, half)
                    run_raw(nvim, work, sc, half)
                    bare += turns.run("tool", sc, half)
                lines = nvim.exec_lua(
                    "local s = require('minime.ui.turn').get(vim.fn.getcwd())"
                    " return vim.api.nvim_buf_line_count(s.buf)"
                )
                cpu = {
                    f"{who}_cpu_ms_{'turn' if cmd == 'mmtool' else 'no_updates'}": quantile(v, 0.5)
                    for cmd, by in turns.cpu.items()
                    for who, v in by.items()
                }
                turns.cpu.clear()
                report(
                    sc, turn, bare, suffix, float_lines=lines, float_open=float_open(nvim), **cpu
                )


def report(sc: Scenario, turn: list[float], bare: list[float], suffix: str, **extra: Any) -> None:
    raw50, p50 = quantile(sc.raw, 0.5), quantile(turn, 0.5)
    fields: dict[str, Any] = {
        "p99": quantile(turn, 0.99),
        "raw_p50": raw50,
        "raw_p99": quantile(sc.raw, 0.99),
        "raw_cpu_ms": quantile(sc.raw_cpu, 0.5),
        "no_updates_p50": quantile(bare, 0.5),
        "no_updates_p99": quantile(bare, 0.99),
        "baseline": raw50,
        "baseline_of": "raw exec_lua read of the same list, same run",
        "n": len(turn),
        **extra,
    }
    if sc.size == 100:
        limit = TARGET_RATIO_100 * (raw50 + TARGET_SLACK_MS)
        fields.update(target=f"p50 <= 1.5 x (raw p50 + 0.5 ms) = {limit:.2f} ms", met=p50 <= limit)
    elif sc.size == 1000:
        fields.update(target=f"p50 < {TARGET_1000_MS} ms", met=p50 < TARGET_1000_MS)
    emit(BENCH, f"mm_turn_{sc.label}_p50{suffix}", p50, "ms", **fields)


def main() -> None:
    wanted = sys.argv[1:] or ["headless", "ui"]
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "procs")
    for name in wanted:
        section(ui=name == "ui")
    emit(BENCH, "loadavg_1m_at_end", os.getloadavg()[0], "procs")


if __name__ == "__main__":
    main()
