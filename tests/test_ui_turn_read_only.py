"""The conversation's text is the plugin's alone, in a real headless Neovim: Insert mode carried
into its float (a click, a <Cmd> mapping, while typing in a code window) ends there. Neovim 0.11
checks 'modifiable' in Insert mode only before an insert's first change, so the keys typed after
such a move changed the 'nomodifiable' conversation behind the turn's extmarks: an <CR> pushed
a running tool's header off the mark it is found by, and the turn's end failed (the seeded
random sequence MINIME_SEED=1740921317 of tests/test_random_sequences.py).
"""

from __future__ import annotations

import nvim_harness
import pytest
from nvim_harness import wait_for

KEY = "/tmp/minime-proj"

# The reply hook records instead of opening the input float.
INIT = """
_G.replies = {}
require('minime.ui.turn').on_reply = function(key) table.insert(_G.replies, key) end
"""


@pytest.fixture
def nvim():
    with nvim_harness.start(INIT) as n:
        yield n


def turn_errors(nvim):
    """The turn float's internal failures (each with its traceback): none may happen."""
    return nvim.exec_lua("return require('minime.ui.turn').errors")


def apply(nvim, *events):
    nvim.exec_lua("require('minime.ui.turn').apply(...)", KEY, list(events))


def conversation(nvim):
    return nvim.exec_lua("return require('minime.ui.turn').get(...)", KEY)


def buffer_lines(nvim, buf):
    return nvim.exec_lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)


def mode(nvim):
    return nvim.api.get_mode()["mode"]


ENTER_THE_FLOAT = {
    # A click on the float (or a plugin focusing it) while typing.
    "click": lambda nvim, win: nvim.exec_lua("vim.api.nvim_set_current_win(...)", win),
    # A key mapped with <Cmd>, typed in Insert mode.
    "cmd-mapping": lambda nvim, win: nvim.input("<Cmd>wincmd w<CR>"),
}


@pytest.mark.parametrize("enter", ENTER_THE_FLOAT.values(), ids=ENTER_THE_FLOAT.keys())
def test_insert_mode_carried_into_the_conversation_ends_there(nvim, enter):
    apply(
        nvim,
        {"kind": "begin", "prompt": "look", "cwd": KEY, "session_id": "s1"},
        {"kind": "tool_call", "id": "t1", "title": "client: open_buffers", "status": "pending"},
    )
    st = conversation(nvim)
    before = buffer_lines(nvim, st["buf"])
    assert before == ["> look", "", "⚙ client: open_buffers pending"]
    code = nvim.exec_lua("return vim.api.nvim_get_current_buf()")
    # Typing in the code window: the insert's first change is made there.
    nvim.command("startinsert")
    nvim.input("x<CR>")
    wait_for(lambda: buffer_lines(nvim, code) == ["x", ""], message="the typed text")
    enter(nvim, st["win"])
    wait_for(
        lambda: nvim.exec_lua("return vim.api.nvim_get_current_win()") == st["win"],
        message="the float entered",
    )
    wait_for(lambda: mode(nvim) == "n", message="Insert mode ended in the conversation")
    # <CR> is the float's own key now (the last line: reply), not a line break in the text.
    nvim.input("<CR>")
    wait_for(lambda: nvim.exec_lua("return _G.replies") == [KEY], message="the reply hook")
    assert buffer_lines(nvim, st["buf"]) == before
    apply(nvim, {"kind": "done", "stop_reason": "end_turn"})
    assert buffer_lines(nvim, st["buf"]) == [
        "> look",
        "",
        "⚙ client: open_buffers (ended without a status)",
        "",
        "■ done (end_turn)",
    ]
    assert turn_errors(nvim) == []


def test_a_tool_whose_lines_the_user_edited_is_drawn_again_at_the_end(nvim):
    """`:setlocal modifiable` and an edit above a running tool's header (at its mark): the
    tool's next update is a resync — its line again at the end, the user's text kept — not a
    failed edit of the wrong line."""
    apply(
        nvim,
        {"kind": "begin", "prompt": "look", "cwd": KEY, "session_id": "s1"},
        {"kind": "tool_call", "id": "t1", "title": "bash: ls", "status": "pending"},
        {"kind": "tool_call", "id": "t2", "title": "bash: pwd", "status": "pending"},
    )
    buf = conversation(nvim)["buf"]
    assert buffer_lines(nvim, buf)[2:] == ["⚙ bash: ls pending", "⚙ bash: pwd pending"]
    nvim.exec_lua(
        """
        local buf = ...
        vim.bo[buf].modifiable = true
        vim.api.nvim_buf_set_text(buf, 2, 0, 2, 0, { 'my note', '' })
        vim.bo[buf].modifiable = false
        """,
        buf,
    )
    apply(nvim, {"kind": "tool_result", "id": "t1", "status": "completed", "output": "a.txt"})
    apply(nvim, {"kind": "done", "stop_reason": "end_turn"})
    assert buffer_lines(nvim, buf)[2:] == [
        "my note",
        "⚙ bash: ls pending",
        "⚙ bash: pwd (ended without a status)",
        "⚙ bash: ls completed",
        "    a.txt",
        "",
        "■ done (end_turn)",
    ]
    assert turn_errors(nvim) == []
    resyncs = nvim.exec_lua("return require('minime.ui.turn').resyncs")
    assert resyncs[0].startswith("the end was at 4:"), resyncs  # apply's own check
    assert resyncs[0].endswith("the buffer ends at line 5"), resyncs
    assert [r for r in resyncs[1:] if "bash: ls" in r] == resyncs[1:] and len(resyncs) == 2


def test_the_indent_insert_mode_s_end_removes_in_the_conversation_is_healed(nvim):
    """Insert mode's end removes the indent it auto-inserted, at the line and column where the
    insert ended, in whatever buffer is current: ended in the conversation (its float entered
    while typing), it stripped a tool's `    input:` line, and the tool's next update started
    past that line's end (seed 11 of tests/test_random_sequences.py, shrunk). The next batch
    sees the end moved and the tool's lines changed, and draws again from what is there."""
    apply(
        nvim,
        {"kind": "begin", "prompt": "look", "cwd": KEY, "session_id": "s1"},
        {"kind": "tool_call", "id": "t1", "title": "bash: ls", "status": "pending",
         "input": {"command": "ls"}},
    )  # fmt: skip
    st = conversation(nvim)
    lines = buffer_lines(nvim, st["buf"])
    row = next(i for i, line in enumerate(lines) if line.startswith("    input:")) + 1
    # In the code window, 'autoindent' on: the insert ends on line `row`, on an indent it made.
    nvim.command("setlocal autoindent")
    nvim.command("startinsert")
    nvim.input("<CR>" * (row - 2) + "    x<CR>")
    code = nvim.exec_lua("return vim.api.nvim_get_current_buf()")
    wait_for(lambda: len(buffer_lines(nvim, code)) == row, message="the typed lines")
    ENTER_THE_FLOAT["click"](nvim, st["win"])
    wait_for(lambda: mode(nvim) == "n", message="Insert mode ended in the conversation")
    apply(nvim, {"kind": "tool_result", "id": "t1", "status": "completed", "output": "a.txt"})
    apply(nvim, {"kind": "done", "stop_reason": "end_turn"})
    assert turn_errors(nvim) == []
    assert buffer_lines(nvim, st["buf"])[-4:] == ["⚙ bash: ls completed", "    a.txt", "",
                                                   "■ done (end_turn)"]  # fmt: skip
