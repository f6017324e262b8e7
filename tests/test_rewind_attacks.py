""":MiniMeRewind against what can change under it: links swapped in while its confirmation
waits (a restored file, a file it removes, a directory on the way), the agent still starting,
another thread of the same directory; and a git repository that plants every program git runs
gets none run by a rewind."""

from __future__ import annotations

import os
from pathlib import Path

from helpers.review_ui import committed, git
from helpers.rewind_ui import PICKER, opts, rewind, turn
from nvim_harness import wait_for
from plugin_harness import agent_file, editor_with

# The confirmation waits until the test answers it: _G.answer(i).
LATER = """
_G.selects = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.selects, { prompt = opts.prompt, items = items })
  _G.answer = function(i) on_choice(items[i], i) end
end
"""


def test_links_swapped_in_while_the_confirmation_waits_are_never_followed(
    tmp_path: Path,
) -> None:
    cwd, outside = tmp_path / "cwd", tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (outside / "c.txt").write_text("outside c\n")
    committed(cwd, {"a.txt": "a0\n", "sub/c.txt": "c0\n", "d.txt": "d0\n"})
    with editor_with(cwd, opts(cwd), LATER, timeout=30.0) as ed:
        turn(
            ed,
            "/shell-write a.txt A1\n/shell-write sub/c.txt C1\n/shell-write d.txt D1"
            "\n/shell-write new.txt N",
        )
        ed.nvim.command("MiniMeRewind")
        wait_for(lambda: ed.lua("return _G.answer ~= nil"), 20, message="for the confirmation")
        # Meanwhile: a.txt a link out, new.txt a link out, sub a link to the outside directory.
        (cwd / "a.txt").unlink()
        os.symlink(outside / "secret.txt", cwd / "a.txt")
        (cwd / "new.txt").unlink()
        os.symlink(outside / "secret.txt", cwd / "new.txt")
        (cwd / "sub" / "c.txt").unlink()
        (cwd / "sub").rmdir()
        os.symlink(outside, cwd / "sub")
        ed.lua("_G.answer(1)")
        line = ed.wait_note("rewound to before ask 1")
        assert line.startswith("minime: rewound to before ask 1: 1 file restored; not restored: ")
        for name in ("a.txt", "new.txt", "sub/c.txt"):
            assert name in line, line
        assert (outside / "secret.txt").read_text() == "secret\n"
        assert (outside / "c.txt").read_text() == "outside c\n"
        assert (cwd / "d.txt").read_text() == "d0\n", "the file nothing touched is restored"
        assert os.path.islink(cwd / "new.txt"), "a link is never removed in a file's name"


def test_refused_while_the_agent_starts_and_acts_on_the_thread_of_the_window(
    tmp_path: Path,
) -> None:
    committed(tmp_path, {"a.txt": "a0\n", "b.txt": "b0\n"})
    hold = tmp_path / "started"
    hold.write_text("")
    config = agent_file(tmp_path, fake={"hold_initialize": str(hold)})
    with editor_with(tmp_path, opts(tmp_path, config=config), PICKER, timeout=30.0) as ed:
        turn(ed, "/shell-write a.txt A1")
        first = ed.lua("return require('minime.threads').here()")
        # A second thread of the same directory writes b.txt.
        ed.nvim.command("MiniMeNew")
        second = ed.lua("return require('minime.threads').here()")
        assert second != first
        turn(ed, "/shell-write b.txt B1")
        # From the first thread's conversation window: its ask, its file; b.txt was not its
        # agent's, and changed after its turn: kept.
        ed.lua("require('minime.ui.turn').open(...)", first)
        win = ed.lua("return require('minime.ui.turn').get(...).win", first)
        ed.lua("vim.api.nvim_set_current_win(...)", win)
        assert rewind(ed) == (
            "minime: rewound to before ask 1: 1 file restored;"
            " kept, you edited them since (:MiniMeRewind! 1 restores them): b.txt"
        )
        assert (tmp_path / "a.txt").read_text() == "a0\n"
        assert (tmp_path / "b.txt").read_text() == "B1\n"
        # Mid-start-up: the first thread's agent stopped, its next ask waits for a new start.
        ed.nvim.command("MiniMeStop")
        hold.unlink()
        ed.lua("require('minime').ask('/say again', nil, ...)", first)
        ed.wait_text("starting the agent", cwd=first)
        ed.lua("vim.api.nvim_set_current_win(...)", win)
        line = rewind(ed)
        assert line.startswith("minime: not rewound: a turn is running in this thread"), line
        hold.write_text("")


def test_a_rewind_runs_nothing_the_repository_configures(tmp_path: Path) -> None:
    committed(tmp_path, {"a.txt": "a0\n", ".gitattributes": "* filter=evil diff=evil\n"})
    marker = tmp_path.parent / "ran"
    evil = f"sh -c 'echo $0 >> {marker}'"
    for key in ("core.fsmonitor", "filter.evil.clean", "filter.evil.smudge", "diff.evil.textconv"):
        git(tmp_path, "config", key, evil)
    hooks = tmp_path / ".git" / "hooks"
    for hook in ("reference-transaction", "post-index-change", "pre-commit"):
        (hooks / hook).write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        (hooks / hook).chmod(0o755)
    with editor_with(tmp_path, opts(tmp_path), PICKER, timeout=30.0) as ed:
        turn(ed, "/shell-write a.txt A1\n/shell-write b.txt B1")
        assert rewind(ed) == "minime: rewound to before ask 1: 1 file restored, 1 removed"
        assert rewind(ed, "undo").startswith("minime: rewind undone: ")
        refs = git(tmp_path, "for-each-ref", "--format=%(refname)", "refs/minime/")
        assert refs.startswith(f"refs/minime/{ed.lua('return vim.fn.getpid()')}/t"), refs
    assert not marker.exists(), marker.read_text()
    assert git(tmp_path, "for-each-ref", "refs/minime/") == "", "Neovim's exit removed its ref"
