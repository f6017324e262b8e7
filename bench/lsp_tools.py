#!/usr/bin/env python3
"""The language-server tools end to end, next to the same LSP request made directly from Lua.

A real pylsp (vim.lsp.start in the headless Neovim) over a two-file Python project; in one run:

* ``definition_roundtrip``: client_definition {path, line, col} called N times one after
  another by bench/agent.py (agent -> library -> host -> Lua -> pylsp -> back), timed on the
  agent's clock; ``baseline`` = the same textDocument/definition request made directly from Lua
  in the same Neovim (``client:request`` -> handler, vim.uv.hrtime), in halves alternating with
  the plugin's. Target: the plugin adds < 2 ms at p50.
* ``probe_during_20_concurrent``: the fake mm's ``/parallel 20 definition {...}`` (20 tool calls
  at once, each waiting on pylsp), repeated; a pynvim probe ``nvim.eval('1+1')`` every ~1 ms
  meanwhile; ``baseline`` = the probe with the editor idle. Target: p99 < 8 ms.

    .venv/bin/python bench/lsp_tools.py
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, bench_agent_opts, emit, plugin_editor, quantile, read_json, wait_file
from nvim_harness import wait_for
from plugin_harness import ALLOW_CLIENT_TOOLS, editor

BENCH = "lsp_tools"
PYLSP = REPO / ".venv" / "bin" / "pylsp"
TARGET_ADDED_MS = 2.0
TARGET_PROBE_P99_MS = 8.0
N, WARMUP, HALVES = 200, 20, 2
CONCURRENT, CONCURRENT_TURNS = 20, 10
ARGS = {"path": "main.py", "line": 6, "col": 14}

GREETER = "class Greeter:\n    def greet(self, name):\n        return 'hello ' + name\n"
MAIN = "from greeter import Greeter\n\n\ndef main():\n    g = Greeter()\n    return g.greet('x')\n"

SETUP = r"""
_G.bench_done = 0
vim.api.nvim_create_autocmd('User', { pattern = 'MiniMeTurnDone', callback = function()
  _G.bench_done = _G.bench_done + 1
end })
function _G.bench_start_pylsp(root, cmd, file)
  vim.cmd.edit(file)
  vim.lsp.start({ name = 'pylsp', cmd = { cmd }, root_dir = root,
    cmd_env = { XDG_CACHE_HOME = root .. '/.cache' } })
end
function _G.bench_ready(file)
  for _, c in ipairs(vim.lsp.get_clients({ bufnr = vim.fn.bufnr(file) })) do
    if c.initialized then return true end
  end
  return false
end
-- The same request the tool makes, straight from Lua: n in a row, each timed send -> handler.
function _G.bench_direct(file, n, line, col)
  local buf = vim.fn.bufnr(file)
  local client = vim.lsp.get_clients({ bufnr = buf })[1]
  local text = vim.api.nvim_buf_get_lines(buf, line - 1, line, false)[1]
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = line - 1,
      character = vim.str_utfindex(text, client.offset_encoding, col - 1, false) },
  }
  _G.bench_direct_ns = {}
  local i = 0
  local function one()
    local t0 = vim.uv.hrtime()
    client:request('textDocument/definition', params, function()
      table.insert(_G.bench_direct_ns, vim.uv.hrtime() - t0)
      i = i + 1
      if i < n then one() end
    end, buf)
  end
  one()
