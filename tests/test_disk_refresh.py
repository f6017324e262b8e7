"""Files the agent changes on disk with its own tools are refreshed in their buffers when the
tool call ends — only under the session's cwd, never over unsaved edits, never with a prompt.
The fake mm's ``/disk-write PATH TEXT`` is such a tool (tests/fake_mm_faults.py)."""

from __future__ import annotations

from pathlib import Path

from helpers.host_batches import record_batches, sent_batches
from nvim_harness import wait_for
from plugin_harness import Editor, editor


def load(ed: Editor, path: Path) -> int:
    ed.nvim.command(f"badd {path}")
    buf = ed.lua("local b = vim.fn.bufnr(...) vim.fn.bufload(b) return b", str(path))
    return int(buf)


def lines(ed: Editor, buf: int) -> list[str]:
    return ed.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)


def test_the_agents_disk_writes_reach_the_buffers_but_never_over_unsaved_edits(
    tmp_path: Path,
) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("outside old\n")
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(f"{name} old\n")
    with editor(tmp_path) as ed:
        a, b, far = load(ed, tmp_path / "a.txt"), load(ed, tmp_path / "b.txt"), load(ed, outside)
        ed.lua("vim.api.nvim_buf_set_lines(..., 0, -1, false, { 'my unsaved line' })", b)
        outside.write_text("outside changed by someone\n")

        done, _ = ed.turn("/disk-write a.txt new a\n/disk-write b.txt new b")
        assert done["stop_reason"] == "end_turn"
        wait_for(lambda: lines(ed, a) == ["new a"], 10, message="for a.txt to be reloaded")
        note = (
            "ℹ changed on disk by the agent, kept as you left them (unsaved edits; :e! takes"
            " the file): b.txt"
        )
        wait_for(lambda: note in ed.turn_lines(), 10, message="for the notice about b.txt")
        assert lines(ed, b) == ["my unsaved line"], "the user's text is kept"
        assert ed.lua("return vim.bo[...].modified", b) is True
        assert lines(ed, far) == ["outside old"], "a file outside the cwd is not checked"
        assert ed.lua("return vim.api.nvim_get_mode()")["blocking"] is False, "no prompt"
        assert ed.notes() == []

        # The next tool call refreshes again: a.txt follows, b.txt is not reported twice.
        ed.turn("/disk-write a.txt newer a")
        wait_for(lambda: lines(ed, a) == ["newer a"], 10, message="for a.txt again")
        assert note not in ed.turn_lines()
        assert ed.lua("return vim.bo[...].modified", a) is False


def test_no_refresh_while_the_user_is_on_the_command_line(tmp_path: Path) -> None:
    """`:checktime` waits while the command line is open (the user is typing there)."""
    (tmp_path / "a.txt").write_text("a old\n")
    with editor(tmp_path) as ed:
        a = load(ed, tmp_path / "a.txt")
        ed.nvim.input(":")
        wait_for(lambda: ed.lua("return vim.api.nvim_get_mode().mode") == "c", 10)
        ed.ask("/disk-write a.txt new a")
        ed.wait_done(1)
        waited = "return require('minime.editor.disk_refresh').waited[...] or 0"
        wait_for(lambda: ed.lua(waited, ed.cwd) >= 2, 10, message="for the refresh to wait")
        assert lines(ed, a) == ["a old"]
        assert ed.lua("return vim.api.nvim_get_mode().mode") == "c", "the command line is kept"
        ed.nvim.input("<Esc>")
        wait_for(lambda: lines(ed, a) == ["new a"], 10, message="for the refresh after <Esc>")


def test_the_kept_files_notice_comes_through_the_hosts_stream(tmp_path: Path) -> None:
    """The host is the one writer of the conversation: the refresh tells it which files it
    kept ("disk_kept") and the notice reaches the float in the host's batches."""
    (tmp_path / "b.txt").write_text("b old\n")
    with editor(tmp_path) as ed:
        b = load(ed, tmp_path / "b.txt")
        ed.lua("vim.api.nvim_buf_set_lines(..., 0, -1, false, { 'my unsaved line' })", b)
        record_batches(ed)
        done, _ = ed.turn("/disk-write b.txt new b")
        assert done["stop_reason"] == "end_turn"
        note = (
            "changed on disk by the agent, kept as you left them (unsaved edits; :e! takes"
            " the file): b.txt"
        )
        wait_for(lambda: f"ℹ {note}" in ed.turn_lines(), 10, message="for the notice")
        assert f"notice:{note}" in [kind for batch in sent_batches(ed) for kind in batch]
        assert lines(ed, b) == ["my unsaved line"]
