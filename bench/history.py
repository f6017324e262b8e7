"""The 10,000-chunk stream into a conversation that already holds 20 turns, with a UI attached.

Issue 10 keeps the whole session in one float: every ask appends to a buffer that only grows, so
a stream late in a long conversation must stay as smooth as the first. Baseline (same run, same
agent, same UI): the same stream into an empty conversation (`:MiniMeReset` before each run).

Figures (JSON lines, see bench/README.md): editor probe p99 during the stream (target < 8 ms),
the last chunk on screen after the agent sent it (the UI's first flush after it was applied;
target < 30 ms), the longest probe at the end of the turn (target < 50 ms).

    .venv/bin/python bench/history.py
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit, median, quantile, read_json
from editor_tools import main_thread_cpu_ns

from plugin import (
    CHUNKS,
    LAST_CHUNK,
    STREAM_RUNS,
    ask,
    editor,
    end_of_turn_max,
    first_flush_after,
    probe_until_done,
    wait_done,
)

BENCH = "history"
EARLIER_TURNS = 20
# Each earlier turn is a working session's (bench/agent.py ``work N``): a thought, four tool
# calls with 40-160 lines of output each (folded), a markdown answer with a list, two code
# blocks and a table, all streamed in 16-character chunks: ~350 lines a turn, so the buffer
# holds what one does after a morning's work (issue 34: a stream into such a conversation).
PROBE_P99_TARGET_MS = 8.0
DRAWN_TARGET_MS = 30.0
END_TARGET_MS = 50.0


def float_lines(nvim: Any) -> int:
    return nvim.exec_lua(
        "local s = require('minime.ui.turn').get(vim.fn.getcwd())"
        " return s and vim.api.nvim_buf_line_count(s.buf) or 0"
    )


def reset_until_empty(nvim: Any) -> None:
    nvim.command("MiniMeReset")
    deadline = time.monotonic() + 10
    while float_lines(nvim) > 1:
        if time.monotonic() > deadline:
            raise RuntimeError(f":MiniMeReset left {float_lines(nvim)} lines")
        time.sleep(0.01)


def run(work: Path, earlier: int) -> dict[str, Any]:
    """STREAM_RUNS measured streams after `earlier` turns (0: reset to empty before each)."""
    probes_all: list[float] = []
    drawn: list[float] = []
    ends: list[float] = []
    lines_before: list[int] = []
    cpu_per_batch: list[float] = []
    longest: list[float] = []
    with editor(work, "bench", ui=True) as nvim:
        ask(nvim, "say warm up")
        wait_done(nvim)
        for i in range(earlier):
            ask(nvim, f"work {i}")
            wait_done(nvim)
        for i in range(STREAM_RUNS):
            if not earlier:
                reset_until_empty(nvim)
            lines_before.append(float_lines(nvim))
            out = work / f"chunks{i}.json"
            cpu_before = main_thread_cpu_ns(nvim)
            ask(nvim, f"chunks {CHUNKS} 16 {out}", LAST_CHUNK)
            probes: list[float] = []
            stamps: list[int] = []
            b = probe_until_done(nvim, probes, stamps=stamps)
            cpu_per_batch.append((main_thread_cpu_ns(nvim) - cpu_before) / 1e6 / b["applies"])
            longest.append(b["max_apply"] / 1e6)
            if not b.get("marker_at"):
                raise RuntimeError("the last chunk never reached the float")
            sent = read_json(out)["last_sent_ns"]
            flush = first_flush_after(nvim.flushes(), b["marker_at"])
            if flush is None:
                raise RuntimeError("no screen update after the last chunk")
            drawn.append((flush - sent) / 1e6)
            ends.append(end_of_turn_max(b, probes, stamps))
            probes_all.extend(probes)
        errors = nvim.exec_lua("return require('minime.ui.turn').errors")
    return {
        "p99": quantile(probes_all, 0.99),
        "n": len(probes_all),
        "drawn": drawn,
        "ends": ends,
        "lines_before": lines_before,
        "cpu_per_batch": cpu_per_batch,
        "longest": longest,
        "errors": errors,
    }


def main() -> None:
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "procs")
    with tempfile.TemporaryDirectory(prefix="minime-bench-history-") as tmp:
        root = Path(os.path.realpath(tmp))
        (root / "empty").mkdir()
        (root / "history").mkdir()
        base = run(root / "empty", 0)
        hist = run(root / "history", EARLIER_TURNS)
    common = {"ui": True, "earlier_turns": EARLIER_TURNS, "baseline_of": "empty conversation"}
    emit(
        BENCH,
        "probe_p99_during_stream_after_20_turns",
        hist["p99"],
        "ms",
        baseline=base["p99"],
        n=hist["n"],
        baseline_n=base["n"],
        target=f"< {PROBE_P99_TARGET_MS}",
        met=hist["p99"] < PROBE_P99_TARGET_MS,
        float_lines_before=hist["lines_before"],
        **common,
    )
    emit(
        BENCH,
        "last_chunk_drawn_after_send_max_after_20_turns",
        max(hist["drawn"]),
        "ms",
        baseline=max(base["drawn"]),
        median=median(hist["drawn"]),
        runs=[round(d, 1) for d in hist["drawn"]],
        baseline_runs=[round(d, 1) for d in base["drawn"]],
        target=f"< {DRAWN_TARGET_MS}",
        met=max(hist["drawn"]) < DRAWN_TARGET_MS,
        note="the UI's first flush after the batch holding the last chunk was applied",
        **common,
    )
    emit(
        BENCH,
        "probe_max_at_end_of_turn_after_20_turns",
        max(hist["ends"]),
        "ms",
        baseline=max(base["ends"]),
        runs=[round(e, 1) for e in hist["ends"]],
        baseline_runs=[round(e, 1) for e in base["ends"]],
        target=f"< {END_TARGET_MS}",
        met=max(hist["ends"]) < END_TARGET_MS,
        **common,
    )
    emit(
        BENCH,
        "nvim_cpu_ms_per_batch_after_20_turns",
        median(hist["cpu_per_batch"]),
        "ms",
        baseline=median(base["cpu_per_batch"]),
        runs=[round(c, 2) for c in hist["cpu_per_batch"]],
        longest_apply_ms=[round(c, 1) for c in hist["longest"]],
        baseline_longest_apply_ms=[round(c, 1) for c in base["longest"]],
        note="Neovim's main-thread CPU over the stream (probing and the probes' answers "
        "included) per batch drawn; longest_apply_ms: the longest turn.apply of each run "
        "(wall, Lua-timed)",
        **common,
    )
    for tag, r in (("empty", base), ("after_20_turns", hist)):
        if r["errors"]:
            emit(BENCH, f"turn_apply_errors_{tag}", len(r["errors"]), "count", first=r["errors"][0])
    emit(BENCH, "loadavg_1m_at_end", os.getloadavg()[0], "procs")


if __name__ == "__main__":
    main()
