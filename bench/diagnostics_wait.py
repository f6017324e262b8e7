#!/usr/bin/env python3
"""The diagnostics pass after a turn (issue 31, lua/minime/feedback/diagnostics.lua): how long
Neovim's main loop is held while the pass waits for the language server, next to the same
probes of the idle editor in the same run.

A real headless Neovim with the plugin, the fake mm writing a.py each turn (``/disk-write``:
one syntax error, then the fixed file, by turns), and a language server attached to a.py:
``silent`` (tests/agents/silent_lsp.py: it never publishes, so each pass waits its whole
3 s) or ``pyrefly`` (it publishes; the pass ends once it went quiet). Per round, alternately:
probes (``nvim.eval('1+1')``, back to back) of the idle editor for 1 s, then a turn and the
probes from its end (MiniMeTurnDone) until the pass has ended.

    .venv/bin/python bench/diagnostics_wait.py [ROUNDS] [silent|pyrefly ...]

Metrics per server: ``probe_max_ms`` (the longest hold while the pass waits; baseline: the
idle editor's longest), ``probe_p99_ms`` (baseline: idle p99), ``pass_ms`` (median pass, from
the turn's end), ``pass_hold_ms`` (the longest the pass's own code held the main loop in one
go — a look, the comparison at the end — timed inside Neovim: M.last[thread].hold_ms; the
first pass of a Neovim apart, ``first_pass_hold_ms``: it loads the modules it uses).
Targets: the longest probe within TARGET_ADDED_MS of the idle editor's longest in the same run
(a shared machine's load moves both; pyrefly's own CPU competes with Neovim's while it
works), and the pass's own longest hold under TARGET_PASS_HOLD_MS.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, emit, median, quantile
from nvim_harness import LSP_ATTACHED, wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor_with

BENCH = "diagnostics_wait"
TARGET_ADDED_MS = 10.0
TARGET_PASS_HOLD_MS = 5.0
SERVERS = {
    "silent": [sys.executable, str(REPO / "tests" / "agents" / "silent_lsp.py")],
    "pyrefly": [str(REPO / ".venv" / "bin" / "pyrefly"), "lsp"],
}
START_SERVER = """
local root, cmd = ...
vim.api.nvim_create_autocmd('FileType', { pattern = 'python', callback = function(ev)
  vim.lsp.start({ name = 'server', cmd = cmd, root_dir = root }, { bufnr = ev.buf })
end })
"""
WRITES = ["/disk-write a.py def f(:", "/disk-write a.py def f(x): return x"]


def probe(ed: Editor) -> float:
    t0 = time.perf_counter()
    ed.nvim.eval("1+1")
    return (time.perf_counter() - t0) * 1e3


def probes_for(ed: Editor, seconds: float) -> list[float]:
    out, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        out.append(probe(ed))
    return out


def passes(ed: Editor, key: str) -> int:
    return ed.lua("return require('minime.feedback.diagnostics').passes[...] or 0", key)


def run(server: str, rounds: int, workdir: Path) -> None:
    project = workdir / server
    project.mkdir()
    (project / "a.py").write_text("def f(x):\n    return x\n")
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(workdir, name=f"{server}.yaml", trace=False)}
    with editor_with(project, opts, timeout=60.0) as ed:
        ed.lua(START_SERVER, str(project), SERVERS[server])
        ed.nvim.command(f"edit {project / 'a.py'}")
        wait_for(lambda: ed.lua(LSP_ATTACHED, str(project / "a.py")), 60, message="the server")
        ed.turn("/say warm")  # the host, the agent and the session started
        key = ed.lua("return require('minime.threads').current()")
        wait_for(lambda: passes(ed, key) >= 1, 10, message="the first pass")
        idle, waiting, lasted, holds = [], [], [], []
        for i in range(rounds):
            idle += probes_for(ed, 1.0)
            before = passes(ed, key)
            ed.turn(WRITES[i % 2])
            while passes(ed, key) == before:
                waiting.append(probe(ed))
            last = ed.lua("return require('minime.feedback.diagnostics').last[...]", key)
            lasted.append(last["ms"])
            holds.append(last["hold_ms"])
    tag = {"server": server, "rounds": rounds}
    hold, base = max(waiting), max(idle)
    emit(
        BENCH,
        "probe_max_ms",
        hold,
        "ms",
        baseline=base,
        baseline_of="idle editor",
        target=f"<= idle + {TARGET_ADDED_MS:g} ms",
        met=hold <= base + TARGET_ADDED_MS,
        **tag,
    )
    emit(
        BENCH,
        "probe_p99_ms",
        quantile(waiting, 0.99),
        "ms",
        baseline=quantile(idle, 0.99),
        baseline_of="idle editor",
        n=len(waiting),
        **tag,
    )
    emit(BENCH, "pass_ms", median(lasted), "ms", max=max(lasted), **tag)
    # The first pass of a Neovim loads the modules it needs (the scope, the LSP helpers).
    steady = holds[1:] or holds
    emit(BENCH, "first_pass_hold_ms", holds[0], "ms", **tag)
    emit(
        BENCH,
        "pass_hold_ms",
        max(steady),
        "ms",
        median=median(steady),
        target=f"< {TARGET_PASS_HOLD_MS:g} ms",
        met=max(steady) < TARGET_PASS_HOLD_MS,
        **tag,
    )


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    servers = sys.argv[2:] or list(SERVERS)
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "load")
    with tempfile.TemporaryDirectory() as tmp:
        for server in servers:
            run(server, rounds, Path(tmp))


if __name__ == "__main__":
    main()
