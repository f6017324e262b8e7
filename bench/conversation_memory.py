#!/usr/bin/env python3
"""Neovim's memory over a day of turns in one conversation (issue 23).

One session, turns of the same kind one after another, the conversation float open, trimmed
as shipped (conversation.KEEP, MAX_LINES). Two kinds, each its own Neovim: ``echo`` (the fake
mm echoes the prompt: bench/load.py's turns), ``buffers`` (the same
with 20 files of 1,000 lines loaded from the cwd) and ``tool`` (a client tool answering 300 lines,
then the echo: the float reaches its line cap within 100 turns). After 30, 100, 300 and
1,000 turns: Neovim's VmRSS, the Lua heap (``collectgarbage('count')`` after a full
collection), the float's lines and extmarks per namespace. ``baseline`` = the figure after 30
turns, in the same run. (The ``tool`` kind's ratio includes the float growing from ~15,000 to
its cap of 20,000 lines between 30 and 100 turns: text kept, not a leak.)

Targets: RSS after 300 turns <= 1.10 x after 30; after 1,000 turns the float stays within
its 20,000-line cap and RSS within the same bound.

    .venv/bin/python bench/conversation_memory.py [TURNS [KIND ...]]  # 1000, echo tool buffers
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import BIG_TOOL_OPTS, rss_mib
from plugin_harness import FAKE_MM_BIN, agent_file, editor_with

BENCH = "conversation_memory"
CHECKPOINTS = (30, 100, 300, 1000)
TARGET_RATIO = 1.10
MAX_LINES = 20000
ONE_TURN_LINES = 500  # a tool turn here: ~310 lines
IDLE_S = 2.5  # minime.heap.IDLE_MS and a margin

STATE = """
collectgarbage('collect')
local s = require('minime.ui.turn').get(...)
local marks = {}
for name, ns in pairs(vim.api.nvim_get_namespaces()) do
  local n = #vim.api.nvim_buf_get_extmarks(s.buf, ns, 0, -1, {})
  if n > 0 then marks[name] = n end
end
-- glibc's malloc: bytes in use and free inside its arenas (free: fragmentation RSS keeps).
local malloc = {}
pcall(function()
  local ffi = require('ffi')
  pcall(ffi.cdef, [[struct minime_mallinfo2 { size_t arena, ordblks, smblks, hblks, hblkhd,
    usmblks, fsmblks, uordblks, fordblks, keepcost; };
    struct minime_mallinfo2 mallinfo2(void);]])
  local m = ffi.C.mallinfo2()
  malloc = { used_kib = tonumber(m.uordblks + m.hblkhd) / 1024,
    free_kib = tonumber(m.fordblks) / 1024 }
end)
-- LuaJIT's compiled traces: GC objects that collectgarbage('count') counts (~1.3 KiB each),
-- made as new paths get hot, flushed by LuaJIT itself at its maxtrace (1,000 by default).
local traces = 0
pcall(function()
  local info = require('jit.util').traceinfo
  for i = 1, 4000 do
    if info(i) then traces = i end
  end
end)
return { lua_kib = collectgarbage('count'), lines = vim.api.nvim_buf_line_count(s.buf),
  jit_traces = traces,
  malloc = malloc,
  bytes = vim.api.nvim_buf_get_offset(s.buf, vim.api.nvim_buf_line_count(s.buf)),
  marks = marks, undolevels = vim.bo[s.buf].undolevels,
  undo_seq = vim.fn.undotree(s.buf).seq_last }
"""


PROMPTS = {"echo": "turn {i}", "tool": "/tool big\nturn {i}", "buffers": "turn {i}"}
# ``buffers``: echo turns with files of the cwd loaded, as in a day's editing (the review's
# baseline copies each loaded buffer's text at every turn's start).
BUFFERS, BUFFER_LINES = 20, 1000

OPEN = """
for _, p in ipairs(...) do
  local b = vim.fn.bufadd(p)
  vim.bo[b].buflisted = true
  vim.fn.bufload(b)
