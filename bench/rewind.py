"""The rewind's checkpoints and the rewind itself on a repository of 10,000 files (issue 30).

``checkpoints``: 100 turns of one thread, each checkpointed as the plugin does before its
prompt (lua/minime/review/baseline.lua take: the loaded buffers' texts, a snapshot tree) and at
its end (review/checkpoints.lua ended: another tree, the thread's ref updated), with 20 files of
1,000 lines loaded and 5 files changed per turn (2 of them loaded). Measured: Neovim's VmRSS
and Lua heap (after a full collection), the repository's .git and the plugin's own git
directory on disk — each after the 100 turns against before them (``baseline``, same run) —
and the time of one checkpoint (start and end).

``rewind``: 100 files changed since a checkpoint (10 of them loaded), put back by the rewind
(lua/minime/rewind/): the time from the call to its one line, and the main loop's longest hold
meanwhile (a 1 ms timer's longest gap, less 1 ms; target <= 20 ms), against `git checkout
<tree> -- <the 100 files>` (no checks, no buffers) and the same timer idle, alternately.

    .venv/bin/python bench/rewind.py [RUNS]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import emit, git, make_repo, median

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import rss_mib
from nvim_harness import start

BENCH = "rewind"
TURNS = 100
HOLD_TARGET_MS = 20.0
KEY = "t-bench"

INIT = """
vim.o.swapfile = false
require('minime').setup({})
_G.said = {}
vim.notify = function(msg) table.insert(_G.said, { msg = msg, at = vim.uv.hrtime() }) end
-- Each step the main loop runs from vim.schedule (every resumption of the rewind's coroutine,
-- every git answer), timed: the longest since _G.step_max was reset.
local schedule = vim.schedule
_G.step_max = 0
vim.schedule = function(fn)
  return schedule(function(...)
    local t0 = vim.uv.hrtime()
    fn(...)
    _G.step_max = math.max(_G.step_max, (vim.uv.hrtime() - t0) / 1e6)
  end)
end
"""

TAKE = """
local key, cwd = ...
_G.taken = nil
local t0 = vim.uv.hrtime()
require('minime.review.baseline').take(key, cwd, 'bench', 3000, function()
  _G.taken = (vim.uv.hrtime() - t0) / 1e6
end)
"""

ENDED = """
local key = ...
local b = require('minime.review.baseline')
if not _G.ending then
  _G.ending = vim.uv.hrtime()
  require('minime.review.checkpoints').ended(key)
end
if b.last(key).ended_tree then
  local ms = (vim.uv.hrtime() - _G.ending) / 1e6
  _G.ending = nil
  return ms
end
"""

HEAP = "collectgarbage('collect') collectgarbage('collect') return collectgarbage('count')"

# The main loop's longest gap between ticks of a 1 ms timer, from now.
PROBE = """
local timer = _G.probe_timer or vim.uv.new_timer()
_G.probe_timer = timer
_G.hold = { max = 0, last = vim.uv.hrtime() }
timer:start(1, 1, function()
  local now = vim.uv.hrtime()
  local gap = (now - _G.hold.last) / 1e6
  if gap > _G.hold.max then _G.hold.max = gap end
  _G.hold.last = now
end)
"""
STOP = "_G.probe_timer:stop() return _G.hold.max - 1"

REWIND = """
local key, n = ...
_G.said = {}
_G.step_max = 0
_G.t0 = vim.uv.hrtime()
require('minime.rewind').run(key, n, { bang = true })
"""
CHECKTIME = "for _, b in ipairs(vim.api.nvim_list_bufs()) do pcall(vim.cmd, 'checktime ' .. b) end"


def wait(nvim, lua: str, *args, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = nvim.exec_lua(lua, *args)
        if value:
            return value
        time.sleep(0.005)
    raise TimeoutError(lua)


def disk_kib(path: Path) -> float:
    # A lock file git writes and removes meanwhile makes du complain: its total stands.
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=False)
    return float(out.stdout.split()[0])


def settle(root: Path) -> None:
    """The repository packed once, now: a commit of 10,000 files starts git's automatic gc in
    the background, which would pack them during the turns measured."""
    deadline = time.monotonic() + 120
    while (root / ".git" / "gc.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # a background gc still runs: waited for, once, before any figure
    git(root, "gc", "-q")


def checkpoint(nvim, root: Path) -> tuple[float, float]:
    nvim.exec_lua(TAKE, KEY, str(root))
    start_ms = wait(nvim, "return _G.taken")
    return start_ms, 0.0


def end_turn(nvim) -> float:
    return wait(nvim, ENDED, KEY)


def churn(root: Path, turn: int, loaded: list[Path]) -> None:
    """A turn's changes: 2 loaded files and 3 others rewritten."""
    for path in loaded[turn % 10 :: 10][:2]:
        path.write_text(f"turn {turn}\n" + "x\n" * 999)
    for i in range(3):
        n = 1000 + (turn * 3 + i) % 5000
        (root / f"d{n % 100:03d}" / f"f{n:05d}.txt").write_text(f"turn {turn}\n")


