"""The errors and warnings a turn caused, back to the agent (issue 31, :h minime-feedback),
through the whole stack: the fake mm writes files, a real language server (pyrefly from the
venv, started with vim.lsp.start as a user's config would) publishes, and lua/minime/feedback/
diagnostics.lua says what is new under the turn; :MiniMeFix, `f` and ``feedback.diagnostics =
"auto"`` send them. A server that never publishes (tests/agents/silent_lsp.py) costs at most
the wait and says nothing.

Asserted: the conversation's lines, where <CR> goes, what crossed the wire (the prompts), and
how long the pass after a turn took (M.last).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.wire import prompts_by_session, trace
from nvim_harness import LSP_ATTACHED, REPO, wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor_with

PYREFLY = REPO / ".venv" / "bin" / "pyrefly"
SILENT = [sys.executable, str(REPO / "tests" / "agents" / "silent_lsp.py")]

START_SERVER = """
local root, cmd = ...
vim.api.nvim_create_autocmd('FileType', { pattern = 'python', callback = function(ev)
  vim.lsp.start({ name = 'server', cmd = cmd, root_dir = root }, { bufnr = ev.buf })
end })
"""

IDLE = "return (require('minime.feedback.diagnostics').running[...] or 0) == 0"
ALLOW_WRITES = [{"pattern": "Write *", "decision": "allow"}]
FIX = "Fix the new errors and warnings"


@contextlib.contextmanager
def lsp_editor(
    tmp_path: Path,
    files: dict[str, str],
    server: list[str] | None = None,
    fake: dict[str, Any] | None = None,
    **opts: Any,
) -> Iterator[Editor]:
    """An editor in ``tmp_path/project`` holding ``files``, each loaded with the server attached
    and its first diagnostics published."""
    if server is None and not PYREFLY.exists():
        pytest.skip("pyrefly is not installed (scripts/setup installs it)")
    project = tmp_path / "project"
    project.mkdir()
    for name, text in files.items():
        (project / name).write_text(text)
    config = agent_file(tmp_path, fake=fake or {})
    options = {"mm": FAKE_MM_BIN, "config": config, "permission_rules": ALLOW_WRITES, **opts}
    with editor_with(project, options, timeout=30.0) as ed:
        cmd = server or [str(PYREFLY), "lsp"]
        ed.lua(START_SERVER, str(project), cmd)
        for name in files:
            ed.nvim.command(f"edit {project / name}")
            path = str(project / name)
            wait_for(lambda path=path: ed.lua(LSP_ATTACHED, path), 30, message="the server")
        if server is None:
            for name in files:  # pyrefly has published for each (an error where one is)
                buf = ed.lua("return vim.fn.bufnr(...)", str(project / name))
                wait_for(
                    lambda buf=buf, name=name: published(ed, buf) == ("bad" in name),
                    30,
                    message=f"pyrefly's diagnostics of {name}",
                )
        yield ed


def published(ed: Editor, buf: int) -> bool:
    return ed.lua("return #vim.diagnostic.get(...) > 0", buf)


def thread(ed: Editor) -> str:
    return ed.lua("return require('minime.threads').current()")


def passes(ed: Editor, key: str) -> int:
    return ed.lua("return require('minime.feedback.diagnostics').passes[...] or 0", key)


def last_pass(ed: Editor, key: str) -> dict[str, Any]:
    return ed.lua("return require('minime.feedback.diagnostics').last[...]", key)


def turn_and_pass(ed: Editor, text: str) -> str:
    """Ask, wait for the turn and the diagnostics pass after it: the conversation's text."""
    before = 0
    if ed.done():  # the pass of the turn before has ended: the next one counted is this turn's
        key = thread(ed)
        wait_for(lambda: ed.lua(IDLE, key), 10, message="the last pass to end")
        before = passes(ed, key)
    ed.turn(text)
    key = thread(ed)
    wait_for(lambda: passes(ed, key) > before, 10, message="the diagnostics pass")
    return ed.conversation_text()


def prompts(directory: Path) -> list[str]:
    return [text for _, text in prompts_by_session(directory)]


