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
return { lua_kib = collectgarbage('count'), lines = vim.api.nvim_buf_line_count(s.buf),
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
            lost = 0
            for i in range(1, turns + 1):
                _, text = ed.turn(PROMPTS[kind].format(i=i))
                lost += f"echo: turn {i}" not in text
                if i not in CHECKPOINTS:
                    continue
                state = ed.lua(STATE, ed.cwd)
                host = host or host_pid(pid)
                rss = rss_mib(pid)
                if not first:
                    first = {"rss": rss, "lua": state["lua_kib"], "turns": i}
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
                }
                if i >= 300:
                    fields.update(target=f"<= {TARGET_RATIO} x", met=ratio <= TARGET_RATIO)
                if i >= 1000:
                    # The cap drops whole turns, keeping the last two: one turn over it at most.
                    fields["lines_met"] = state["lines"] <= MAX_LINES + ONE_TURN_LINES
                emit(BENCH, f"{kind}_nvim_rss_after_{i}_turns", rss, "MiB", **fields)
            emit(BENCH, f"{kind}_turns_lost", lost, "turns", turns=turns)


if __name__ == "__main__":
    main(sys.argv[1:])