def checkpoints(root: Path, loaded: list[Path]) -> None:
    with start(INIT, env={"MINIME_PYTHON": sys.executable}) as nvim:
        nvim.command(f"cd {root}")
        for path in loaded:
            nvim.command(f"edit {path}")
        nvim.exec_lua("require('minime.review.git').prepare(...)", str(root))
        # The warm-up's first snapshot seeds the plugin's index: one checkpoint not counted.
        checkpoint(nvim, root)
        end_turn(nvim)
        nvim.exec_lua("require('minime.review.baseline').reset(...)", KEY)
        pid = nvim.exec_lua("return vim.fn.getpid()")
        rss0, heap0, git0 = rss_mib(pid), nvim.exec_lua(HEAP), disk_kib(root / ".git")
        own = Path(nvim.exec_lua("return vim.fs.dirname(vim.fn.tempname())")) / "minime-git"
        own0 = disk_kib(own)
        starts, ends = [], []
        for turn in range(TURNS):
            starts.append(checkpoint(nvim, root)[0])
            churn(root, turn, loaded)
            nvim.exec_lua(CHECKTIME)
            ends.append(end_turn(nvim))
        rss1, heap1 = rss_mib(pid), nvim.exec_lua(HEAP)
        git1, own1 = disk_kib(root / ".git"), disk_kib(own)
        refs = git(root, "for-each-ref", "refs/minime/").splitlines()
        common = {"turns": TURNS, "files": 10_000, "loaded": len(loaded)}
        emit(
            BENCH,
            "rss_after_100_turns",
            rss1,
            "MiB",
            baseline=rss0,
            baseline_of="before the turns",
            **common,
        )
        emit(
            BENCH,
            "lua_heap_after_100_turns",
            heap1 / 1024,
            "MiB",
            baseline=heap0 / 1024,
            baseline_of="before the turns",
            **common,
        )
        emit(
            BENCH,
            "git_dir_after_100_turns",
            git1 / 1024,
            "MiB",
            baseline=git0 / 1024,
            baseline_of="before the turns",
            refs=len(refs),
            **common,
        )
        emit(
            BENCH,
            "plugin_git_dir_after_100_turns",
            own1 / 1024,
            "MiB",
            baseline=own0 / 1024,
            baseline_of="before the turns",
            **common,
        )
        emit(BENCH, "checkpoint_start_p50", median(starts), "ms", **common)
        emit(BENCH, "checkpoint_end_p50", median(ends), "ms", **common)


def rewinds(root: Path, loaded: list[Path], runs: int) -> None:
    changed = [root / f"d{i % 100:03d}" / f"f{i:05d}.txt" for i in range(2000, 2090)] + loaded[:10]
    rels = [str(p.relative_to(root)) for p in changed]
    times, holds, idle, plain, steps = [], [], [], [], []
    with start(INIT, env={"MINIME_PYTHON": sys.executable}) as nvim:
        nvim.command(f"cd {root}")
        for path in loaded[:10]:
            nvim.command(f"edit {path}")
        for run in range(runs):
            nvim.exec_lua("require('minime.review.baseline').reset(...)", KEY)
            checkpoint(nvim, root)
            tree = nvim.exec_lua("return require('minime.review.baseline').last(...).tree", KEY)
            for path in changed:
                path.write_text(f"run {run}\n")
            end_turn(nvim)
            # Plain git first (it puts the files back; they are changed again after).
            t0 = time.perf_counter()
            git(root, "checkout", tree, "--", *rels)
            plain.append((time.perf_counter() - t0) * 1000)
            for path in changed:
                path.write_text(f"run {run}\n")
            nvim.exec_lua(CHECKTIME)
            nvim.exec_lua(PROBE)
            time.sleep(0.5)
            idle.append(nvim.exec_lua(STOP))
            nvim.exec_lua(PROBE)
            nvim.exec_lua(REWIND, KEY, 1)
            said = wait(nvim, "return _G.said[1]")
            holds.append(nvim.exec_lua(STOP))
            steps.append(nvim.exec_lua("return _G.step_max"))
            assert "100 files restored" in said["msg"], said
            times.append((said["at"] - nvim.exec_lua("return _G.t0")) / 1e6)
    common = {"n": runs, "files": 10_000, "changed": len(changed), "loaded_changed": 10}
    emit(
        BENCH,
        "rewind_100_files_p50",
        median(times),
        "ms",
        baseline=median(plain),
        baseline_of="git checkout <tree> -- <the 100 files>",
        **common,
    )
    emit(
        BENCH,
        "rewind_longest_hold_max",
        max(holds),
        "ms",
        baseline=max(idle),
        baseline_of="the same timer, idle",
        target=f"<= {HOLD_TARGET_MS} ms",
        met=max(holds) <= HOLD_TARGET_MS,
        **common,
    )
    emit(
        BENCH,
        "rewind_longest_step_max",
        max(steps),
        "ms",
        note="the longest main-loop step from vim.schedule (the rewind, git answers)",
        **common,
    )
    emit(
        BENCH,
        "rewind_longest_hold_p50",
        median(holds),
        "ms",
        baseline=median(idle),
        baseline_of="the same timer, idle",
        **common,
    )


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "load")
    with tempfile.TemporaryDirectory(prefix="minime-rewind-bench-") as tmp:
        root = Path(tmp)
        make_repo(root)
        loaded = [root / f"d{i:03d}" / f"f{i + 500:05d}.txt" for i in range(20)]
        for path in loaded:
            path.write_text("line\n" * 1000)
        git(root, "-c", "user.email=b@e", "-c", "user.name=b", "commit", "-qam", "loaded")
        settle(root)
        checkpoints(root, loaded)
        rewinds(root, loaded, runs)
    emit(BENCH, "loadavg_1m_at_end", os.getloadavg()[0], "load")


if __name__ == "__main__":
    main()
