"""The thread list across restarts (:h minime-threads-saved): each thread's record (agent,
session id, title, cwd, worktree) is one file in stdpath('data')/minime/threads/; a second
Neovim on the same data directory lists them in :MiniMeThreads and `<CR>` reopens one
(session/load, its history replayed), or says why it cannot.

Real headless Neovims (two at once where it matters) sharing one XDG_DATA_HOME, their Python
hosts, the fake mm and tests/agents/shapes.py. Asserted: the files (whole JSON, never half),
the overview's lines, what crossed the wire (the fake's trace), the conversation, the notes.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from helpers.wire import trace
from nvim_harness import start, wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, init

SHAPES = Path(__file__).parent / "agents" / "shapes.py"


@contextlib.contextmanager
def neovim(cwd: Path, data: Path, opts: Any) -> Iterator[Editor]:
    """A Neovim in ``cwd`` whose data directory is ``data`` (shared by the Neovims of a test)."""
    with start(init(opts), env={"XDG_DATA_HOME": str(data)}) as nvim:
        nvim.command(f"cd {cwd}")
        yield Editor(nvim, cwd, timeout=30.0)


def records(data: Path) -> dict[str, dict[str, Any]]:
    """The records kept, by thread id (each file whole JSON: a half-written one fails here)."""
    folder = data / "nvim" / "minime" / "threads"
    if not folder.exists():
        return {}
    kept = {}
    for path in folder.iterdir():
        if path.name.endswith(".json"):
            try:
                text = path.read_text()
            except FileNotFoundError:  # removed between the listing and the read: gone
                continue
            kept[path.stem] = json.loads(text)
    return kept


def overview(ed: Editor) -> list[str]:
    return ed.lua(
        "local b = require('minime.ui.threads').buf()"
        " return b and vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}"
    )


def on_line_of(ed: Editor, thread_id: str) -> None:
    ids = [t["id"] for t in ed.lua("return require('minime.threads').all()")]
    ed.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", ids.index(thread_id) + 1)


def ask_in(ed: Editor, thread_id: str, text: str) -> None:
    count = len(ed.done()) + 1
    ed.lua("local text, id = ... require('minime').ask(text, nil, id)", text, thread_id)
    ed.wait_done(count)


def test_a_restart_lists_the_threads_and_reopens_one(tmp_path: Path) -> None:
    """Neovim 1 runs two threads and quits; Neovim 2 reads nothing at start-up, lists both
    "saved" in :MiniMeThreads, and <CR> loads the first one's session in its cwd: its history
    replays into its conversation and the next ask continues it."""
    data = tmp_path / "data"
    config = agent_file(tmp_path)
    opts = {"mm": FAKE_MM_BIN, "config": config}
    with neovim(tmp_path, data, opts) as ed:
        first = ed.lua("return require('minime.actions').thread_of()")
        ask_in(ed, first, "/say refactor the parser")
        ed.nvim.command("MiniMeNew")
        second = ed.lua("return require('minime.threads').current()")
        ask_in(ed, second, "/say write the docs")
        sessions = {
            t["id"]: t["session_id"] for t in ed.lua("return require('minime.threads').all()")
        }
        wait_for(
            lambda: {k: r.get("session_id") for k, r in records(data).items()} == sessions,
            10,
            message="for both records",
        )
    kept = records(data)
    assert kept[first]["title"] == "/say refactor the parser"
    assert kept[first]["cwd"] == os.path.realpath(tmp_path) and kept[first]["agent"] == "mm"
    # The agent kept the first session (a real agent stores its own): the fake replays it.
    history = [{"role": "user", "text": "refactor the parser"}, {"role": "agent", "text": "Done."}]
    stored = {"sessionId": sessions[first], "cwd": os.path.realpath(tmp_path), "history": history}
    data_file = yaml.safe_load(Path(config).read_text())
    data_file["fake"]["load_sessions"] = [stored]
    Path(config).write_text(yaml.safe_dump(data_file))

    with neovim(tmp_path, data, opts) as ed:
        assert ed.lua("return package.loaded['minime.thread_store'] == nil"), "read at start-up"
        ed.nvim.command("MiniMeThreads")
        lines = wait_for(lambda: len(overview(ed)) == 2 and overview(ed), 10, message="listed")
        assert all(" saved " in line for line in lines), lines
        assert "refactor the parser" in lines[0] and "write the docs" in lines[1]
        on_line_of(ed, first)
        ed.nvim.input("<CR>")
        ed.wait_done(1)
        loads = [m["params"] for m in trace(tmp_path, "in") if m.get("method") == "session/load"]
        assert [(p["sessionId"], p["cwd"]) for p in loads] == [
            (sessions[first], os.path.realpath(tmp_path))
        ]
        text = ed.conversation_text()
        assert "refactor the parser" in text and "Done." in text
        assert ed.lua("return require('minime.threads').current()") == first
        assert " saved " not in overview(ed)[0] and " saved " in overview(ed)[1]
        ask_in(ed, first, "/say continued")
        prompts = [
            m["params"] for m in trace(tmp_path, "in") if m.get("method") == "session/prompt"
        ]
        assert prompts[-1]["sessionId"] == sessions[first], "the reopened session continues"
        assert records(data)[first]["session_id"] == sessions[first]


def test_an_agent_that_cannot_reopen_says_so(tmp_path: Path) -> None:
    data = tmp_path / "data"
    agent = {"cmd": [sys.executable, str(SHAPES)], "label": "shapes-agent",
             "env": {"SHAPES_NO_SESSIONS": "1"}}  # fmt: skip
    with neovim(tmp_path, data, {"agent": agent}) as ed:
        ed.turn("ping")
        wait_for(lambda: records(data), 10, message="for the record")
    with neovim(tmp_path, data, {"agent": agent}) as ed:
        ed.nvim.command("MiniMeThreads")
        wait_for(lambda: " saved " in "".join(overview(ed)), 10, message="listed")
        ed.nvim.input("<CR>")
        ed.wait_note("minime: shapes-agent cannot reopen sessions")


def test_two_neovims_at_once_keep_each_others_threads_and_close_their_own(
    tmp_path: Path,
) -> None:
    """Two Neovims on one data directory run threads at once: each one's records are there,
    whole; each lists the other's as saved; a closed thread's record goes (closed where it
    runs, or as a saved one elsewhere); past the bound the oldest go."""
    data = tmp_path / "data"
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    pick_first = "vim.ui.select = function(items, _, on_choice) on_choice(items[1], 1) end"
    opts_a = {"mm": FAKE_MM_BIN, "config": agent_file(a_dir)}
    opts_b = {"mm": FAKE_MM_BIN, "config": agent_file(b_dir)}
    with neovim(a_dir, data, opts_a) as a, neovim(b_dir, data, opts_b) as b:
        a.lua(pick_first)
        ids: dict[str, list[str]] = {"a": [], "b": []}
        for n in range(3):
            for name, ed in (("a", a), ("b", b)):
                if n:
                    ed.nvim.command("MiniMeNew")
                ids[name].append(ed.lua("return require('minime.actions').thread_of()"))
                ed.ask(f"/say {name} {n}")
        for ed in (a, b):
            ed.wait_done(3)
        everything = set(ids["a"]) | set(ids["b"])
        wait_for(lambda: set(records(data)) == everything, 10, message="six records")
        assert {r["title"] for r in records(data).values()} == {
            f"/say {name} {n}" for name in "ab" for n in range(3)
        }
        # B lists A's threads as saved, beside its own.
        b.nvim.command("MiniMeThreads")
        wait_for(lambda: len(overview(b)) == 6, 10, message="B's list")
        saved = [line for line in overview(b) if " saved " in line]
        assert len(saved) == 3 and all("/say a " in line for line in saved), overview(b)
        # A closes one, and deletes one (confirmed): their records go.
        a.nvim.command("MiniMeThreads")
        wait_for(lambda: len(overview(a)) == 6, 10, message="A's list, B's threads read")
        on_line_of(a, ids["a"][0])
        a.nvim.input("x")
        a.wait_note("closed")
        wait_for(lambda: set(records(data)) == everything - {ids["a"][0]}, 10,
                 message="the closed thread's record to go")  # fmt: skip
        # B closes one of A's, saved: its record goes too.
        on_line_of(b, ids["a"][1])
        b.nvim.input("x")
        wait_for(lambda: set(records(data)) == everything - set(ids["a"][:2]), 10,
                 message="the saved thread's record to go")  # fmt: skip
        # The bound: past it, the oldest records without a worktree go.
        b.lua("require('minime.thread_store').MAX = 2")
        b.nvim.command("MiniMeNew")
        b.ask("/say b 3")
        b.wait_done(4)
        newest = b.lua("return require('minime.threads').current()")
        # Two kept, the newest among them (a prune run by an older thread's save can pass
        # through two records before the newest one is written).
        wait_for(lambda: len(records(data)) == 2 and newest in records(data), 10,
                 message="the oldest to go, the newest kept")  # fmt: skip


# A seeded random sequence of saves and removes, the same one in two Neovims (their own ids),
# as fast as Lua can issue them: the writes of one id overlap and are coalesced.
STORE_SEQUENCE = """
local seed, prefix, steps = ...
local store = require('minime.thread_store')
math.randomseed(seed)
local model = {}
for i = 1, steps do
  local id = ('t%s-%d'):format(prefix, math.random(1, 8))
  if math.random() < 0.25 then
    store.remove(id)
    model[id] = nil
  else
    local title = ('%s step %d'):format(prefix, i)
    store.save({ id = id, cwd = '/w', agent = 'mm', label = 'mm', title = title,
                 session_id = 's' .. i, updated = i })
    model[id] = title
  end
