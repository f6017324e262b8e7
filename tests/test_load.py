"""Load through the plugin: many calls at once, many sessions at once, many turns in a row.

Nothing may be lost: every call answered, every chunk rendered, in order. The figures (time,
the host's memory after 10 and after 1,000 turns) are bench/load.py's; here memory is only
checked loosely, for growth without bound.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from fake_mm import chunks_text
from helpers.procs import rss_kib
from helpers.wire import trace_rows
from nvim_harness import wait_for
from plugin_harness import ALLOW_CLIENT_TOOLS, Editor, editor


def model_reads(text: str, prefix: str) -> list[dict]:
    """The JSON answers the model read, each after ``prefix``. The float breaks long lines
    (nothing dropped: joined with "" they are the text), so the lines are joined first."""
    flat, decoder, found = text.replace("\n", ""), json.JSONDecoder(), []
    at = flat.find(prefix)
    while at >= 0:
        value, end = decoder.raw_decode(flat, at + len(prefix))
        found.append(value)
        at = flat.find(prefix, end)
    return found


def test_fifty_concurrent_client_tool_calls_on_one_session(tmp_path: Path) -> None:
    source = tmp_path / "notes.txt"
    source.write_text("".join(f"line {i}\n" for i in range(1, 201)))
    with editor(tmp_path, permission_rules=ALLOW_CLIENT_TOOLS) as ed:
        ed.nvim.command(f"edit {source}")
        done, text = ed.turn('/parallel 50 read_buffer {"path": "notes.txt"}', timeout=60)
        assert done["stop_reason"] == "end_turn"
        reads = model_reads(text, "client_read_buffer -> ")
        assert len(reads) == 50
        for answer in reads:
            assert answer["path"] == "notes.txt" and answer["total_lines"] == 200
            assert answer["text"].startswith("line 1\nline 2\n")
        headers = [line for line in text.splitlines() if line.startswith("⚙ ")]
        assert headers == ["⚙ client: read_buffer  [other] completed"] * 50
        # Over the wire: 50 requests, 50 answers to exactly those ids, no error among them.
        messages = trace_rows(tmp_path / "trace.jsonl")
        asked = {
            m["msg"]["id"]
            for m in messages
            if m["dir"] == "out" and m["msg"].get("method") == "_minime.nvim/tools/read_buffer"
        }
        answers = [
            m["msg"]
            for m in messages
            if m["dir"] == "in" and "method" not in m["msg"] and m["msg"].get("id") in asked
        ]
        assert len(asked) == 50 and len(answers) == 50
        assert all("result" in a and a["result"]["isError"] is False for a in answers)


def test_ten_cwds_with_a_session_each_and_their_turns_at_once(tmp_path: Path) -> None:
    dirs = []
    for i in range(10):
        d = tmp_path / f"project{i}"
        d.mkdir()
        dirs.append(os.path.realpath(d))
    with editor(tmp_path) as ed:
        for d in dirs:
            ed.nvim.command(f"cd {d}")
            ed.ask("/slow 40\n/chunks 1000 8")
        # All ten run at the same time (each lasts 2 s at least).
        wait_for(
            lambda: ed.lua("return require('minime.ui.turn').running_count()") == 10,
            30,
            message="for ten turns running at once",
        )
        ed.wait_done(10, timeout=60)
        done = ed.done()
        assert sorted(d["cwd"] for d in done) == dirs
        assert len({d["session_id"] for d in done}) == 10, "one session per cwd"
        assert {d["stop_reason"] for d in done} == {"end_turn"}
        slow = "\n".join(f"slow {i}" for i in range(40))
        chunks = "".join(chunks_text(1000, 8))
        for d in dirs:
            text = ed.turn_text(d)
            assert slow in text, d
            assert chunks in text.replace("\n", ""), d
        assert ed.turn_errors() == []
        rows = trace_rows(tmp_path / "trace.jsonl")
        initializes = [m for m in rows if m["msg"].get("method") == "initialize"]
        assert len(initializes) == 1, "one agent process for the ten sessions"


def run_turns(ed: Editor, first: int, last: int) -> None:
    for i in range(first, last):
        done, text = ed.turn(f"turn {i}")
        assert done["stop_reason"] == "end_turn"
        assert f"echo: turn {i}" in text
        assert f"turn {i - 1}" not in text, "each turn has the float to itself"


def test_a_hundred_turns_in_a_row_on_one_session(tmp_path: Path) -> None:
    with editor(tmp_path) as ed:
        run_turns(ed, 0, 10)
        host = ed.host_pid()
        after_10 = rss_kib(host)
        run_turns(ed, 10, 100)
        after_100 = rss_kib(host)
        done = ed.done()
        assert len(done) == 100
        assert len({d["session_id"] for d in done}) == 1
        assert ed.notes() == [] and ed.turn_errors() == []
        # Loose: a leak of a turn's worth of anything per turn would show; bench/load.py
        # records the figures over 1,000 turns.
        assert after_100 - after_10 < 30 * 1024, (after_10, after_100)