end
"""


def project(work: Path) -> Path:
    (work / "greeter.py").write_text(GREETER)
    (work / "main.py").write_text(MAIN)
    return work / "main.py"


def start_pylsp(nvim: Any, work: Path, main: Path) -> None:
    nvim.exec_lua(SETUP)
    nvim.exec_lua("_G.bench_start_pylsp(...)", str(work), str(PYLSP), str(main))
    wait_for(lambda: nvim.exec_lua("return _G.bench_ready(...)", str(main)), 60, message="pylsp")


def direct(nvim: Any, main: Path, n: int) -> list[float]:
    nvim.exec_lua("_G.bench_direct(...)", str(main), n, ARGS["line"], ARGS["col"])
    wait_for(lambda: nvim.exec_lua("return #_G.bench_direct_ns") >= n, 60, message="direct")
    return [v / 1e6 for v in nvim.exec_lua("return _G.bench_direct_ns")]


def bench_roundtrip(root: Path) -> None:
    work = root / "roundtrip"
    work.mkdir()
    main = project(work)
    plugin: list[float] = []
    lua: list[float] = []
    with plugin_editor(work, bench_agent_opts("request")) as nvim:
        start_pylsp(nvim, work, main)
        nvim.exec_lua("require('minime').ask('say warm up')")
        wait_for(lambda: nvim.exec_lua("return _G.bench_done") >= 1, 60, message="warm up")
        direct(nvim, main, WARMUP)
        for half in range(HALVES):
            out = work / f"plugin-{half}.json"
            prompt = f"tool definition {N // HALVES} {WARMUP} {out} {json.dumps(ARGS)}"
            nvim.exec_lua("require('minime').ask(...)", prompt)
            wait_file(out)
            wait_for(lambda h=half: nvim.exec_lua("return _G.bench_done") >= h + 2, 60)
            data = read_json(out)
            last = data["last"]
            if last.get("isError") or "greeter.py" not in last["content"][0]["text"]:
                raise RuntimeError(f"the tool failed: {last!r}")
            plugin.extend(v / 1e6 for v in data["ns"])
            lua.extend(direct(nvim, main, N // HALVES))
    p50, d50 = quantile(plugin, 0.5), quantile(lua, 0.5)
    emit(
        BENCH,
        "definition_roundtrip_p50",
        p50,
        "ms",
        p99=quantile(plugin, 0.99),
        baseline=d50,
        baseline_p99=quantile(lua, 0.99),
        baseline_of="the same textDocument/definition made directly from Lua",
        n=len(plugin),
    )
    added = p50 - d50
    emit(
        BENCH,
        "definition_added_p50",
        added,
        "ms",
        target=f"< {TARGET_ADDED_MS}",
        met=added < TARGET_ADDED_MS,
    )


def probe(nvim: Any, probes: list[float], until: Any, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    clock = time.perf_counter
    i = 0
    while time.monotonic() < deadline:
        t0 = clock()
        nvim.eval("1+1")
        probes.append((clock() - t0) * 1e3)
        i += 1
        if i % 10 == 0 and until():
            return
        time.sleep(0.001)
    raise RuntimeError(f"not done within {timeout} s")


def concurrent_probes(ed: Any, tool: str, args: dict[str, Any], needle: str) -> tuple[list, int]:
    """Probes during CONCURRENT_TURNS turns of CONCURRENT calls of `tool` at once; the number
    of answers holding `needle`."""
    busy: list[float] = []
    answered = 0
    for _ in range(CONCURRENT_TURNS):
        count = len(ed.done()) + 1
        ed.ask(f"/parallel {CONCURRENT} {tool} {json.dumps(args)}")
        probe(ed.nvim, busy, lambda c=count: len(ed.done()) >= c)
        this_turn = ed.turn_text().rsplit("/parallel", 1)[-1]
        answered += this_turn.count(f"client_{tool} -> {needle}")
    return busy, answered


def bench_concurrent(root: Path) -> None:
    work = root / "concurrent"
    work.mkdir()
    main = project(work)
    idle: list[float] = []
    with editor(work, permission_rules=ALLOW_CLIENT_TOOLS) as ed:
        nvim = ed.nvim
        start_pylsp(nvim, work, main)
        ed.turn("warm up")
        for _ in range(1000):
            t0 = time.perf_counter()
            nvim.eval("1+1")
            idle.append((time.perf_counter() - t0) * 1e3)
        # The same turns with a tool that needs no server: what the turn itself costs.
        plain, plain_answered = concurrent_probes(ed, "read_buffer", {"path": "main.py"}, '{"path"')
        busy, answered = concurrent_probes(ed, "definition", ARGS, '{"locations":[{"path":"greeter')
    emit(
        BENCH,
        "probe_p99_during_20_concurrent",
        quantile(busy, 0.99),
        "ms",
        p50=quantile(busy, 0.5),
        max=max(busy),
        baseline=quantile(idle, 0.99),
        baseline_of="idle probe p99",
        same_turns_read_buffer_p99=quantile(plain, 0.99),
        same_turns_read_buffer_max=max(plain),
        same_turns_read_buffer_answered=plain_answered,
        target=f"< {TARGET_PROBE_P99_MS}",
        met=quantile(busy, 0.99) < TARGET_PROBE_P99_MS,
        n=len(busy),
        calls=CONCURRENT * CONCURRENT_TURNS,
        answered=answered,
    )


def main() -> None:
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "procs")
    with tempfile.TemporaryDirectory(prefix="minime-bench-lsp-") as tmp:
        root = Path(os.path.realpath(tmp))
        bench_roundtrip(root)
        bench_concurrent(root)


if __name__ == "__main__":
    main()