end
_G.model = model
"""


def test_random_saves_and_removes_from_two_neovims(tmp_path: Path) -> None:
    """Whatever the order of saves and removes, from two Neovims at once, the directory ends
    holding exactly each Neovim's last word for each of its ids, every file whole."""
    seed = int(os.environ.get("MINIME_SEED", random.randrange(1 << 30)))
    print(f"seed {seed}")
    data = tmp_path / "data"
    with start(env={"XDG_DATA_HOME": str(data)}) as a, start(env={"XDG_DATA_HOME": str(data)}) as b:
        a.exec_lua(STORE_SEQUENCE, seed, "a", 300)
        b.exec_lua(STORE_SEQUENCE, seed + 1, "b", 300)
        want = {**a.exec_lua("return _G.model"), **b.exec_lua("return _G.model")}

        def titles() -> dict[str, str]:
            return {k: r["title"] for k, r in records(data).items()}

        def leftovers() -> list[str]:
            """Files that are not records: a write in flight, or one left behind."""
            folder = data / "nvim/minime/threads"
            return [p.name for p in folder.iterdir() if not p.name.endswith(".json")]

        def settled() -> bool:
            return all(ed.exec_lua("return require('minime.thread_store').idle()") for ed in (a, b))

        # Both Neovims' writes done, then each id's last word is on disk and no file is left
        # half-written (a tmp file then was left behind).
        deadline = time.monotonic() + 10
        while not settled() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert settled(), f"seed {seed}: writes still in flight"
        assert titles() == want, f"seed {seed}"
        assert not leftovers(), f"seed {seed}: {leftovers()}"
