#!/usr/bin/env python3
"""Load through the plugin (real headless Neovim, the Python host, the fake mm via demo/mm).

* ``calls50``: one turn making 50 concurrent ``client_read_buffer`` calls on one session
  (fake mm ``/parallel 50``; a permission rule allows client tools): ask → MiniMeTurnDone, and
  how many answers the model read (all 50 must be there).
* ``cwds10``: 10 cwds, a session each, their turns at once (``/slow 20`` then ``/chunks 1000
  8``): first ask → last MiniMeTurnDone, and how many floats hold every chunk in order.
* ``turns1000``: 1,000 turns in a row on one session (``echo: turn i``): per-turn time (ask →
  MiniMeTurnDone, both ``vim.uv.hrtime()`` in Neovim), and the Python host's RSS
  (/proc/<pid>/status VmRSS) after 10, 100, 500 and 1,000 turns, next to Neovim's own. All
  the turns stay in one conversation float (issue 10).
* ``conversation``: 200 turns in one conversation, each with a tool whose output is 300 lines
  (a user tool) and an answer: Neovim's RSS and the float's line count after 10 and 200 turns,
  with old turns' tool output trimmed and the oldest turns dropped past ``MAX_LINES`` (the
  defaults) and, as the baseline in the same run, with neither (both raised past the run).

Nothing lost is checked as it goes (each turn's answer in its float); a loss is a ``lost``
figure above 0, never an exception. No timing target: the issue asks for figures.

    .venv/bin/python bench/load.py [TURNS]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from _common import emit, median, quantile
from fake_mm import chunks_text
from nvim_harness import wait_for
from plugin_harness import ALLOW_CLIENT_TOOLS, FAKE_MM_BIN, Editor, agent_file, editor, editor_with
from test_load import model_reads

BENCH = "load"
CHECKPOINTS = (10, 100, 500, 1000)

STAMP = """
_G.load = {}
vim.api.nvim_create_autocmd('User', { pattern = 'MiniMeTurnDone', callback = function()
  _G.load.done_at = vim.uv.hrtime()
end })
function _G.load_ask(text)
  _G.load.ask_at = vim.uv.hrtime()
  vim.cmd('MiniMeAsk ' .. text)
