#!/usr/bin/env python3
"""A client-tool call inside a real turn, as mm makes it and as mm sees it (issues 23, 34).

mm sends, around each client-tool call, the ``tool_call`` update (pending), a
``tool_call_update`` (in_progress), the request, then the completed ``tool_call_update``
carrying the result whole, cut to the agent file's ``maxOutput`` (in ``rawOutput.output`` and
in ``content``): the conversation float (open, following the turn) draws each of those on the
same main loop as the tool's Lua. The agent here is bench/mm_clock.py, the scripted mm of
demo/ with a clock on its own side of the pipe (request handed to the pipe -> answer read off
it): what mm waits for each call.

Per size (100 and 1,000 loaded buffers) and ``maxOutput`` (4,000, mm's default 50,000, and
400,000: a real agent file may allow that much), in one run, in halves alternating so that a
change of load on the machine hits each alike:

* ``turn``: ``/calls open_buffers`` (mm's updates around each call);
* ``bare``: ``/bare open_buffers`` (the same requests, no update around them);
* ``raw``: ``exec_lua("return require('minime.tools').call(...)")`` from pynvim, the read alone.

Sections: ``headless`` (no UI: Neovim never redraws) and ``ui`` (bench/ui_client.py attached,
as plugin.py's stream_ui: Neovim lays out and sends the float as for a terminal).

Targets (issue 34): at 100 buffers p50 <= 1.5 x (raw p50 + 0.5 ms) whatever ``maxOutput`` is;
at 1,000 p50 < 10 ms; p99 <= 3 x p50.

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

from _common import BENCH as BENCH_DIR
from _common import (
    PYTHON,
    emit,
    lua_str,
    plugin_editor,
    quantile,
    read_json,
    turn_ended,
    ui_attached,
    wait_file,
)
from editor_tools import EXTRA_INIT, Scenario, prepare, prepare_files, run_raw

BENCH = "tool_turn"
SIZES = {100: 120, 1000: 60}  # buffers: calls per figure (two halves)
MAX_OUTPUTS = (4_000, 50_000, 400_000)  # the agent file's maxOutput (mm's default: 50,000)
WARMUP = 5
TARGET_RATIO_100 = 1.5
TARGET_SLACK_MS = 0.5
TARGET_1000_MS = 10.0
TARGET_P99_RATIO = 3.0
SETTLED_S = 2.5  # scope.lua's SETTLED_SECONDS (2) and a margin

# Each batch the float draws (turn.apply, Lua-timed): when, how long, how many events and
# bytes of text and output. A call's "drawn in front" is the drawing inside its window
# (request on the pipe -> answer read): what the issue says a long output must never cause.
DRAWS = r"""
_G.bench_draws = {}
local turn = require('minime.ui.turn')
local apply, hr = turn.apply, vim.uv.hrtime
turn.apply = function(key, events)
  local began, bytes = hr(), 0
  for _, ev in ipairs(events) do
    bytes = bytes + #(type(ev.output) == 'string' and ev.output or '')
      + #(type(ev.text) == 'string' and ev.text or '')
  end
  local ok, err = pcall(apply, key, events)
  local d = _G.bench_draws
  d[#d + 1] = { began, hr() - began, #events, bytes }
  if not ok then error(err) end
end
"""

# The agent file comes from vim.g.bench_agent_file at each ask: a new one after :MiniMeReset
# starts mm again with that maxOutput.
OPTS = """{{ mm = {mm}, editor_tools = 'client',
  config = function() return vim.g.bench_agent_file end }}"""


def agent_files(work: Path) -> dict[int, str]:
    """One agent file per maxOutput: yolo (no permission asked), discovery request."""
    files = {}
    for limit in MAX_OUTPUTS:
        path = work / f"agent-{limit}.yaml"
        path.write_text(
            f"yolo: true\nmaxOutput: {limit}\nacp:\n  clientTools:\n    discovery: request\n"
        )
        files[limit] = str(path)
    return files


def mm_binary(work: Path) -> Path:
    """What the plugin runs as mm: bench/mm_clock.py with this interpreter."""
    path = work / "mm"
    path.write_text(f'#!/bin/sh\nexec {PYTHON} {BENCH_DIR / "mm_clock.py"} "$@"\n')
    path.chmod(0o755)
    return path


@contextlib.contextmanager
def editor(work: Path, ui: bool) -> Iterator[Any]:
    """The plugin with bench/mm_clock.py as mm; with ``ui`` a UI attached."""
    opts = OPTS.format(mm=lua_str(str(mm_binary(work))))
    if not ui:
        with plugin_editor(work, opts, EXTRA_INIT + DRAWS) as nvim:
            yield nvim
        return
    sock, stamps = work / "nvim.sock", work / "flushes.txt"
    with (
        plugin_editor(work, opts, EXTRA_INIT + DRAWS, ("--listen", str(sock))) as nvim,
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
    """Turns of the clocked mm; ``cpu[command]`` collects the CPU ms per call of Neovim's main
    thread and of the host (all threads): on a loaded machine wall times swing, CPU hardly."""

    def __init__(self, nvim: Any, work: Path) -> None:
        self.nvim, self.work, self.done = nvim, work, 0
        self.cpu: dict[str, dict[str, list[float]]] = {}
        self.read_chars = 0
        self.in_front: list[float] = []  # ms of drawing inside each timed call (calls turns)
        self.largest = (0, 0)  # the most events, and bytes, one batch drawn during the calls held

    def wait_done(self, label: str) -> None:
        deadline = time.monotonic() + 60
        while self.nvim.exec_lua("return _G.bench_done") < self.done:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{label}: the turn did not end")
            time.sleep(0.01)

    def use(self, agent_file: str) -> None:
        """A new conversation on mm with this agent file, started (one turn)."""
        self.nvim.command("MiniMeReset")
        self.nvim.vars["bench_agent_file"] = agent_file
        self.done += 1
        self.nvim.exec_lua("require('minime').ask('/say warm')")
        self.wait_done("warm-up")

    def run(self, command: str, sc: Scenario, n: int) -> list[float]:
        """One turn of ``command`` (calls or bare): its n timed calls, in ms."""
        nvim_pid, host = self.nvim.call("getpid"), host_pid(self.nvim)
        before = cpu_ns(nvim_pid, nvim_pid), cpu_ns(host)
        self.done += 1
        self.nvim.exec_lua("_G.bench_draws = {}")
        out = self.work / f"{command}-{sc.label}-{self.done}.json"
        self.nvim.exec_lua("require('minime').ask(...)", f"/{command} {n} {WARMUP} {out} {sc.tool}")
        wait_file(out, ended=turn_ended(self.nvim, self.done))
        self.wait_done(sc.label)
        per = self.cpu.setdefault(command, {"nvim": [], "host": []})
        per["nvim"].append((cpu_ns(nvim_pid, nvim_pid) - before[0]) / (n + WARMUP) / 1e6)
        per["host"].append((cpu_ns(host) - before[1]) / (n + WARMUP) / 1e6)
        data = read_json(out)
        self.read_chars = data["read_chars"]
        if command == "calls":
            self.drawn_in_front(data["starts"], data["ns"])
        return [v / 1e6 for v in data["ns"]]

    def drawn_in_front(self, starts: list[int], took: list[int]) -> None:
        draws = self.nvim.exec_lua("return _G.bench_draws")
        first, last = starts[0], starts[-1] + took[-1]
        for began, length, n_events, n_bytes in draws:
            if began < last and began + length > first:
                self.largest = max(self.largest, (n_events, n_bytes))
        for start, ns in zip(starts, took, strict=True):
            end = start + ns
            overlap = sum(
                max(0, min(end, began + length) - max(start, began)) for began, length, *_ in draws
            )
            self.in_front.append(overlap / 1e6)


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
        files = agent_files(work)
        with editor(work, ui) as nvim:
            turns = Turns(nvim, work)
            time.sleep(max(0.0, settled - time.monotonic()))
            for size, n in SIZES.items():
                scs = {
                    limit: Scenario("open_buffers", size, "buffers", n, WARMUP) for limit in files
                }
                prepare(nvim, work, scs[MAX_OUTPUTS[0]])
                turn: dict[int, list[float]] = {limit: [] for limit in files}
                bare: dict[int, list[float]] = {limit: [] for limit in files}
                cpu: dict[int, dict[str, float]] = {}
                read: dict[int, int] = {}
                drawn: dict[int, dict[str, Any]] = {limit: {} for limit in files}
                for half in (n // 2, n - n // 2):
                    for limit, agent in files.items():
                        turns.use(agent)
                        if not float_open(nvim):
                            raise RuntimeError("the conversation float is not open")
                        turns.in_front, turns.largest = drawn[limit].get("in", []), (0, 0)
                        turn[limit] += turns.run("calls", scs[limit], half)
                        read[limit] = turns.read_chars
                        drawn[limit]["in"] = turns.in_front
                        drawn[limit]["largest"] = max(
                            drawn[limit].get("largest", (0, 0)), turns.largest
                        )
                        run_raw(nvim, work, scs[limit], half)
                        bare[limit] += turns.run("bare", scs[limit], half)
                        cpu[limit] = {
                            f"{who}_cpu_ms_{'turn' if cmd == 'calls' else 'no_updates'}": quantile(
                                v, 0.5
                            )
                            for cmd, by in turns.cpu.items()
                            for who, v in by.items()
                        }
                for limit in files:
                    report(
                        scs[limit],
                        limit,
                        turn[limit],
                        bare[limit],
                        suffix,
                        read_chars=read[limit],
                        drawn_in_front_p50=quantile(drawn[limit]["in"], 0.5),
                        drawn_in_front_p99=quantile(drawn[limit]["in"], 0.99),
                        drawn_in_front_max=max(drawn[limit]["in"]),
                        largest_batch_during_calls=list(drawn[limit]["largest"]),
                        **cpu[limit],
                    )
                turns.cpu.clear()


def report(
    sc: Scenario, limit: int, turn: list[float], bare: list[float], suffix: str, **extra: Any
) -> None:
    raw50, p50, p99 = quantile(sc.raw, 0.5), quantile(turn, 0.5), quantile(turn, 0.99)
    fields: dict[str, Any] = {
        "p99": p99,
        "max_output": limit,
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
        bound = TARGET_RATIO_100 * (raw50 + TARGET_SLACK_MS)
        fields.update(target=f"p50 <= 1.5 x (raw p50 + 0.5 ms) = {bound:.2f} ms", met=p50 <= bound)
    elif sc.size == 1000:
        fields.update(target=f"p50 < {TARGET_1000_MS} ms", met=p50 < TARGET_1000_MS)
    fields.update(
        target_p99=f"p99 <= {TARGET_P99_RATIO} x p50", met_p99=p99 <= TARGET_P99_RATIO * p50
    )
    emit(BENCH, f"mm_turn_{sc.label}_max{limit}_p50{suffix}", p50, "ms", **fields)


def main() -> None:
    wanted = sys.argv[1:] or ["headless", "ui"]
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "procs")
    for name in wanted:
        section(ui=name == "ui")
    emit(BENCH, "loadavg_1m_at_end", os.getloadavg()[0], "procs")


if __name__ == "__main__":
    main()
