"""The review's git baseline on a repository of 10,000 files (issue 21; issue 28).

At each turn's start, before its prompt goes, the plugin snapshots the work tree as git sees it
(lua/minime/review/git.lua: plumbing on the plugin's own index — `git ls-files -m -d -o`,
`git update-index`, `git write-tree` — under lua/minime/git.lua, which lets git read none of
the repository's config), off Neovim's main loop. Measured through a real headless Neovim
calling that code: the time from the call to the tree (`snapshot`: the first of a Neovim seeds
the plugin's index, the median is the steady one), how long the call itself holds the main
loop (`call_blocks`), and the main loop's answer time while the snapshot runs (`probe`, against
the same probe idle).
Baselines in the same run, same repository: `git status --porcelain` (what any git-aware editor
runs), and `git add -A` from an empty temporary index (every file read).
The repository: 100 directories of 100 files, committed, then 10 files changed and 10 new
untracked ones (bench/_common.make_repo).

    .venv/bin/python bench/review_snapshot.py [RUNS]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from _common import emit, git, make_repo, median, quantile
from nvim_harness import start

FILES = 10_000


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def fresh_index_snapshot(root: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": os.path.join(tmp, "index")}
        git(root, "add", "-A", env=env)
        git(root, "write-tree", env=env)


SNAP = """
local cwd = ...
_G.snap = { t0 = vim.uv.hrtime() }
require('minime.review.git').snapshot(cwd, function(tree)
  _G.snap.tree, _G.snap.ms = tree, (vim.uv.hrtime() - _G.snap.t0) / 1e6
end)
_G.snap.call_ms = (vim.uv.hrtime() - _G.snap.t0) / 1e6
"""


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    emit("review_snapshot", "loadavg_1m_at_start", os.getloadavg()[0], "load")
    with tempfile.TemporaryDirectory(prefix="minime-review-bench-") as tmp:
        root = Path(tmp)
        make_repo(root)
        status = [timed(lambda: git(root, "status", "--porcelain")) for _ in range(runs)]
        fresh = [timed(lambda: fresh_index_snapshot(root)) for _ in range(runs)]
        snaps, calls, probes = [], [], []
        with start() as nvim:
            for _ in range(runs):
                nvim.exec_lua(SNAP, str(root))
                while not nvim.exec_lua("return _G.snap.ms"):
                    probes.append(timed(lambda: nvim.exec_lua("return 1")))
                snap = nvim.exec_lua("return _G.snap")
                assert snap["tree"], "no tree written"
                snaps.append(snap["ms"])
                calls.append(snap["call_ms"])
            idle = [timed(lambda: nvim.exec_lua("return 1")) for _ in range(max(len(probes), 50))]
        assert not git(root, "diff", "--cached", "--name-only"), "the user's index was touched"
        common = {"n": runs, "files": FILES}
        emit(
            "review_snapshot",
            "snapshot_p50",
            median(snaps),
            "ms",
            baseline=median(status),
            baseline_of="git status --porcelain",
            **common,
        )
        emit(
            "review_snapshot",
            "snapshot_fresh_index_p50",
            median(fresh),
            "ms",
            baseline=median(snaps),
            baseline_of="the plugin's snapshot",
            **common,
        )
        emit("review_snapshot", "call_blocks_max", max(calls), "ms", **common)
        emit(
            "review_snapshot",
            "probe_p99_during_snapshot",
            quantile(probes, 0.99),
            "ms",
            baseline=quantile(idle, 0.99),
            baseline_of="probe p99 with nothing running",
            n=len(probes),
        )


if __name__ == "__main__":
    main()
