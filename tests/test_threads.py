"""Threads (issue 29, :h minime-threads): several conversations at once, in one cwd or several,
of one agent or several — each one session with its own buffer, queue and prompts.

A real headless Neovim, its Python host and the fake mm (a second definition runs it as
another agent). Asserted: what each thread's conversation holds, the notifications, the
overview's lines, which windows show what, the agent processes, and the prompts that crossed
the wire (the fake's trace).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import process_gone
from helpers.wire import trace
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor, editor_with


def current(ed: Editor) -> str:
    return ed.lua("return require('minime.threads').current()")


def conversation(ed: Editor, thread: str) -> str:
    return ed.lua(
        "local t = require('minime.ui.turn').get(...)"
        " return t and table.concat(vim.api.nvim_buf_get_lines(t.buf, 0, -1, false), '\\n') or ''",
        thread,
    )


def turn(ed: Editor, thread: str) -> dict[str, Any]:
    return ed.lua("return require('minime.ui.turn').get(...) or {}", thread)


def thread(ed: Editor, thread_id: str) -> dict[str, Any] | None:
    return ed.lua("return require('minime.threads').get(...)", thread_id)


def ask_in(ed: Editor, thread_id: str, text: str) -> None:
    ed.lua("local text, id = ... require('minime').ask(text, nil, id)", text, thread_id)


def done_of(ed: Editor, thread_id: str) -> list[dict[str, Any]]:
    return [d for d in ed.done() if d.get("thread") == thread_id]


def wait_done_of(ed: Editor, thread_id: str, count: int = 1) -> dict[str, Any]:
    wait_for(lambda: len(done_of(ed, thread_id)) >= count, ed.done_timeout, message="the end")
    return done_of(ed, thread_id)[count - 1]


def agent_pids(ed: Editor) -> list[int]:
    return [int(p) for p in ed.lua("return vim.tbl_keys(require('minime.host').agents)")]


def turn_windows(ed: Editor) -> list[tuple[int, int]]:
    """(window, buffer) of each window of this tab page showing a conversation."""
    return ed.lua(
        "local out = {} for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do"
        " local b = vim.api.nvim_win_get_buf(w)"
        " if vim.b[b].minime == 'turn' then out[#out + 1] = { w, b } end end return out"
    )


def prompts_by_session(directory: Path) -> list[tuple[str, str]]:
    return [
        (m["params"]["sessionId"], "".join(b.get("text", "") for b in m["params"]["prompt"]))
        for m in trace(directory, "in")
        if m.get("method") == "session/prompt"
    ]


def test_two_threads_in_one_cwd_stream_at_once(tmp_path: Path) -> None:
    """A slow turn in one thread; quick turns start and end in a second meanwhile. Each buffer
    holds only its own turns; one agent process serves both; the panel switches buffer."""
    with editor(tmp_path) as ed:
        ed.ask("/slow 400")
        first = current(ed)
        ed.wait_text("slow 0")
        ed.nvim.command("MiniMeNew")
        second = current(ed)
        assert second != first and not second.startswith("/")
        assert ed.lua("return vim.b[require('minime.ui.turn').get(...).buf].minime_thread", second)
        for n, word in enumerate(("one", "two", "three"), 1):
            ed.ask(f"/say quick {word}")
            assert wait_done_of(ed, second, n)["stop_reason"] == "end_turn"
        assert turn(ed, first)["running"], "the slow turn still runs"
        mine, other = conversation(ed, second), conversation(ed, first)
        assert [x for x in mine.splitlines() if x.startswith(">")] == [
            "> /say quick one",
            "> /say quick two",
            "> /say quick three",
        ]
        assert "slow" not in mine
        assert "quick" not in other and "> /slow 400" in other
        # One panel, showing the current thread's conversation (its buffer switched).
        (shown,) = turn_windows(ed)
        assert shown[1] == turn(ed, second)["buf"]
        assert len(agent_pids(ed)) == 1, "two threads of one agent: one process"
        sessions = {sid for sid, _ in prompts_by_session(tmp_path)}
        assert len(sessions) == 2
        assert ed.lua("return require('minime').statusline()").endswith(" · 1 running")
        ed.lua("require('minime').cancel(...)", first)
        assert wait_done_of(ed, first)["stop_reason"] == "cancelled"
        assert [d["thread"] for d in ed.done()].count(second) == 3


def test_a_permission_in_a_thread_not_on_screen(tmp_path: Path) -> None:
    """Its float opens without taking the focus and names the thread; one line says so; the
    statusline counts it; answering it ends that thread's turn only."""
    with editor(tmp_path) as ed:
        first = ed.lua("return require('minime.actions').thread_of()")
        ed.nvim.command("MiniMeNew")
        code = ed.lua("return vim.api.nvim_get_current_win()")
        ask_in(ed, first, "/bash echo hi")
        note = ed.wait_note("waiting for permission")
        assert note == "minime: mm · /bash echo hi: waiting for permission (:MiniMeThreads)"
        win = ed.permission_win()
        title = "".join(part[0] for part in ed.float_config(win)["title"])
        assert "mm · /bash echo hi" in title
        assert ed.lua("return vim.api.nvim_get_current_win()") == code
        assert ed.lua("return require('minime.threads').get(...).state", first) == "waiting"
        assert ed.lua("return require('minime').statusline()").endswith(" · 1 waits")
        ed.answer_permission("1")
        assert wait_done_of(ed, first)["stop_reason"] == "end_turn"
        assert "bash -> ran: echo hi" in conversation(ed, first)
        assert conversation(ed, current(ed)) == ""