def row_of(ed: Editor, prefix: str) -> int:
    """The 1-based row of the conversation's last line starting with ``prefix``."""
    lines = ed.conversation_lines()
    return max(i for i, line in enumerate(lines, 1) if line.startswith(prefix))


def in_conversation(ed: Editor, row: int, keys: str) -> None:
    win = ed.lua("return require('minime.ui.turn').get(...).win", ed.cwd)
    ed.lua(
        "local win, row = ... vim.api.nvim_set_current_win(win)"
        " vim.api.nvim_win_set_cursor(win, { row, 0 })",
        win,
        row,
    )
    ed.nvim.input(keys)


def test_a_syntax_error_a_turn_made_is_shown_opened_and_sent(tmp_path: Path) -> None:
    files = {"a.py": "def f(x):\n    return x + 1\n", "bad.py": "x = (\n"}
    with lsp_editor(tmp_path, files) as ed:
        text = turn_and_pass(ed, "/disk-write a.py def f(:")
        key = thread(ed)
        assert last_pass(ed, key)["answered"] == ["a.py"], "bad.py did not change: not looked at"
        header = wait_for(
            lambda: next((x for x in ed.conversation_lines() if x.startswith("⚠ ")), None),
            10,
            message="the new errors under the turn",
        )
        assert header.startswith("⚠ ") and header.endswith(" in a.py"), header
        assert "new error" in header and "bad.py" not in ed.conversation_text()
        assert "■ done (end_turn)" in text
        item = row_of(ed, "  1:")
        assert "error:" in ed.conversation_lines()[item - 1]

        # <CR> on an error's line: its file at its line, in the code window.
        in_conversation(ed, item, "<CR>")
        wait_for(lambda: ed.lua("return vim.fn.expand('%:t')") == "a.py", 10, message="a.py opened")
        assert ed.lua("return vim.fn.line('.')") == 1

        # `f` elsewhere is Vim's `f`; on the block it sends them, as the next ask.
        in_conversation(ed, 1, "f/")
        assert len(ed.done()) == 1
        in_conversation(ed, row_of(ed, "⚠ "), "f")
        done = ed.wait_done(2)
        assert done["stop_reason"] == "end_turn"
        sent = prompts(tmp_path)[-1]
        assert sent.startswith(FIX) and "a.py:1:" in sent and ": error: " in sent, sent
        assert "bad.py" not in sent
        ed.wait_text("📎 diagnostics: ")
        assert "in a.py" in ed.wait_line("📎 diagnostics: ")
        ed.nvim.command("MiniMeFix")  # sent once: nothing is left
        ed.wait_note("no new errors or warnings to send")
        assert len(prompts(tmp_path)) == 2


def test_a_turn_that_moves_or_fixes_an_error_shows_nothing_new(tmp_path: Path) -> None:
    files = {"bad.py": "x = (\n"}
    with lsp_editor(tmp_path, files) as ed:
        text = turn_and_pass(ed, "/ask-write bad.py # a line above\\nx = (")
        key = thread(ed)
        assert last_pass(ed, key)["answered"] == ["bad.py"], "the server answered for it"
        assert "⚠" not in text, "the same error on a moved line is not new"
        text = turn_and_pass(ed, "/ask-write bad.py x = 1")
        assert last_pass(ed, key)["answered"] == ["bad.py"]
        assert "⚠" not in text
        ed.nvim.command("MiniMeFix")
        ed.wait_note("no new errors or warnings to send")


