#!/usr/bin/env python3
"""What a client terminal costs the host to keep a flood of output: host CPU and memory while
a command prints 60 MB and the agent asked for ``outputByteLimit = 1e12``.

Each side runs in a child process of its own (a fresh interpreter: its peak RSS is its own),
A and B alternately, through ``minime.terminals.Terminals`` and a real command
(``head -c SIZE /dev/zero | tr '\\0' x``), from ``terminal/create``'s call to the command's
exit with all of its output read:

* ``now``: the code as it is (the limit capped at MAX_OUTPUT_LIMIT, appended in O(n));
* ``before`` (the baseline): the same Terminals with the append of before the cap (the whole
  output copied at each 64 KB read: ``output = tail(output + chunk)``) and the limit as asked.

``cpu_s`` is the child's user + system CPU for that span (its ``getrusage``, the command's own
processes not included); ``rss_added_mb`` its peak RSS less its RSS before the command.

    .venv/bin/python bench/terminal_keep.py [SIZE_MB [ROUNDS]]   (default: 60 1)
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
from typing import Any

from _common import emit, median

BENCH = "terminal_keep"
ASKED_LIMIT = 10**12


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def as_before() -> None:
    """The baseline: the append and the limit of before the cap, in place of today's."""
    from minime import terminals

    class Before(terminals.Terminal):
        whole = b""

        def _keep(self, chunk: bytes) -> None:
            data = self.whole + chunk
            self.whole = terminals.utf8_tail(data, self.limit)

        @property
        def output(self) -> bytes:
            return self.whole

    def as_asked(asked: int | None) -> int:
        return terminals.DEFAULT_OUTPUT_LIMIT if asked is None else asked

    terminals.Terminal = Before  # type: ignore[misc]
    terminals.output_limit = as_asked


async def one(size: int) -> dict[str, Any]:
    from minime.terminals import Terminals

    terminals = Terminals()
    with tempfile.TemporaryDirectory() as cwd:
        rss, cpu = rss_mb(), cpu_s()
        line = f"head -c {size} /dev/zero | tr '\\0' x"
        terminal = await terminals.create("s", cwd, "/bin/sh", ["-c", line], [], None, ASKED_LIMIT)
        await terminal.wait()
        took = cpu_s() - cpu
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3  # kB → MB
        kept = len(terminal.output)
        await terminals.close()
    return {"cpu_s": took, "rss_added_mb": peak - rss, "kept_bytes": kept}


def child(side: str, size: int) -> None:
    if side == "before":
        as_before()
    print(json.dumps(asyncio.run(one(size))))


def run_side(side: str, size: int) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", side, str(size)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    size_mb = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    size = int(size_mb * 1_000_000)
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "procs")
    seen: dict[str, list[dict[str, Any]]] = {"now": [], "before": []}
    for _ in range(rounds):
        for side in ("before", "now"):
            seen[side].append(run_side(side, size))
    for metric, unit in (("cpu_s", "s"), ("rss_added_mb", "MB")):
        now = [r[metric] for r in seen["now"]]
        before = [r[metric] for r in seen["before"]]
        emit(
            BENCH,
            metric,
            median(now),
            unit,
            baseline=median(before),
            baseline_of="before: the whole output copied at each read, the limit as asked",
            size_mb=size_mb,
            rounds=rounds,
            runs=now,
            baseline_runs=before,
            kept_bytes=seen["now"][-1]["kept_bytes"],
            baseline_kept_bytes=seen["before"][-1]["kept_bytes"],
        )
    emit(BENCH, "loadavg_1m_at_end", os.getloadavg()[0], "procs")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]))
    else:
        main()
