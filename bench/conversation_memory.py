#!/usr/bin/env python3
"""Neovim's memory over a day of turns in one conversation (issue 23).

One session, turns of the same kind one after another, the conversation float open, trimmed
as shipped (conversation.KEEP, MAX_LINES). Two kinds, each its own Neovim: ``echo`` (the fake
mm echoes the prompt: bench/load.py's turns) and ``tool`` (a client tool answering 300 lines,
then the echo: the float reaches its line cap within 100 turns). After 30, 100, 300 and
1,000 turns: Neovim's VmRSS, the Lua heap (``collectgarbage('count')`` after a full
collection), the float's lines and extmarks per namespace. ``baseline`` = the figure after 30
turns, in the same run. (The ``tool`` kind's ratio includes the float growing from ~15,000 to
its cap of 20,000 lines between 30 and 100 turns: text kept, not a leak.)

Targets: RSS after 300 turns <= 1.10 x after 30; after 1,000 turns the float stays within
its 20,000-line cap and RSS within the same bound.

    .venv/bin/python bench/conversation_memory.py [TURNS [KIND ...]]  # 1000, echo tool (~3 min)
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
return { lua_kib = collectgarbage('count'), lines = vim.api.nvim_buf_line_count(s.buf),
  bytes = vim.api.nvim_buf_get_offset(s.buf, vim.api.nvim_buf_line_count(s.buf)),
  marks = marks, undolevels = vim.bo[s.buf].undolevels,
  undo_seq = vim.fn.undotree(s.buf).seq_last }
"""


PROMPTS = {"echo": "turn {i}", "tool": "/tool big\nturn {i}"}


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
            first: dict[str, Any] = {}
            lost = 0
            for i in range(1, turns + 1):
                _, text = ed.turn(PROMPTS[kind].format(i=i))
                lost += f"echo: turn {i}" not in text
                if i not in CHECKPOINTS:
                    continue
                state = ed.lua(STATE, ed.cwd)
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
