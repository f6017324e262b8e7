"""The turn's baseline (lua/minime/review/baseline.lua) cannot be fooled: it is written before
the prompt goes (nvim/baselines.py), so an agent that writes the moment it reads the prompt is
reviewed; a file the agent wrote before naming it is compared with the last checkpoint that
holds it, never with the agent's text; git's racy entries — a file rewritten at the same size
in the second it was indexed, by the user or by the agent — are read again, not trusted; and a
git that does not answer never holds the ask."""

from __future__ import annotations

import os
from pathlib import Path

from helpers.git_race import stage_then_rewrite
from helpers.review_ui import committed, review, virtual_lines
from nvim_harness import wait_for
from plugin_harness import editor

UNSURE = "changed during the turn before the agent named it: no baseline to compare with"


def test_a_write_the_moment_the_prompt_arrives_is_the_turns(tmp_path: Path) -> None:
    committed(tmp_path, {"a.txt": "a1\n"})
    with editor(tmp_path) as ed:
        ed.turn("/say ready")  # the agent runs: the next prompt goes as soon as it is asked
        for i in range(3):
            ed.turn(f"/disk-write a.txt A{i}")  # no permission asked: written on arrival
            assert review(ed)["items"] == [["a.txt", 1, f"+1 -1 A{i}"]]


def test_outside_git_a_file_written_then_named_is_never_its_own_baseline(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text("c1\n")
    (tmp_path / "d.txt").write_text("d1\n")
    with editor(tmp_path) as ed:
        ed.turn("/locate c.txt")  # a turn that names c.txt holds its text: a checkpoint
        ed.turn("/disk-write c.txt C1\n/locate c.txt\n/disk-write d.txt D1\n/locate d.txt")
        assert review(ed)["items"] == [
            ["c.txt", 1, "+1 -1 C1"],  # against the checkpoint
            ["d.txt", 1, UNSURE],  # none holds it: said, not hidden
        ]
        ed.nvim.command("cfirst | cnext")
        ed.nvim.command("MiniMeReject")
        ed.wait_note("no baseline of d.txt is known: nothing to put back")
        assert (tmp_path / "d.txt").read_text() == "D1\n"
        ed.nvim.command("MiniMeAccept")
        assert [i[0] for i in review(ed)["items"]] == ["c.txt"], "accepted: not shown again"


def test_a_rewrite_in_the_second_the_user_indexed_it_is_read_again(tmp_path: Path) -> None:
    """The first snapshot starts from a copy of the user's index: an entry whose file changed
    at the same size in the second it was indexed is read again, not trusted."""
    committed(tmp_path, {"b.txt": "bbbb\n"})
    stage_then_rewrite(str(tmp_path), "b.txt", "BBBB\n")  # the user, just before asking
    with editor(tmp_path) as ed:
        ed.turn("/disk-write b.txt bbbX")
        assert review(ed)["items"] == [["b.txt", 1, "+1 -1 bbbX"]]
        buf = ed.lua("return vim.fn.bufnr(...)", str(tmp_path / "b.txt"))
        assert virtual_lines(ed, buf) == ["BBBB"], "the baseline is the file, not the entry"


def test_a_rewrite_in_the_second_the_agent_indexed_it_is_seen(tmp_path: Path) -> None:
    """The agent stages a file (`git add`, its entry's times new) and rewrites it at the same
    size in that second: the review's snapshot never trusts the user's index."""
    committed(tmp_path, {"a.txt": "aaaa\n"})
    with editor(tmp_path) as ed:
        ed.turn("/stage-rewrite a.txt AAAA")
        assert review(ed)["items"] == [["a.txt", 1, "+1 -1 AAAA"]]


def test_a_git_slower_than_the_bound_never_holds_the_ask(tmp_path: Path) -> None:
    """A `.gitignore` that is a FIFO holds git until its own bound (5 s here): the prompt goes
    after the baseline's (3 s), saying so, and the review says what it covers."""
    committed(tmp_path, {"a.txt": "a1\n"})
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "sub" / ".gitignore")
    with editor(tmp_path) as ed:
        ed.lua("require('minime.git').TIMEOUT_MS = 5000")
        done, text = ed.turn("/say hello")
        assert done["stop_reason"] == "end_turn" and "hello" in text
        assert "the review's baseline was not written in time (git is slow here)" in text
        ed.nvim.command("MiniMeReview")
        ed.wait_note("the turn's baseline is still being recorded")
        snapshots = (
            "return require('minime.review.baseline').snapshots"
            "[require('minime.threads').key(...) or ''] or 0"
        )
        wait_for(lambda: ed.lua(snapshots, ed.cwd) == 1, 10, message="for git's end")
        ed.nvim.command("MiniMeReview")
        ed.wait_note("git could not snapshot turn 1 (git ls-files did not answer within 5 s)")
