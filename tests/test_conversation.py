"""The conversation float end to end (issue 10): a real headless Neovim, the Python host and the
fake mm. Every ask of a cwd stays in one float, in order; reset empties it; a loaded session
shows its history the same way; :MiniMeToggle hides it without touching the turn; `i` replies
from it (multi-line with <C-j>); it sits at the right edge by default; its title tells the state.
"""

from __future__ import annotations

import os
from pathlib import Path

from helpers.conversation_ui import current, editor, title, turn, wait_input, wait_title
from helpers.sessions_ui import WATCH_PROMPTS, stored_sessions
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor_with

__all__ = ["editor"]  # the fixture: a Neovim with the fake mm (helpers/conversation_ui.py)


def test_history_across_asks_in_order(editor: Editor) -> None:
    for i, word in enumerate(["alpha", "bravo", "charlie"], 1):
        editor.ask(word)
        editor.wait_done(i)
    lines = editor.conversation_lines()
    order = ["> alpha", "echo: alpha", "> bravo", "echo: bravo", "> charlie", "echo: charlie"]
    rows = [lines.index(x) for x in order]
    assert rows == sorted(rows), lines
    assert sum(line.startswith("■ done") for line in lines) == 3
    assert editor.lua("return require('minime.ui.turn').turn_count(...)", editor.cwd) == 3


def test_reset_empties_the_float(editor: Editor) -> None:
    editor.turn("one")
    win = turn(editor)["win"]
    editor.nvim.command("MiniMeReset")
    wait_for(lambda: editor.conversation_lines() == [""], 10, message="an empty conversation")
    assert turn(editor)["win"] == win, "the float stays where it was"
    assert "idle" in title(editor)
    editor.turn("two")
    assert editor.conversation_lines()[0] == "> two"
    assert "echo: one" not in editor.conversation_text()


def test_toggle_hides_and_shows_without_cancelling_the_turn(editor: Editor) -> None:
    editor.ask("/slow 30")
    editor.wait_text("slow 0")
    editor.nvim.command("MiniMeToggle")
    assert turn(editor).get("win") is None
    assert turn(editor)["running"] is True
    seen = editor.conversation_text().count("slow ")
    wait_for(
        lambda: editor.conversation_text().count("slow ") > seen + 2, 10, message="more chunks"
    )
    editor.nvim.feedkeys(editor.nvim.replace_termcodes("<Plug>(minime-toggle)", True, True, True))
    wait_for(lambda: turn(editor).get("win") is not None, 10, message="shown again")
    assert turn(editor)["running"] is True
    assert editor.done() == [], "hiding it never ended the turn"
    editor.nvim.command("MiniMeCancel")
    assert editor.wait_done()["stop_reason"] == "cancelled"
    assert "cancelled" in title(editor)


def test_toggle_with_no_conversation_says_so(editor: Editor) -> None:
    editor.nvim.command("MiniMeToggle")
    assert any("no conversation yet" in n for n in editor.notes())


def test_reply_from_the_float_is_the_next_ask_and_c_j_makes_two_lines(editor: Editor) -> None:
    editor.turn("first")
    win = turn(editor)["win"]
    editor.press(win, "i")
    box = wait_input(editor)
    assert box["mode"] == "i"
    cfg = editor.float_config(box["win"])
    assert cfg["relative"] == "win" and cfg["win"] == win, "anchored to the conversation"
    editor.nvim.input("second")
    editor.nvim.input("<CR>")
    editor.wait_done(2)
    assert current(editor)["win"] == win, "back in the conversation"
    # Multi-line: <C-j> makes a newline and the box grows; the agent gets two lines.
    editor.nvim.input("G<CR>")  # <CR> on the last line opens the input too
    box = wait_input(editor)
    editor.nvim.input("line one<C-j>line two")
    wait_for(lambda: current(editor)["height"] == 2, 5, message="the input grows")
    editor.nvim.input("<CR>")
    editor.wait_done(3)
    lines = editor.conversation_lines()
    order = ["> first", "echo: first", "> second", "echo: second"]
    order += ["> line one", "> line two", "echo: line one", "echo: line two"]
    rows = [lines.index(x) for x in order]
    assert rows == sorted(rows), lines
    sessions = {d["session_id"] for d in editor.done()}
    assert len(sessions) == 1, "the same conversation"


def test_ask_with_no_text_opens_the_input(editor: Editor) -> None:
    editor.nvim.command("MiniMeAsk")
    box = wait_input(editor)
    assert editor.float_config(box["win"])["relative"] == "editor"  # no float to sit on yet
    editor.nvim.input("from the box<CR>")
    editor.wait_done()
    assert "echo: from the box" in editor.conversation_text()
    # With the conversation shown, the box sits on it.
    editor.nvim.command("MiniMeAsk")
    box = wait_input(editor)
    assert editor.float_config(box["win"])["win"] == turn(editor)["win"]
    editor.nvim.input("<Esc><Esc>")  # to normal mode, then closed
    wait_for(lambda: current(editor)["kind"] != "input", 5, message="the input closes")


