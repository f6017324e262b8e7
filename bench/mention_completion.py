"""`@` completion over a big repository (lua/minime/ui/complete_mentions.lua): the first
completion (git's listing, waited for), a cached one, and the main loop's answer while the
listing runs in the background (prefetch, as the input float does), next to `git ls-files`
alone run from Python in the same run.

    .venv/bin/python bench/mention_completion.py [FILES]   # default 20000
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import emit, median, quantile
from nvim_harness import start
from plugin_harness import init

BENCH = "mention_completion"
TIMED = """
local cm = require('minime.ui.complete_mentions')
local t0 = vim.uv.hrtime()
local n = #vim.fn.getcompletion('MiniMeAsk @', 'cmdline')
return { (vim.uv.hrtime() - t0) / 1e6, n }
"""


def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "load")
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        for i in range(files):
            d = repo / f"pkg{i % 200}" / f"mod{i % 7}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"file{i}.py").write_text("")
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        t0 = time.perf_counter()
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard"],
            cwd=repo,
            check=True,
            capture_output=True,
        )
        git_ms = (time.perf_counter() - t0) * 1e3
        with start(init({})) as nvim:
            nvim.command(f"cd {repo}")
            first, n = nvim.exec_lua(TIMED)
            emit(
                BENCH,
                "first_completion",
                first,
                "ms",
                items=n,
                files=files,
                baseline=git_ms,
                baseline_of="git ls-files alone",
            )
            cached = [nvim.exec_lua(TIMED)[0] for _ in range(20)]
            emit(BENCH, "cached_completion_p50", median(cached), "ms", files=files)
            # A background listing (the input float's prefetch) while the main loop is probed.
            nvim.exec_lua("package.loaded['minime.ui.complete_mentions'] = nil")
            nvim.exec_lua("require('minime.ui.complete_mentions').prefetch(vim.fn.getcwd())")
            probes = []
            for _ in range(50):
                t0 = time.perf_counter()
                nvim.eval("1")
                probes.append((time.perf_counter() - t0) * 1e3)
            idle = []
            for _ in range(50):
                t0 = time.perf_counter()
                nvim.eval("1")
                idle.append((time.perf_counter() - t0) * 1e3)
            emit(
                BENCH,
                "probe_during_prefetch_p99",
                quantile(probes, 0.99),
                "ms",
                baseline=quantile(idle, 0.99),
                baseline_of="probe after it",
            )


if __name__ == "__main__":
    main()
