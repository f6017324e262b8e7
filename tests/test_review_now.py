""":MiniMeReview reads the files as they are when it is asked (lua/minime/review/init.lua): run
by an autocmd the moment a turn ends — before the disk refresh has reloaded the buffers — it
lists the turn's hunks; and through a user's whole day of review (reject, undo, redo, save,
accept, ask again, edit) the next turn's hunks are listed."""

from __future__ import annotations

from pathlib import Path

from helpers.review_ui import at, committed, lines, load, quickfix, review, turn_with_writes
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, agent_file, editor, editor_with

REVIEW_WHEN_DONE = """
vim.api.nvim_create_autocmd('User', { pattern = 'MiniMeTurnDone', command = 'MiniMeReview' })
"""


def test_a_review_run_when_the_turn_ends_lists_its_hunks(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a1\na2\n")
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(tmp_path, opts, REVIEW_WHEN_DONE, timeout=30.0) as ed:
        a = load(ed, tmp_path / "a.txt")
        turn_with_writes(ed, "/ask-write a.txt a1\\nA2", writes=1)
        wait_for(
            lambda: quickfix(ed)["items"] == [["a.txt", 2, "+1 -1 A2"]],
            20,
            message="for the review of the turn",
        )
        assert lines(ed, a) == ["a1", "A2"], "the file as it is"


EDIT_WHEN_DONE = """
vim.api.nvim_create_autocmd('User', { pattern = 'MiniMeTurnDone', callback = function()
  local buf = vim.fn.bufnr('a.txt')
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { 'mine' })
  vim.cmd('MiniMeReview')
end })
"""


def test_a_review_says_which_changed_files_it_could_not_show(tmp_path: Path) -> None:
    """Edited before the refresh took the agent's text: the buffer keeps the user's edits, and
    the review says the file changed on disk, rather than nothing."""
    (tmp_path / "a.txt").write_text("a1\na2\n")
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(tmp_path, opts, EDIT_WHEN_DONE, timeout=30.0) as ed:
        a = load(ed, tmp_path / "a.txt")
        turn_with_writes(ed, "/ask-write a.txt a1\\nA2", writes=1)
        ed.wait_note("changed on disk, not reviewed in your buffer: it holds unsaved edits")
        assert lines(ed, a) == ["mine", "a2"]


def test_a_day_of_review_then_the_next_turns_hunk_is_listed(tmp_path: Path) -> None:
    committed(tmp_path, {"a.txt": "a1\na2\na3\na4\n", "b.txt": "b1\n"})
    with editor(tmp_path) as ed:
        a = load(ed, tmp_path / "a.txt")
        turn_with_writes(
            ed, "/shell-write a.txt A1\\na2\\na3\\nA4\n/shell-write b.txt B1", writes=2
        )
        wait_for(lambda: lines(ed, a) == ["A1", "a2", "a3", "A4"], 10, message="for a.txt")
        assert [i[:2] for i in review(ed)["items"]] == [["a.txt", 1], ["a.txt", 4], ["b.txt", 1]]
        ed.nvim.command("MiniMeReject")  # a.txt's first hunk
        assert lines(ed, a) == ["a1", "a2", "a3", "A4"]
        ed.nvim.command("normal! u")
        ed.nvim.command('execute "normal! \\<C-r>"')
        assert lines(ed, a) == ["a1", "a2", "a3", "A4"]
        ed.nvim.command("write")
        ed.nvim.command("clast")  # b.txt's hunk
        ed.nvim.command("MiniMeAccept")

        turn_with_writes(ed, "/shell-write a.txt a1\\na2\\nX3\\nA4", writes=1)
        wait_for(lambda: lines(ed, a)[2] == "X3", 10, message="for a.txt to follow the disk")
        ed.lua("vim.api.nvim_set_current_buf(...)", a)
        ed.lua("vim.api.nvim_buf_set_lines(..., 0, 1, false, { 'mine' })", a)  # not saved
        items = review(ed)["items"]
        assert ["a.txt", 3, "+1 -1 X3"] in items, items
        at(ed, 3)
        assert quickfix(ed)["title"].endswith("turn 2")