OTHER_AGENT = """
return {{
  label = "other",
  cmd = {{ {bin!r}, "-acp", "-config", {config!r} }},
  env = {{ MINIME_TEST_OTHER = "1" }},
  editor_tools = "none",
}}
"""


def test_a_thread_of_another_agent_beside_an_mm_thread(tmp_path: Path) -> None:
    """:MiniMeNew other: a second agent process; two mm threads would share one."""
    rtp = tmp_path / "rtp"
    (rtp / "lua" / "minime" / "agents").mkdir(parents=True)
    config = agent_file(tmp_path, name="other.yaml", trace=False)
    definition = OTHER_AGENT.format(bin=FAKE_MM_BIN, config=config)
    (rtp / "lua" / "minime" / "agents" / "other.lua").write_text(definition)
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    before = f"vim.opt.rtp:prepend({str(rtp)!r})"
    with editor_with(tmp_path, opts, before, timeout=30.0) as ed:
        ed.turn("/say from mm")
        mm_thread = current(ed)
        assert "other" in ed.nvim.call("getcompletion", "MiniMeNew ", "cmdline")
        ed.nvim.command("MiniMeNew other")
        other = current(ed)
        assert turn(ed, other)["agent"] == "other"
        ed.turn("/say from the other")
        assert "from the other" in conversation(ed, other)
        assert "from the other" not in conversation(ed, mm_thread)
        assert len(agent_pids(ed)) == 2, "threads of different agents: one process each"
        assert thread(ed, other)["label"] == "other"
        ed.nvim.command("MiniMeNew")  # the configured agent again: mm's process
        ed.turn("/say mm again")
        assert len(agent_pids(ed)) == 2
        ed.nvim.command("MiniMeStop")
        ed.wait_note("minime: stopped 3 threads' agents (mm, other)")


def overview_lines(ed: Editor) -> list[str]:
    return ed.lua(
        "local b = require('minime.ui.threads').buf()"
        " return b and vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}"
    )


def on_line_of(ed: Editor, thread_id: str) -> None:
    """The cursor on the overview's line of ``thread_id``."""
    ed.nvim.command("MiniMeThreads")
    ids = ed.lua("return require('minime.threads').all()")
    row = next(i for i, t in enumerate(ids, 1) if t["id"] == thread_id)
    ed.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", row)


