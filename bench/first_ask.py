#!/usr/bin/env python3
"""The first ask in a fresh Neovim, typed as a user types it (issue 23).

A UI is attached (bench/ui_client.py) and the agent is the fake mm (demo/mm: yolo, discovery
request, answers at once). Each run is a fresh Neovim:

* ``typed``: `:MiniMeAsk explain this` typed through ``nvim_input`` at 80 ms a key, then
  ``<CR>``: from ``<CR>`` to ``MiniMeTurnDone`` (the answer shown; the warm-up, lua/minime/warm.lua,
  has had the typing's time). Then, in the same Neovim, a second ask typed the same way: the
  ``baseline`` (a warm ask).
* ``typed_warm_off``: the same with ``warm = false`` (what the first ask cost before).
* ``mapped``: a key mapped to ``require('minime').ask('explain this')``: the cold ask with no
  typing to hide the start behind (key -> ``MiniMeTurnDone``).
* ``typed_10k``, ``mapped_10k``: the same in a git repository of 10,000 files (10 changed, 10
  untracked; bench/_common.make_repo): the turn's baseline — the buffers and a git snapshot —
  is written before the prompt goes (rplugin/python3/minime/nvim/baselines.py), so the ask
  waits for it. Target: the empty directory's figure + 50 ms.

Times: ``time.monotonic_ns()`` here just before the key is sent, ``vim.uv.hrtime()`` in the
``MiniMeTurnDone`` autocmd (both CLOCK_MONOTONIC). Target: typed first ask <= 150 ms.

    .venv/bin/python bench/first_ask.py [RUNS [KIND ...]]   # default 3 runs of each (~1 min)
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

from _common import emit, fake_mm_opts, make_repo, median, plugin_editor, ui_attached

BENCH = "first_ask"
KEY_SECONDS = 0.08
TEXT = "MiniMeAsk explain this"
TARGET_MS = 150.0

INSTRUMENT = r"""
_G.bench_done = {}
vim.api.nvim_create_autocmd('User', { pattern = 'MiniMeTurnDone', callback = function(ev)
  table.insert(_G.bench_done, { at = vim.uv.hrtime(), stop = ev.data and ev.data.stop_reason })
end })
vim.keymap.set('n', '<F5>', function() require('minime').ask('explain this') end)
"""


@contextlib.contextmanager
def editor(work: Path, warm: bool, cwd: Path | None = None) -> Iterator[Any]:
    """A fresh Neovim with a UI, its files in `work`, its cwd `cwd` (default: `work`)."""
    opts = fake_mm_opts(work)
    if not warm:
        opts = opts[:-1] + ", warm = false }"
    sock, stamps = work / "nvim.sock", work / "flushes.txt"
    with (
        plugin_editor(cwd or work, opts, INSTRUMENT, ("--listen", str(sock))) as nvim,
        ui_attached(nvim, sock, stamps),
    ):
        yield nvim


def wait_done(nvim: Any, count: int, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = nvim.exec_lua("return _G.bench_done")
        if len(done) >= count:
            if done[-1]["stop"] != "end_turn":
                raise RuntimeError(f"the ask ended {done[-1]['stop']!r}")
            return done[-1]
        time.sleep(0.005)
    raise RuntimeError("no MiniMeTurnDone")


def typed_ask(nvim: Any, count: int) -> float:
    """Type ``:TEXT`` at KEY_SECONDS a key, then <CR>: ms from <CR> to the turn's end."""
    for key in ":" + TEXT:
        nvim.input(key)
        time.sleep(KEY_SECONDS)
    sent = time.monotonic_ns()
    nvim.input("<CR>")
    return (wait_done(nvim, count)["at"] - sent) / 1e6


def mapped_ask(nvim: Any) -> float:
    sent = time.monotonic_ns()
    nvim.input("<F5>")
    return (wait_done(nvim, 1)["at"] - sent) / 1e6


def one_run(kind: str, repo: Path) -> tuple[float, float | None]:
    with tempfile.TemporaryDirectory(prefix="minime-bench-first-") as tmp:
        work = Path(os.path.realpath(tmp))
        cwd = repo if kind.endswith("_10k") else None
        with editor(work, warm=kind != "typed_warm_off", cwd=cwd) as nvim:
            time.sleep(0.3)  # a user does not type within the first 300 ms
            if kind.startswith("mapped"):
                return mapped_ask(nvim), None
            first = typed_ask(nvim, 1)
            nvim.input("<Esc>")
            return first, typed_ask(nvim, 2)


def main(argv: list[str]) -> None:
    runs = int(argv[0]) if argv else 3
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "procs")
    kinds = argv[1:] or ["typed", "typed_warm_off", "mapped", "typed_10k", "mapped_10k"]
    results: dict[str, list[float]] = {kind: [] for kind in kinds}
    warm_asks: list[float] = []
    warm_10k: list[float] = []
    repo_dir = tempfile.TemporaryDirectory(prefix="minime-bench-10k-")
    repo = Path(os.path.realpath(repo_dir.name))
    if any(kind.endswith("_10k") for kind in kinds):
        make_repo(repo)
    for _ in range(runs):  # interleaved: a change of load hits each kind alike
        for kind, values in results.items():
            first, again = one_run(kind, repo)
            values.append(first)
            if again is not None:
                (warm_10k if kind.endswith("_10k") else warm_asks).append(again)
    base = median(warm_asks) if warm_asks else float("nan")
    for kind, values in results.items():
        fields: dict[str, Any] = {
            "runs": [round(v, 1) for v in values],
            "baseline": base,
            "baseline_of": "a warm ask typed the same way, same Neovims",
        }
        if kind == "typed":
            fields.update(target=f"<= {TARGET_MS} ms", met=median(values) <= TARGET_MS)
        empty = results.get(kind.removesuffix("_10k"))
        if kind.endswith("_10k") and empty:
            fields.update(
                baseline=median(empty),
                baseline_of=f"the same ask in an empty directory ({kind.removesuffix('_10k')})",
                target="<= baseline + 50 ms",
                met=median(values) <= median(empty) + 50,
            )
        emit(BENCH, f"first_ask_{kind}_median", median(values), "ms", **fields)
    emit(BENCH, "warm_ask_median", base, "ms", runs=[round(v, 1) for v in warm_asks])
    if warm_10k:
        runs_10k = [round(v, 1) for v in warm_10k]
        emit(BENCH, "warm_ask_10k_median", median(warm_10k), "ms", runs=runs_10k, baseline=base)
    emit(BENCH, "loadavg_1m_at_end", os.getloadavg()[0], "procs")
    repo_dir.cleanup()


if __name__ == "__main__":
    main(sys.argv[1:])
