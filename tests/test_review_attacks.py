"""What an agent can do to the files a review touches, and what the review does not do then
(lua/minime/review/): a FIFO where an edited file was never freezes :MiniMeReview; a directory
swapped for a link while "Delete …?" waits deletes nothing outside the cwd; a deleted file is
never restored through a link; a denied file (`.env`) a tool call names is never loaded, read or
listed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.review_ui import committed, load, quickfix, review, turn_with_writes
from helpers.watchdog import Watchdog, unblock_fifo
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, agent_file, editor, editor_with

# vim.ui.select: _G.meanwhile() runs first (what the agent does while the question waits),
# then the first choice ("Delete …") is taken.
PICKER = """
_G.selects = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.selects, opts.prompt)
  if _G.meanwhile then _G.meanwhile() end
  on_choice(items[1], 1)
end
"""


@pytest.mark.parametrize("in_git", [False, True])
def test_a_fifo_where_an_edited_file_was_freezes_nothing(tmp_path: Path, in_git: bool) -> None:
    files = {"a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c1\n"}
    if in_git:
        committed(tmp_path, files)
    else:
        for name, text in files.items():
            (tmp_path / name).write_text(text)
    with editor(tmp_path) as ed:
        load(ed, tmp_path / "c.txt")
        prompt = "/ask-write a.txt A1\n/ask-write b.txt B1\n/ask-write c.txt C1"
        turn_with_writes(ed, prompt, writes=3)
        pipes = [tmp_path / "a.txt", tmp_path / "c.txt"]  # c.txt: a loaded buffer's file
        for pipe in pipes:
            pipe.unlink()
            os.mkfifo(pipe)  # what an agent can do with `rm x; mkfifo x`
        dog = Watchdog(5.0, lambda: [unblock_fifo(pipe) for pipe in pipes])
        q = review(ed)
        dog.stop()
        assert not dog.fired, "Neovim froze on the FIFO"
        assert q["items"] == [["b.txt", 1, "+1 -1 B1"]]
        ed.wait_note("not reviewed, no longer a regular file: a.txt, c.txt")


def test_a_directory_swapped_for_a_link_while_delete_is_asked_deletes_nothing(
    tmp_path: Path,
) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    outside.mkdir()
    (outside / "new.txt").write_text("precious\n")
    committed(repo, {"sub/keep.txt": "k\n"})
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(repo)}
    with editor_with(repo, opts, PICKER, timeout=30.0) as ed:
        turn_with_writes(ed, "/shell-write sub/new.txt hello", writes=1)
        assert review(ed)["items"] == [["new.txt", 1, "created by the agent (+1 lines)"]]
        ed.lua(
            "local sub, moved, outside = ..."
            " _G.meanwhile = function() vim.uv.fs_rename(sub, moved)"
            " vim.uv.fs_symlink(outside, sub) end",
            str(repo / "sub"),
            str(repo / "sub.moved"),
            str(outside),
        )
        ed.nvim.command("MiniMeReject")
        assert ed.lua("return _G.selects") == ["Delete sub/new.txt, which the agent created?"]
        ed.wait_note("not deleted sub/new.txt: its directory is no longer where it was")
        assert (outside / "new.txt").read_text() == "precious\n"
        assert (repo / "sub.moved" / "new.txt").exists()


def test_a_deleted_file_is_never_restored_through_a_link(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    outside.mkdir()
    committed(repo, {"sub/gone.txt": "keep me\n", "sub/also.txt": "also\n"})
    with editor(repo) as ed:
        turn_with_writes(ed, "/shell-write sub/gone.txt -\n/shell-write sub/also.txt -", writes=2)
        deleted = "deleted by the agent (-1 lines; :MiniMeReject here restores it)"
        assert review(ed)["items"] == [["also.txt", 1, deleted], ["gone.txt", 1, deleted]]
        # The agent puts a link where each file was: to a file outside, not there yet.
        os.symlink(outside / "planted.txt", repo / "sub" / "also.txt")
        ed.nvim.command("MiniMeReject")  # also.txt, opened first
        ed.wait_note("cannot restore sub/also.txt: something is there again")
        assert not (outside / "planted.txt").exists()
        # The directory swapped for a link out, the other file is not restored there either.
        os.rename(repo / "sub", repo / "sub.moved")
        os.symlink(outside, repo / "sub")
        ed.nvim.command("cnext")
        ed.nvim.command("MiniMeReject")
        ed.wait_note("cannot restore sub/gone.txt: its directory is no longer where it was")
        assert os.listdir(outside) == []


def test_a_denied_file_a_tool_call_names_is_never_loaded_read_or_listed(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / "a.txt").write_text("a1\n")
    with editor(tmp_path) as ed:
        turn_with_writes(ed, "/ask-write .env KEY=2\n/ask-write a.txt A1", writes=2)
        assert review(ed)["items"] == [["a.txt", 1, "+1 -1 A1"]]
        env = str(tmp_path / ".env")
        assert ed.lua("return vim.fn.bufnr(...)", env) == -1, "never loaded"
        held = "return require('minime.review.baseline').last(...).texts[select(2, ...)]"
        assert ed.lua(held, ed.cwd, env) is None, "never read"
        wait_for(lambda: quickfix(ed)["items"][0][0] == "a.txt", 5, message="the list")