end
"""


def rss_parts(pid: int) -> dict[str, float]:
    """VmRSS by mapping kind (MiB): malloc's main heap (``[heap]``), other anonymous memory
    (LuaJIT's GC arenas, malloc's mmap'd chunks and thread arenas, stacks) and files (the
    binary, libraries, parsers)."""
    parts = {"heap": 0, "anon": 0, "file": 0}
    kind = "anon"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5:
            name = head[5] if len(head) > 5 else ""
            kind = "heap" if name == "[heap]" else "file" if name.startswith("/") else "anon"
        elif head and head[0] == "Rss:":
            parts[kind] += int(head[1])
    return {f"rss_{k}": round(v / 1024, 3) for k, v in parts.items()}


def host_pid(nvim_pid: int) -> int:
    """The plugin's Python host: Neovim's child running ``minime.nvim``."""
    for child in Path(f"/proc/{nvim_pid}/task/{nvim_pid}/children").read_text().split():
        if b"minime.nvim" in Path(f"/proc/{child}/cmdline").read_bytes():
            return int(child)
    raise RuntimeError("no host process")


def open_buffers(ed: Any, work: Path) -> None:
    paths = []
    for n in range(BUFFERS):
        path = work / f"file{n:02d}.py"
        path.write_text("".join(f"line {j} of file {n}\n" for j in range(BUFFER_LINES)))
        paths.append(str(path))
    ed.lua(OPEN, paths)


def pause(ed: Any) -> int | None:
    """The user pauses after a turn: wait for the idle heap trim (minime.heap) to run; a tree
    without it (an older checkout) waits as long. Returns the trims done so far (None: none)."""
    heap = "local ok, h = pcall(require, 'minime.heap') return ok and h.trims or vim.NIL"
    before = ed.lua(heap)
    if before is None:
        time.sleep(IDLE_S)
        return None
    deadline = time.monotonic() + IDLE_S + 5.0
    while ed.lua(heap) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    return ed.lua(heap)


def main(argv: list[str]) -> None:
    turns = int(argv[0]) if argv else CHECKPOINTS[-1]
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "procs")
    for kind in argv[1:] or PROMPTS:
        run(kind, turns)
    emit(BENCH, "loadavg_1m_at_end", os.getloadavg()[0], "procs")


def run(kind: str, turns: int) -> None:
    with tempfile.TemporaryDirectory(prefix="minime-bench-memory-") as tmp:
        work = Path(os.path.realpath(tmp))
        opts = BIG_TOOL_OPTS % (FAKE_MM_BIN, agent_file(work, trace=False))
        with editor_with(work, opts, timeout=60.0) as ed:
            pid = ed.lua("return vim.fn.getpid()")
            host = 0
            if kind == "buffers":
                open_buffers(ed, work)
            first: dict[str, Any] = {}
            at_cap = 0.0
            lost = 0
            for i in range(1, turns + 1):
                # The harness keeps every MiniMeTurnDone's data in _G.done (~0.45 KiB each:
                # 450 KiB of Lua heap over 1,000 turns, counted as Neovim's before): not ours.
                ed.lua("_G.done = {}")
                _, text = ed.turn(PROMPTS[kind].format(i=i))
                lost += f"echo: turn {i}" not in text
                if i not in CHECKPOINTS:
                    continue
                trims = pause(ed)
                state = ed.lua(STATE, ed.cwd)
                host = host or host_pid(pid)
                rss = rss_mib(pid)
                if not first:
                    first = {"rss": rss, "lua": state["lua_kib"], "turns": i}
                if i == 100:
                    at_cap = rss
                ratio = rss / first["rss"]
                fields: dict[str, Any] = {
                    "baseline": first["rss"],
                    "baseline_of": f"RSS after {first['turns']} turns, same run",
                    "ratio": ratio,
                    "lua_kib": state["lua_kib"],
                    "lua_kib_baseline": first["lua"],
                    "malloc_used_kib": state["malloc"].get("used_kib"),
                    "malloc_free_kib": state["malloc"].get("free_kib"),
                    "host_rss": rss_mib(host),
                    "float_lines": state["lines"],
                    "float_bytes": state["bytes"],
                    "extmarks": state["marks"],
                    "undo_seq": state["undo_seq"],
                    "malloc_trims": trims,
                    "jit_traces": state["jit_traces"],
                    **rss_parts(pid),
                }
                if i >= 300:
                    fields.update(target=f"<= {TARGET_RATIO} x", met=ratio <= TARGET_RATIO)
                if i > 100 and at_cap:
                    # The tool kind's float fills to its cap between 30 and 100 turns (text
                    # kept): the ratio to turn 100 is the growth at the cap alone.
                    fields["ratio_to_100_turns"] = rss / at_cap
                if i >= 1000:
                    # The cap drops whole turns, keeping the last two: one turn over it at most.
                    fields["lines_met"] = state["lines"] <= MAX_LINES + ONE_TURN_LINES
                emit(BENCH, f"{kind}_nvim_rss_after_{i}_turns", rss, "MiB", **fields)
            emit(BENCH, f"{kind}_turns_lost", lost, "turns", turns=turns)


if __name__ == "__main__":
    main(sys.argv[1:])