def test_closing_a_thread_mid_turn(tmp_path: Path) -> None:
    """`x` in the overview: the turn is cancelled and drawn, the thread and its buffer go; the
    other thread's agent (the same process) goes on; closing the last thread ends it."""
    with editor(tmp_path) as ed:
        ed.ask("/slow 400")
        doomed = current(ed)
        ed.wait_text("slow 0")
        ed.nvim.command("MiniMeNew")
        kept = current(ed)
        ed.turn("/say still here")
        (pid,) = agent_pids(ed)
        buf = turn(ed, doomed)["buf"]
        on_line_of(ed, doomed)
        assert any("running" in x and "/slow 400" in x for x in overview_lines(ed))
        ed.nvim.input("x")
        assert wait_done_of(ed, doomed)["stop_reason"] == "cancelled"
        ed.wait_note("minime: thread mm · /slow 400 closed")
        wait_for(lambda: thread(ed, doomed) is None, ed.timeout, message="the thread gone")
        assert not ed.lua("return vim.api.nvim_buf_is_valid(...)", buf)
        assert all("/slow 400" not in x for x in overview_lines(ed))
        assert not process_gone(pid)
        ed.turn("/say after the close")
        assert "after the close" in conversation(ed, kept)
        on_line_of(ed, kept)
        ed.nvim.input("x")
        wait_for(lambda: process_gone(pid), 15, message="the agent no thread uses to end")


def test_new_thread_mid_turn_and_mid_start_up(tmp_path: Path) -> None:
    """:MiniMeNew while the agent still starts for the first ask: the second thread's ask
    waits for the same start, never behind the first ask; each answer lands in its thread."""
    gate = tmp_path / "initialize.go"
    config = agent_file(tmp_path, fake={"hold_initialize": str(gate)})
    with editor(tmp_path, config=config) as ed:
        ed.ask("/slow 200")
        first = current(ed)
        wait_for(
            lambda: any(m.get("method") == "initialize" for m in trace(tmp_path, "in")),
            ed.timeout,
            message="initialize sent",
        )
        ed.nvim.command("MiniMeNew")
        second = current(ed)
        ed.ask("/say second thread")
        gate.write_text("")
        assert wait_done_of(ed, second)["stop_reason"] == "end_turn"
        assert turn(ed, first)["running"], "the first ask's turn runs on"
        assert "second thread" in conversation(ed, second)
        assert "second thread" not in conversation(ed, first)
        assert len(agent_pids(ed)) == 1
        # Mid-turn: a third thread's ask does not queue behind the slow turn either.
        ed.nvim.command("MiniMeNew")
        third = current(ed)
        ed.ask("/say third")
        assert wait_done_of(ed, third)["stop_reason"] == "end_turn"
        assert turn(ed, first)["running"]
        assert turn(ed, first)["queued"] == [] and turn(ed, third)["queued"] == []
        ed.lua("require('minime').cancel(...)", first)
        wait_done_of(ed, first)


def test_every_command_acts_on_the_thread_of_its_window(tmp_path: Path) -> None:
    """From a window of another thread's conversation, :MiniMeCancel and :MiniMeReset act on
    that thread, not on the current one; the current thread is untouched."""
    with editor(tmp_path) as ed:
        ed.ask("/slow 400")
        other = current(ed)
        ed.wait_text("slow 0")
        ed.nvim.command("MiniMeNew")
        ed.turn("/say mine")
        mine = current(ed)
        ed.nvim.command(f"botright sbuffer {turn(ed, other)['buf']}")
        ed.nvim.command("MiniMeCancel")
        assert wait_done_of(ed, other)["stop_reason"] == "cancelled"
        assert len(done_of(ed, mine)) == 1
        ed.nvim.command("MiniMeReset")
        ed.wait_note("minime: new conversation for")
        wait_for(lambda: conversation(ed, other) == "", ed.timeout, message="the reset")
        assert "> /say mine" in conversation(ed, mine)
        assert ed.lua("return require('minime.threads').here()") == other
        ed.nvim.command("wincmd p")