def test_auto_sends_them_by_itself_at_most_rounds_times_in_a_row(tmp_path: Path) -> None:
    """Each fix writes a new file with an error (not loaded before: loaded for this, and only
    its changed lines count); the third finding is shown, not sent."""
    hook = {"when": FIX, "then": ["/ask-write c.py def g(:", "/ask-write d.py def h(:"]}
    files = {"a.py": "def f(x):\n    return x\n"}
    opts = {"feedback": {"diagnostics": "auto", "rounds": 2}}
    opts["permission_rules"] = []  # each write waits for its answer: the baseline is recorded
    with lsp_editor(tmp_path, files, fake={"on_prompt": hook}, **opts) as ed:
        ed.ask("/disk-write a.py def f(:")
        win = None
        for _ in range(2):
            win = ed.permission_win(other_than=win)
            ed.press(win, "1")
        ed.wait_done(3)
        wait_for(
            lambda: "(feedback.rounds)" in ed.conversation_text(),
            15,
            message="the third finding, not sent",
        )
        text = ed.conversation_text()
        assert 'sent by themselves (feedback.diagnostics = "auto"), round 1 of 2' in text
        assert 'sent by themselves (feedback.diagnostics = "auto"), round 2 of 2' in text
        assert "ℹ not sent by themselves: 2 rounds in a row already (feedback.rounds)" in text
        for name in ("a.py", "c.py", "d.py"):
            assert f" in {name}" in text, name
        sent = prompts(tmp_path)
        assert len(sent) == 3
        assert "a.py:1:" in sent[1] and "c.py:1:" in sent[2]
        assert len(ed.done()) == 3  # the notice is said where an ask would have been made


def test_a_server_that_never_answers_costs_the_wait_and_says_nothing(tmp_path: Path) -> None:
    files = {"a.py": "def f(x):\n    return x\n"}
    with lsp_editor(tmp_path, files, server=SILENT) as ed:
        notes = len(ed.notes())
        bound = ed.probe_bound()
        ed.turn("/disk-write a.py def f(:")
        key = thread(ed)
        probes = []
        while passes(ed, key) == 0:
            probes.append(ed.probe())
            assert len(probes) < 100_000
        last = last_pass(ed, key)
        assert last["looked"] == ["a.py"] and last["answered"] == []
        assert 2900 <= last["ms"] <= 3300, last
        assert max(probes) < bound, "the main loop answered while the pass waited"
        assert "⚠" not in ed.conversation_text()
        assert len(ed.notes()) == notes


def test_fix_mid_start_up_mid_turn_and_from_another_threads_window(tmp_path: Path) -> None:
    """:MiniMeFix waits its turn like any ask, and sends what the turn before it left; from
    the window of another thread's conversation it sends that thread's, to its session."""
    gate = tmp_path / "initialize.go"
    files = {"a.py": "def f(x):\n    return x\n"}
    with lsp_editor(tmp_path, files, fake={"hold_initialize": str(gate)}) as ed:
        ed.ask("/say starting")
        wait_for(
            lambda: any(m.get("method") == "initialize" for m in trace(tmp_path, "in")),
            ed.timeout,
            message="initialize sent",
        )
        ed.nvim.command("MiniMeFix")  # mid-start-up: it waits for the first ask's turn
        gate.write_text("")
        ed.wait_done(1)
        ed.wait_note("no new errors or warnings to send")
        first = thread(ed)

        turn_and_pass(ed, "/disk-write a.py def f(:")
        ed.wait_line("⚠ ")
        ed.ask("/slow 20")
        ed.wait_text("slow 0")
        ed.nvim.command("MiniMeFix")  # mid-turn: queued, sent as that turn ends
        ed.wait_done(4)
        assert prompts(tmp_path)[-1].startswith(FIX) and "a.py:1:" in prompts(tmp_path)[-1]

        ed.nvim.command("MiniMeNew")
        second = thread(ed)
        ed.turn("/say other thread")
        wait_for(lambda: ed.lua(IDLE, first), 10, message="the fix turn's pass to end")
        count, before = len(ed.done()), passes(ed, first)
        ed.lua("require('minime').ask(..., nil, select(2, ...))", "/disk-write a.py def g(:", first)
        wait_for(lambda: passes(ed, first) > before, 20, message="the first thread's pass")
        assert "⚠ " in ed.conversation_text(first)
        buf = ed.lua("return require('minime.ui.turn').get(...).buf", first)
        ed.nvim.command(f"botright sbuffer {buf}")
        ed.nvim.command("MiniMeFix")
        ed.wait_done(count + 2)
        by_session = prompts_by_session(tmp_path)
        session, fix = by_session[-1]
        assert fix.startswith(FIX)
        other = next(s for s, text in by_session if text == "/say other thread")
        assert session != other, "sent in the first thread's session"
        assert FIX not in ed.conversation_text(second)
