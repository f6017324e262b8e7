"""Typed text is never lost (issue 17): the input float closed without sending, or an ask the
host refused mid-turn, keeps a draft per cwd that the next input opens with; sending clears it.
A real headless Neovim, the host and the fake mm."""

from __future__ import annotations

from helpers.conversation_ui import current, editor, turn, wait_input
from nvim_harness import wait_for
from plugin_harness import Editor

__all__ = ["editor"]  # the fixture: a Neovim with the fake mm (test_conversation.py)


def input_text(ed: Editor) -> str:
    return "\n".join(ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))


def wait_closed(ed: Editor) -> None:
    wait_for(lambda: current(ed)["kind"] != "input", 5, message="the input closes")


def test_esc_esc_keeps_a_draft_that_the_next_input_opens_with(editor: Editor) -> None:
    editor.nvim.command("MiniMeAsk")
    wait_input(editor)
    editor.nvim.input("a long prompt<C-j>second line<Esc>")
    wait_for(lambda: current(editor)["mode"] == "n", 5, message="normal mode in the input")
    assert current(editor)["kind"] == "input", "the first <Esc> leaves the input open"
    editor.nvim.input("<Esc>")
    wait_closed(editor)
    editor.nvim.command("MiniMeAsk")
    wait_input(editor)
    assert input_text(editor) == "a long prompt\nsecond line"
    editor.nvim.input(" sent<CR>")
    editor.wait_done()
    assert "echo: second line sent" in editor.conversation_text()
    # Sent: the draft is gone, the next input opens empty (in the conversation too: `i`).
    editor.press(turn(editor)["win"], "i")
    wait_input(editor)
    assert input_text(editor) == ""


def test_a_reply_refused_mid_turn_is_the_next_inputs_text(editor: Editor) -> None:
    editor.lua("require('minime.config').options.queue = false")  # refused, not queued
    editor.ask("/slow 30")
    editor.wait_text("slow 0")
    editor.press(turn(editor)["win"], "i")
    wait_input(editor)
    editor.nvim.input("my careful reply<CR>")
    editor.wait_note("a turn is already running")
    wait_closed(editor)
    editor.nvim.command("MiniMeCancel")
    editor.wait_done()
    editor.press(turn(editor)["win"], "i")
    wait_input(editor)
    assert input_text(editor) == "my careful reply"
    editor.nvim.input("<CR>")
    editor.wait_done(2)
    assert "echo: my careful reply" in editor.conversation_text()
