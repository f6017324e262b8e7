""":MiniMeRewind in a real Neovim with the fake mm: every file changed since an ask began put
back — whatever wrote it (an fs write through the editor, the agent's own write, a shell
command) — in git and outside it; files created since removed after one confirmation, deleted
ones written back; a file the user edited since kept unless `!`; `undo`; the one line it says."""

from __future__ import annotations

from pathlib import Path

from helpers.review_ui import committed, git, lines, load
from helpers.rewind_ui import PICKER, opts, rewind, selects, turn
from nvim_harness import wait_for
from plugin_harness import editor_with


def three_turns(ed, cwd: Path) -> None:
    """Ask 1: a shell command writes a.txt; ask 2: the agent's own write of b.txt, a shell
    command creates new.txt; ask 3: an fs write of d.txt through the editor, a shell command
    deletes c.txt."""
    turn(ed, "/shell-write a.txt A1")
    turn(ed, "/ask-write b.txt B1\n/shell-write new.txt N")
    turn(ed, "/fs-write d.txt D1\n/shell-write c.txt -")


FILES = {"a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c0\n", "d.txt": "d0\n"}


def state(cwd: Path) -> dict[str, str | None]:
    names = [*FILES, "new.txt"]
    return {n: (cwd / n).read_text() if (cwd / n).exists() else None for n in names}


def test_rewind_in_git_to_a_middle_ask_then_undo_then_to_the_first(tmp_path: Path) -> None:
    committed(tmp_path, FILES)
    with editor_with(tmp_path, opts(tmp_path), PICKER, timeout=30.0) as ed:
        dbuf = load(ed, tmp_path / "d.txt")
        three_turns(ed, tmp_path)
        after = state(tmp_path)
        assert after == {
            "a.txt": "A1\n",
            "b.txt": "B1\n",
            "c.txt": None,
            "d.txt": "D1\n",
            "new.txt": "N\n",
        }
        line = rewind(ed, "2")
        assert line == "minime: rewound to before ask 2: 3 files restored, 1 removed", line
        assert state(tmp_path) == {**FILES, "a.txt": "A1\n", "new.txt": None}
        assert selects(ed)[0]["prompt"] == (
            "Rewind the files to before ask 2; it removes files created since: new.txt"
        )
        assert lines(ed, dbuf) == ["d0"], "the loaded buffer holds the text too"
        ed.nvim.command(f"buffer {dbuf}")
        ed.nvim.command("normal! u")
        assert lines(ed, dbuf) == ["D1"], "one u undoes the rewind in that buffer"
        ed.nvim.command("normal! \x12")  # <C-r>

        line = rewind(ed, "undo")
        assert line == "minime: rewind undone: 3 files restored, 1 removed", line
        assert state(tmp_path) == after

        line = rewind(ed, "1")
        assert line.startswith("minime: rewound to before ask 1: 4 files restored, 1 removed")
        assert state(tmp_path) == {**FILES, "new.txt": None}
        assert git(tmp_path, "status", "--porcelain") == ""


def test_rewind_outside_git_restores_what_the_turns_recorded(tmp_path: Path) -> None:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    with editor_with(tmp_path, opts(tmp_path), PICKER, timeout=30.0) as ed:
        for name in FILES:  # outside git, what a rewind knows: buffers and what turns name
            load(ed, tmp_path / name)
        three_turns(ed, tmp_path)
        line = rewind(ed, "2")
        assert line.startswith("minime: rewound to before ask 2: 3 files restored"), line
        got = state(tmp_path)
        assert {k: got[k] for k in FILES} == {**FILES, "a.txt": "A1\n"}


def test_a_file_the_user_edited_after_the_ask_is_kept_unless_bang(tmp_path: Path) -> None:
    committed(tmp_path, FILES)
    with editor_with(tmp_path, opts(tmp_path), PICKER, timeout=30.0) as ed:
        turn(ed, "/shell-write a.txt A1\n/shell-write b.txt B1")
        (tmp_path / "b.txt").write_text("mine\n")  # after the turn: the user's
        line = rewind(ed)
        assert line == (
            "minime: rewound to before ask 1: 1 file restored;"
            " kept, you edited them since (:MiniMeRewind! 1 restores them): b.txt"
        ), line
        assert state(tmp_path)["a.txt"] == "a0\n" and state(tmp_path)["b.txt"] == "mine\n"
        line = rewind(ed, "1", bang=True)
        assert line == "minime: rewound to before ask 1: 1 file restored", line
        assert state(tmp_path)["b.txt"] == "b0\n"


def test_keeping_created_files_and_cancelling(tmp_path: Path) -> None:
    committed(tmp_path, FILES)
    with editor_with(tmp_path, opts(tmp_path), PICKER, timeout=30.0) as ed:
        turn(ed, "/shell-write new.txt N\n/shell-write a.txt A1")
        ed.lua("_G.pick = 3")
        assert rewind(ed) == "minime: rewind cancelled"
        assert state(tmp_path)["a.txt"] == "A1\n"
        ed.lua("_G.pick = 2")
        assert rewind(ed) == "minime: rewound to before ask 1: 1 file restored"
        assert state(tmp_path)["new.txt"] == "N\n" and state(tmp_path)["a.txt"] == "a0\n"
        wait_for(lambda: len(selects(ed)) == 2, 5)
