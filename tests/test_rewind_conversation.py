"""The conversation's `r` and `e` on an ask (its `> …` lines), in a real Neovim with the fake mm:
`r` rewinds the files to before it (asking first when that goes back more than one ask); `e`
edits and resends it — the files go back, and the conversation continues from before it: the
fake mm forks its session at the last message before that ask where it forks (``fake.fork``),
else a new session's first prompt carries the asks and answers before it. A line across the
conversation says which; the old turns stay above it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers.review_ui import committed
from helpers.rewind_ui import PICKER, opts, rewind, selects, turn
from helpers.wire import trace_rows
from nvim_harness import wait_for
from plugin_harness import Editor, agent_file, editor_with

FILES = {"a.txt": "a0\n", "b.txt": "b0\n"}
ASKS = ["/shell-write a.txt A1\n/say first", "/shell-write b.txt B1\n/say second", "/say third"]


def prompt_row(ed: Editor, text: str) -> int:
    """The row (1-based) of the conversation line ``> text``."""
    lines = ed.conversation_lines()
    return lines.index("> " + text) + 1


def on_conversation(ed: Editor, row: int) -> int:
    """Focus the conversation's window at ``row``; its window."""
    win = ed.lua("return require('minime.ui.turn').get(vim.fn.getcwd()).win")
    ed.lua(
        "local win, row = ... vim.api.nvim_set_current_win(win)"
        " vim.api.nvim_win_set_cursor(0, { row, 0 })",
        win,
        row,
    )
    return win


def trace(cwd: Path) -> list[dict[str, Any]]:
    return [row["msg"] for row in trace_rows(cwd / "trace.jsonl")]  # read while it is written


def received(cwd: Path, method: str) -> list[dict[str, Any]]:
    return [m for m in trace(cwd) if m.get("method") == method and "params" in m and "id" in m]


def edit_and_send(ed: Editor, row: int, text: str) -> None:
    """`e` at ``row``, the input's text replaced by ``text``, sent."""
    on_conversation(ed, row)
    count = len(ed.done()) + 1
    ed.nvim.input("e")
    wait_for(lambda: ed.lua("return vim.b.minime") == "input", 10, message="for the input")
    ed.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(..., '\\n'))", text)
    ed.nvim.input("<Esc><CR>")
    ed.wait_done(count)


def test_e_resends_in_a_new_session_with_the_history_and_the_files_back(tmp_path: Path) -> None:
    committed(tmp_path, FILES)
    with editor_with(tmp_path, opts(tmp_path), PICKER, timeout=30.0) as ed:
        for ask in ASKS:
            turn(ed, ask)
        first = received(tmp_path, "session/new")
        edit_and_send(ed, prompt_row(ed, "/shell-write b.txt B1"), "/say second, edited")
        lines = ed.conversation_lines()
        line = next(n for n in lines if n.startswith("── rewound"))
        assert line == (
            "── rewound to before ask 2 (1 file restored; new session with the history) ──"
        )
        assert lines.index(line) > lines.index("> /say third"), "the old turns stay above it"
        assert (tmp_path / "b.txt").read_text() == "b0\n" and (
            tmp_path / "a.txt"
        ).read_text() == "A1\n"
        sessions = received(tmp_path, "session/new")
        assert len(sessions) == len(first) + 1, "a new session"
        history, ask = received(tmp_path, "session/prompt")[-1]["params"]["prompt"]
        assert ask == {"type": "text", "text": "/say second, edited"}
        assert "ask 1:\n> /shell-write a.txt A1\n> /say first\n\nanswer 1:" in history["text"]
        assert "second" not in history["text"] and "third" not in history["text"]
        assert "echo: > /shell-write a.txt A1" in ed.turn_text(), "the fake mm read it"
        # The asks left behind: `r` there says so; the resent one is ask 2.
        on_conversation(ed, prompt_row(ed, "/say third"))
        ed.nvim.input("r")
        ed.wait_note("this ask was left behind by a rewind")
        turns = "local s = require('minime.review.baseline').sessions return #s[next(s)].turns"
        assert ed.lua(turns) == 2, "ask 2 is the resent one: asks 2 and 3 left behind"


def test_e_forks_where_the_agent_forks(tmp_path: Path) -> None:
    committed(tmp_path, FILES)
    config = agent_file(tmp_path, fake={"fork": True})
    with editor_with(tmp_path, opts(tmp_path, config=config), PICKER, timeout=30.0) as ed:
        for ask in ASKS:
            turn(ed, ask)
        edit_and_send(ed, prompt_row(ed, "/say third"), "/history")
        assert (
            "── rewound to before ask 3 (0 files restored; the agent's session forked before it) ──"
            in ed.conversation_lines()
        )
        (fork,) = received(tmp_path, "session/fork")
        assert fork["params"]["_meta"]["jetbrains"]["air"]["fork"]["messageId"] == "m2"
        text = ed.turn_text()
        assert (
            "history: /shell-write a.txt A1" in text
            and "/say third" not in text.split("history:")[1]
        )


def test_r_asks_first_when_going_back_more_than_one_ask(tmp_path: Path) -> None:
    committed(tmp_path, FILES)
    with editor_with(tmp_path, opts(tmp_path), PICKER, timeout=30.0) as ed:
        for ask in ASKS[:2]:
            turn(ed, ask)
        on_conversation(ed, prompt_row(ed, "/shell-write b.txt B1"))
        ed.nvim.input("r")
        ed.wait_note("rewound to before ask 2: 1 file restored")
        assert selects(ed) == [], "the last ask: no question"
        on_conversation(ed, prompt_row(ed, "/shell-write a.txt A1"))
        ed.nvim.input("r")
        ed.wait_note("rewound to before ask 1: 1 file restored")
        assert selects(ed)[0]["prompt"] == "Rewind the files to before ask 1 (2 asks back)"
        assert (tmp_path / "a.txt").read_text() == "a0\n"


def test_the_command_mid_turn_is_refused(tmp_path: Path) -> None:
    committed(tmp_path, FILES)
    with editor_with(tmp_path, opts(tmp_path), PICKER, timeout=30.0) as ed:
        turn(ed, ASKS[0])
        ed.ask("/slow 400")
        ed.wait_text("slow 1")
        assert rewind(ed, "1") == (
            "minime: not rewound: a turn is running in this thread (or its agent starts):"
            " :MiniMeCancel it first"
        )
        assert (tmp_path / "a.txt").read_text() == "A1\n"
        ed.nvim.command("MiniMeCancel")
        ed.wait_done(2)