end
"""


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def loadavg() -> None:
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "load", cores=os.cpu_count())


def bench_calls50(root: Path) -> None:
    work = root / "calls50"
    work.mkdir()
    (work / "notes.txt").write_text("".join(f"line {i}\n" for i in range(1, 201)))
    with editor(work, permission_rules=ALLOW_CLIENT_TOOLS) as ed:
        ed.nvim.command(f"edit {work / 'notes.txt'}")
        ed.turn("warm up")
        started = time.perf_counter()
        done, text = ed.turn('/parallel 50 read_buffer {"path": "notes.txt"}', timeout=120)
        took = (time.perf_counter() - started) * 1000
        reads = model_reads(text, "client_read_buffer -> ")
        answered = sum(read.get("total_lines") == 200 for read in reads)
        emit(BENCH, "calls50_turn", took, "ms", calls=50, stop_reason=done["stop_reason"])
        emit(BENCH, "calls50_lost", 50 - answered, "calls", answered=answered)


def bench_cwds10(root: Path) -> None:
    work = root / "cwds10"
    work.mkdir()
    dirs = []
    for i in range(10):
        d = work / f"project{i}"
        d.mkdir()
        dirs.append(os.path.realpath(d))
    chunks = "".join(chunks_text(1000, 8))
    with editor(work) as ed:
        ed.turn("warm up")  # the agent is running: the figure is the sessions and turns
        started = time.perf_counter()
        for d in dirs:
            ed.nvim.command(f"cd {d}")
            ed.ask("/slow 20\n/chunks 1000 8")
        peak = 0
        while len(ed.done()) < 11:
            peak = max(peak, ed.lua("return require('minime.ui.turn').running_count()"))
            time.sleep(0.01)
        took = (time.perf_counter() - started) * 1000
        whole = sum(chunks in ed.turn_text(d).replace("\n", "") for d in dirs)
        emit(BENCH, "cwds10_all_done", took, "ms", sessions=10, peak_running=peak)
        emit(BENCH, "cwds10_lost", 10 - whole, "floats", whole=whole, chunks_each=1000)


def ask_timed(ed: Editor, text: str, count: int) -> float:
    """One turn; ms from the ask to MiniMeTurnDone, both stamped in Neovim."""
    ed.lua("_G.load_ask(...)", text)
    wait_for(lambda: ed.lua("return #_G.done") >= count, 60, interval=0.001)
    stamps = ed.lua("return _G.load")
    return (stamps["done_at"] - stamps["ask_at"]) / 1e6


def bench_turns(root: Path, turns: int) -> None:
    work = root / "turns"
    work.mkdir()
    with editor(work) as ed:
        ed.lua(STAMP)
        host = nvim_pid = 0
        times: list[float] = []
        lost = 0
        started = time.perf_counter()
        for i in range(1, turns + 1):
            times.append(ask_timed(ed, f"turn {i}", i))
            if f"echo: turn {i}" not in ed.turn_text():
                lost += 1
            if i == 1:
                host, nvim_pid = ed.host_pid(), ed.lua("return vim.fn.getpid()")
            if i in CHECKPOINTS and i <= turns:
                emit(
                    BENCH,
                    f"host_rss_after_{i}_turns",
                    rss_mib(host),
                    "MiB",
                    nvim_rss=rss_mib(nvim_pid),
                )
        total = time.perf_counter() - started
        sessions = {d["session_id"] for d in ed.done()}
        steady = times[10:] or times
        emit(BENCH, "turn_p50", median(steady), "ms", n=len(steady), note="turns 11..N")
        if turns >= 200:
            emit(BENCH, "turn_p50_turns_11_110", median(times[10:110]), "ms", n=100)
            emit(BENCH, "turn_p50_last_100", median(times[-100:]), "ms", n=100)
        emit(BENCH, "turn_p99", quantile(steady, 0.99), "ms", n=len(steady))
        emit(BENCH, "turns_per_second", turns / total, "turns/s", turns=turns)
        emit(BENCH, "turns_lost", lost, "turns", turns=turns, sessions=len(sessions))


# A user tool answering 300 lines, allowed by a rule: each turn's float gets a 300-line body.
BIG_TOOL_OPTS = """{
  mm = %r, config = %r,
  permission_rules = { { pattern = "client: *", decision = "allow" } },
  tools = { {
    name = "big", description = "300 lines", input_schema = { type = "object", properties = {} },
    handler = function() local t = {} for i = 1, 300 do t[i] = "output line " .. i end
      return table.concat(t, "\\n") end,
  } },
}"""


def bench_conversation(root: Path, turns: int = 200) -> None:
    for trimmed in (True, False):
        work = root / f"conversation_{'trimmed' if trimmed else 'whole'}"
        work.mkdir()
        opts = BIG_TOOL_OPTS % (FAKE_MM_BIN, agent_file(work, trace=False))
        with editor_with(work, opts, timeout=60.0) as ed:
            if not trimmed:
                ed.lua(
                    "local c = require('minime.ui.turn.conversation')"
                    " c.KEEP, c.MAX_LINES = 1e9, 1e9"
                )
            nvim_pid = ed.lua("return vim.fn.getpid()")
            tag = "trimmed" if trimmed else "whole_baseline"
            lost = 0
            for i in range(1, turns + 1):
                ed.turn(f"/tool big\nturn {i}")
                tail = ed.lua(
                    "local b = require('minime.ui.turn').get(...).buf"
                    " return vim.api.nvim_buf_get_lines(b, -6, -1, false)",
                    ed.cwd,
                )
                lost += f"echo: turn {i}" not in tail
                if i in (10, turns):
                    ed.lua("collectgarbage('collect')")
                    lines = len(ed.turn_lines())
                    emit(
                        BENCH,
                        f"conversation_{tag}_nvim_rss_after_{i}_turns",
                        rss_mib(nvim_pid),
                        "MiB",
                        float_lines=lines,
                    )
            emit(BENCH, f"conversation_{tag}_turns_lost", lost, "turns", turns=turns)


def main(argv: list[str]) -> int:
    turns = int(argv[0]) if argv else 1000
    loadavg()
    with tempfile.TemporaryDirectory(prefix="minime-bench-load-") as tmp:
        root = Path(tmp)
        bench_calls50(root)
        bench_cwds10(root)
        bench_conversation(root)
        bench_turns(root, turns)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
