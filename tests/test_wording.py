"""What the plugin says, checked where the user reads it: the turn float's lines and footer,
notifications, :MiniMeLog's window. Each test is one finding of issue 10 ("Wording")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor_with

LOG_BUFFERS = """
local found = {}
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_is_loaded(b) and vim.b[b].minime == 'log' then found[#found + 1] = b end
end
return found
"""


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[Editor]:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path, trace=False)}
    with editor_with(tmp_path, opts) as ed:
        yield ed


def chrome(parts: object) -> str:
    """A float's title or footer as text (Neovim returns it as [[text, hl], ...])."""
    if isinstance(parts, str):
        return parts
    return "".join(chunk[0] for chunk in parts or [])  # type: ignore[attr-defined]


def errors(editor: Editor) -> list[str]:
    return [n["msg"] for n in editor.lua("return _G.notes") if n["level"] == 4]


def test_stop_mid_turn_reads_as_a_stop_not_an_error(editor: Editor) -> None:
    editor.ask("/slow 400")
    editor.wait_text("slow 1")
    editor.nvim.command("MiniMeStop")
    done = editor.wait_done()
    assert done["stop_reason"] == "stopped" and not done.get("error")
    lines = editor.turn_lines()
    assert "■ stopped (:MiniMeStop)" in lines
    assert not any("error" in line or "closed" in line for line in lines), lines
    editor.wait_note("minime: agent stopped")


def test_starting_the_agent_is_said_only_when_one_starts(editor: Editor) -> None:
    _, first = editor.turn("one")
    assert "starting the agent…" in first, "the first ask starts mm"
    editor.nvim.command("MiniMeReset")
    editor.wait_note("new conversation")
    _, second = editor.turn("two")
    assert "echo: two" in second
    assert "starting the agent…" not in second, "a new session on the running mm starts nothing"
    editor.nvim.command("MiniMeStop")
    editor.wait_note("agent stopped")
    _, third = editor.turn("three")
    assert "starting the agent…" in third, "after :MiniMeStop, mm starts again"


def test_cancel_with_no_turn_running_says_so(editor: Editor) -> None:
    editor.nvim.command("MiniMeCancel")
    editor.wait_note(f"minime: no turn running in {editor.cwd}")
    editor.turn("one")
    count = len(editor.notes())
    editor.nvim.command("MiniMeCancel")
    wait_for(lambda: len(editor.notes()) > count, 10, message="for a second notice")
    assert editor.notes()[-1] == f"minime: no turn running in {editor.cwd}"
    assert editor.done()[0]["stop_reason"] == "end_turn", "the finished turn is untouched"


def test_show_with_no_conversation_says_so(editor: Editor) -> None:
    editor.nvim.command("MiniMeShow")
    assert editor.notes() == ["minime: no conversation to show yet"]
    editor.turn("one")
    editor.lua("require('minime.ui.turn').close(...)", editor.cwd)
    editor.nvim.command("MiniMeShow")
    assert editor.lua("return require('minime.ui.turn').get(...).win", editor.cwd)
    assert editor.notes().count("minime: no conversation to show yet") == 1


def test_an_agents_error_answer_gets_no_unrelated_stderr_line(editor: Editor) -> None:
    done, text = editor.turn(
        "/stderr [acp] session s1 client tools 7 (discovery request)\n/error the model failed"
    )
    assert done["stop_reason"] == "error"
    assert done["error"] == "turn failed: Internal error (-32603): the model failed"
    (line,) = [x for x in text.splitlines() if x.startswith("✗")]
    assert line == "✗ error: turn failed: Internal error (-32603): the model failed"
    # A crash still names its last stderr line: there, it tells why.
    done, _ = editor.turn("/crash 3")
    assert (
        done["error"]
        == "mm exited: exit status 3 (last stderr line: panic: fake crash (exit status 3))"
    )


def test_the_running_footer_says_what_q_does_and_q_does_it(editor: Editor) -> None:
    editor.ask("/slow 400")
    editor.wait_text("slow 1")
    win = editor.lua("return require('minime.ui.turn').get(...).win", editor.cwd)
    footer = chrome(editor.float_config(win)["footer"])
    assert "q hide" in footer and "<C-c> cancel" in footer
    editor.press(win, "q")
    wait_for(
        lambda: not editor.lua("return require('minime.ui.turn').get(...).win", editor.cwd),
        10,
        message="for q to hide the float",
    )
    assert editor.lua("return require('minime.ui.turn').get(...).running", editor.cwd)
    editor.wait_text("slow 3")
    editor.nvim.command("MiniMeCancel")
    assert editor.wait_done()["stop_reason"] == "cancelled"


def test_log_twice_reuses_one_buffer_in_the_current_window(editor: Editor) -> None:
    editor.turn("/stderr first line for the log")
    editor.lua(
        "vim.api.nvim_set_current_win(...)",
        editor.lua("return require('minime.ui.turn').get(...).win", editor.cwd),
    )  # the turn float focused: the log must not open behind it
    for i in range(2):
        editor.nvim.command("MiniMeLog")
        wait_for(lambda: editor.lua("return vim.b.minime") == "log", 10, message="for the log")
        win = editor.lua("return vim.api.nvim_get_current_win()")
        assert editor.lua("return vim.api.nvim_win_get_config(...).relative", win) == ""
        assert editor.lua(LOG_BUFFERS) == [editor.lua("return vim.api.nvim_get_current_buf()")]
        assert not editor.lua("return require('minime.ui.turn').get(...).win", editor.cwd), (
            "the turn float that covered the screen is hidden"
        )
        assert "first line for the log" in "\n".join(editor.nvim.current.buffer[:])
        if i == 0:
            editor.turn("/stderr second line for the log")
            editor.nvim.command("wincmd p")
    assert "second line for the log" in "\n".join(editor.nvim.current.buffer[:]), "refreshed"
    assert len(editor.lua("return vim.api.nvim_tabpage_list_wins(0)")) == 2, "one split"
    assert errors(editor) == []
    assert editor.lua("return vim.v.errmsg") == ""
