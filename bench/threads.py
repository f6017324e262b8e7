#!/usr/bin/env python3
"""Four threads streaming at once, next to one thread alone, in the same Neovim and run.

One headless Neovim with the plugin on the fake mm (demo/mm, yolo); four threads in one cwd
(one agent process, four sessions), each warmed by a first ask. Then, alternately, RUNS times
each: one thread streams ``/chunks 10000`` alone (the baseline), and all four stream it at
once. Measured each time:

* a probe ``nvim.eval('1+1')`` every ~1 ms from this process until every stream has ended:
  p50 and p99 (the editor's answer while four conversations draw);
* the last chunk on screen: from the asks to the batch holding the last chunk of the LAST
  thread applied to its buffer (``vim.uv.hrtime()``; headless: applied, no redraw);
* the total: from the asks to the last ``MiniMeTurnDone``.

Target: probe p99 with four threads <= 1.5x the single thread's, measured in the same run.

    .venv/bin/python bench/threads.py
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit, fake_mm_opts, median, plugin_editor, quantile

BENCH = "threads"
RUNS = 3
THREADS = 4
CHUNKS = 10000
LAST_CHUNK = "9999............"  # chunk 9999 of /chunks 10000 (16 characters each)
P99_RATIO_TARGET = 1.5

INSTRUMENT = r"""
_G.bench = { marker = {}, done = {} }
local turn = require('minime.ui.turn')
local apply = turn.apply
turn.apply = function(key, events)
  apply(key, events)
  local now, b = vim.uv.hrtime(), _G.bench
  for _, ev in ipairs(events) do
    if type(ev) == 'table' and ev.kind == 'text' and type(ev.text) == 'string'
      and b.wanted and not b.marker[key] and ev.text:find(b.wanted, 1, true) then
      b.marker[key] = now
    end
  end
end
vim.api.nvim_create_autocmd('User', { pattern = 'MiniMeTurnDone', callback = function(ev)
  local id = ev.data and ev.data.thread
  if id then _G.bench.done[id] = vim.uv.hrtime() end
end })
function _G.bench_threads(n)
  local threads = require('minime.threads')
  local ids = { threads.ensure() }
  for _ = 2, n do ids[#ids + 1] = threads.new(vim.fn.getcwd()) end
  return ids
end
function _G.bench_ask(ids, text, marker)
  _G.bench = { marker = {}, done = {}, wanted = marker, ask = vim.uv.hrtime() }
  for _, id in ipairs(ids) do require('minime').ask(text, nil, id) end
end
function _G.bench_state(ids)
  local b, out = _G.bench, { ended = 0 }
  for _, id in ipairs(ids) do
    if b.done[id] then out.ended = out.ended + 1 end
  end
  return out
end
"""


def wait_ended(nvim: Any, ids: list[str], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while nvim.exec_lua("return _G.bench_state(...).ended", ids) < len(ids):
        if time.monotonic() > deadline:
            raise RuntimeError("the turns did not end in time")
        time.sleep(0.01)


def streams(nvim: Any, ids: list[str]) -> tuple[list[float], float, float]:
    """Ask ``/chunks 10000`` in every thread of ``ids`` at once and probe until all ended:
    (probes in ms, ms to the last thread's last chunk applied, ms to the last end)."""
    nvim.exec_lua("_G.bench_ask(...)", ids, f"/chunks {CHUNKS}", LAST_CHUNK)
    probes: list[float] = []
    deadline = time.monotonic() + 120
    i = 0
    while True:
        t0 = time.perf_counter()
        nvim.eval("1+1")
        probes.append((time.perf_counter() - t0) * 1e3)
        i += 1
        if i % 10 == 0 and nvim.exec_lua("return _G.bench_state(...).ended", ids) == len(ids):
            break
        if time.monotonic() > deadline:
            raise RuntimeError("the streams did not end in time")
        time.sleep(0.001)
    b = nvim.exec_lua("return _G.bench")
    if len(b["marker"]) < len(ids):
        raise RuntimeError(f"a last chunk never reached its conversation: {b['marker']}")
    last_chunk = (max(b["marker"].values()) - b["ask"]) / 1e6
    total = (max(b["done"].values()) - b["ask"]) / 1e6
    return probes, last_chunk, total


def main() -> None:
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "procs")
    one: list[float] = []
    four: list[float] = []
    one_last, four_last, one_total, four_total = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="minime-bench-threads-") as tmp:
        work = Path(tmp)
        with plugin_editor(work, fake_mm_opts(work), INSTRUMENT) as nvim:
            ids = nvim.exec_lua("return _G.bench_threads(...)", THREADS)
            nvim.exec_lua("_G.bench_ask(...)", ids, "warm up", "warm")
            wait_ended(nvim, ids)
            for _ in range(RUNS):  # alternately: load drifts hit both alike
                probes, last, total = streams(nvim, ids[:1])
                one += probes
                one_last.append(last)
                one_total.append(total)
                probes, last, total = streams(nvim, ids)
                four += probes
                four_last.append(last)
                four_total.append(total)
            errors = nvim.exec_lua("return require('minime.ui.turn').errors")
    if errors:
        raise RuntimeError(f"the conversations recorded errors: {errors[:3]}")
    p99_one, p99_four = quantile(one, 0.99), quantile(four, 0.99)
    emit(BENCH, "probe_p50_four_threads", quantile(four, 0.5), "ms",
         baseline=quantile(one, 0.5), baseline_of="one thread alone, same run",
         n=len(four), baseline_n=len(one))  # fmt: skip
    emit(BENCH, "probe_p99_four_threads", p99_four, "ms",
         baseline=p99_one, baseline_of="one thread alone, same run",
         ratio=p99_four / p99_one, target=f"<= {P99_RATIO_TARGET}x the baseline",
         met=p99_four <= P99_RATIO_TARGET * p99_one,
         n=len(four), baseline_n=len(one))  # fmt: skip
    emit(BENCH, "last_chunk_on_screen_four_threads_median", median(four_last), "ms",
         baseline=median(one_last), baseline_of="one thread alone, same run",
         runs=four_last, baseline_runs=one_last,
         note="from the asks to the last thread's last chunk applied to its buffer")  # fmt: skip
    emit(BENCH, "total_four_threads_median", median(four_total), "ms",
         baseline=median(one_total), baseline_of="one thread alone, same run",
         chunks=CHUNKS * THREADS, baseline_chunks=CHUNKS)  # fmt: skip
    emit(BENCH, "loadavg_1m_at_end", os.getloadavg()[0], "procs")


if __name__ == "__main__":
    main()