def test_side_layout_is_full_height_at_the_right_edge(editor: Editor) -> None:
    editor.turn("x")
    cfg = editor.float_config(turn(editor)["win"])
    columns, lines, cmdheight = editor.lua("return { vim.o.columns, vim.o.lines, vim.o.cmdheight }")
    border = 2
    assert cfg["col"] + cfg["width"] + border == columns
    assert cfg["row"] == 0
    assert cfg["height"] + border == lines - cmdheight - 1  # all but the command and status lines
    assert cfg["width"] == int((columns - border) * 0.4)
    # window.width in columns, then the centred layout.
    editor.lua("require('minime').setup(...)", {"window": {"width": 30}})
    editor.nvim.command("MiniMeToggle | MiniMeToggle")
    cfg = editor.float_config(turn(editor)["win"])
    assert cfg["width"] == 30 and cfg["col"] + 30 + border == columns
    editor.lua("require('minime').setup(...)", {"window": {"layout": "center"}})
    editor.nvim.command("MiniMeToggle | MiniMeToggle")
    cfg = editor.float_config(turn(editor)["win"])
    assert cfg["width"] == int((columns - border) * 0.8)
    assert cfg["col"] == (columns - border - cfg["width"]) // 2
    assert cfg["row"] > 0


def test_title_tells_agent_and_state(tmp_path: Path) -> None:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path, trace=False)}
    with editor_with(tmp_path, {**opts, "permission": {"focus": False}}) as ed:
        ed.ask("/slow 30")
        ed.wait_text("slow 0")
        assert title(ed).startswith(" running · mm · "), "the state first"
        ed.nvim.command("MiniMeCancel")
        ed.wait_done(1)
        wait_title(ed, " cancelled · mm · ")
        ed.ask("/bash ls")
        wait_title(ed, " waiting for permission · mm · ")
        ed.nvim.command("MiniMePermission")
        ed.press(ed.permission_win(), "1")
        ed.wait_done(2)
        wait_title(ed, " done · mm · ")
        ed.ask("/error the model is down")
        ed.wait_done(3)
        wait_title(ed, " error · mm · ")


def test_follow_the_end_unless_scrolled_up(editor: Editor) -> None:
    editor.turn("/chunks 200 40")
    win = turn(editor)["win"]
    last = editor.lua("return vim.api.nvim_buf_line_count(...)", turn(editor)["buf"])
    assert editor.lua("return vim.api.nvim_win_get_cursor(...)[1]", win) == last
    # Scrolled up: the next turn's text does not pull the view down.
    editor.ask("/slow 30")
    editor.wait_text("slow 0")
    editor.lua("vim.api.nvim_win_set_cursor(..., {1, 0})", win)
    seen = editor.conversation_text().count("slow ")
    wait_for(
        lambda: editor.conversation_text().count("slow ") > seen + 2, 10, message="more chunks"
    )
    assert editor.lua("return vim.api.nvim_win_get_cursor(...)[1]", win) == 1
    # Back at the end: it follows again.
    editor.lua("local w = ... vim.api.nvim_win_call(w, function() vim.cmd('normal! G') end)", win)
    seen = editor.conversation_text().count("slow ")
    wait_for(
        lambda: editor.conversation_text().count("slow ") > seen + 2, 10, message="more chunks"
    )
    end = editor.lua("return vim.api.nvim_buf_line_count(...)", turn(editor)["buf"])
    assert editor.lua("return vim.api.nvim_win_get_cursor(...)[1]", win) >= end - 1
    editor.nvim.command("MiniMeCancel")
    editor.wait_done(2)


def test_a_loaded_session_replays_into_an_empty_conversation(tmp_path: Path) -> None:
    """:MiniMeSessions: the replayed history is the float's whole content, in the same form as
    a conversation (quoted user text, folded thinking, the answer), and the next ask appends."""
    cwd = os.path.realpath(tmp_path)
    config = agent_file(tmp_path, fake={"load_sessions": stored_sessions(cwd)})
    with editor_with(tmp_path, {"mm": FAKE_MM_BIN, "config": config}, WATCH_PROMPTS) as ed:
        ed.turn("before loading")
        ed.nvim.command("MiniMeSessions")
        wait_for(lambda: ed.lua("return _G.picks"), 20, message="for vim.ui.select")
        ed.lua("_G.pick(1)")
        ed.wait_done(2)
        lines = ed.conversation_lines()
        assert lines[0] == "> (loaded session Fix the parser)"
        assert "echo: before loading" not in ed.conversation_text(), "a fresh conversation"
        assert "> why does the parser drop comments?" in lines
        assert "The lexer skips them before the parser sees them." in lines
        ed.turn("and now?")
        lines = ed.conversation_lines()
        assert lines[0] == "> (loaded session Fix the parser)"
        assert lines.index("> and now?") > lines.index(
            "The lexer skips them before the parser sees them."
        )