def test_the_overview_updates_in_place_and_switches_threads(tmp_path: Path) -> None:
    """:MiniMeThreads lists every thread (all cwds); a state change redraws its line without
    moving the cursor's window; `r` renames; `<CR>` shows that thread in the same panel."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with editor(tmp_path) as ed:
        ed.turn("/say in the first")
        first = current(ed)
        ed.nvim.command("MiniMeNew")
        second = current(ed)
        ed.nvim.command("MiniMeThreads")
        overview = ed.lua("return vim.api.nvim_get_current_win()")
        assert ed.lua("return vim.b.minime") == "threads"
        lines = overview_lines(ed)
        assert len(lines) == 2
        assert "done" in lines[0] and "/say in the first" in lines[0]
        assert lines[1].startswith("●") and "idle" in lines[1]
        ask_in(ed, second, "/say second")
        wait_done_of(ed, second)
        wait_for(lambda: "/say second" in overview_lines(ed)[1], ed.timeout, message="redrawn")
        assert ed.lua("return vim.api.nvim_get_current_win()") == overview
        ed.lua("vim.ui.input = function(_, done) done('the \\27[2J renamed') end")
        ed.lua("vim.api.nvim_win_set_cursor(0, { 1, 0 })")
        ed.nvim.input("r")
        wait_for(lambda: "renamed" in overview_lines(ed)[0], ed.timeout, message="renamed")
        assert "\x1b" not in overview_lines(ed)[0], "an escape is never drawn as it is"
        ed.nvim.input("<CR>")
        wait_for(lambda: current(ed) == first, ed.timeout, message="the first is current")
        (shown,) = turn_windows(ed)
        assert shown[1] == turn(ed, first)["buf"], "the same panel shows the first thread"
        # A thread in another cwd is listed too.
        ed.nvim.command(f"tcd {elsewhere}")
        ed.turn("/say far away")
        assert any("far away" in x and str(elsewhere.name) in x for x in overview_lines(ed)), (
            overview_lines(ed)
        )


SHAPES = Path(__file__).parent / "agents" / "shapes.py"
PICK = """
vim.ui.select = function(items, opts, on_choice)
  _G.picked = _G.picked or {}
  table.insert(_G.picked, opts.prompt)
  _G.pick = function(i) on_choice(items[i], i) end
end
"""


def test_x_closes_and_d_deletes_where_the_agent_offers_them(tmp_path: Path) -> None:
    """An agent advertising session/close and session/delete: `x` sends session/close, `d`
    asks first and sends session/delete only once confirmed; each thread leaves the list."""
    import sys

    wire = tmp_path / "managed.txt"
    agent = {"cmd": [sys.executable, str(SHAPES)], "label": "shapes-agent",
             "env": {"SHAPES_MANAGE": str(wire)}}  # fmt: skip
    with editor_with(tmp_path, {"agent": agent}, PICK, timeout=30.0) as ed:
        ed.turn("ping")
        closed = current(ed)
        ed.nvim.command("MiniMeNew")
        ed.turn("ping")
        deleted = current(ed)
        on_line_of(ed, closed)
        ed.nvim.input("x")
        ed.wait_note("minime: thread shapes-agent · ping closed")
        on_line_of(ed, deleted)
        ed.nvim.input("d")
        wait_for(lambda: ed.lua("return _G.picked"), ed.timeout, message="the confirmation")
        ed.lua("_G.pick(2)")  # Keep it
        assert thread(ed, deleted) is not None
        ed.nvim.input("d")
        wait_for(lambda: len(ed.lua("return _G.picked")) == 2, ed.timeout, message="asked again")
        ed.lua("_G.pick(1)")  # Delete … for good
        ed.wait_note("minime: thread shapes-agent · ping closed, its session deleted")
        assert wire.read_text().splitlines() == [
            "session/close shapes-1",
            "session/delete shapes-2",
        ]
        assert ed.lua("return #require('minime.threads').all()") == 0
        assert overview_lines(ed)[0].startswith("no threads yet")
