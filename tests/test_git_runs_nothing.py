"""Git run by the plugin executes nothing a repository configures (lua/minime/git.lua): an agent
that can write `.git/config`, `.gitattributes` or hooks plants every kind of program git would
run — core.fsmonitor, clean/smudge/process filters, a textconv driver, an external diff, every
hook (through core.hooksPath and .git/hooks), and the same inside a submodule — and none of them
runs through an ask (the turn's baseline), an `@` completion, a review or a reject, while the
review still shows the right hunks."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from helpers.review_ui import committed, git, lines, quickfix, review, turn_with_writes
from nvim_harness import wait_for
from plugin_harness import editor

# Every hook git knows of (githooks(5), git 2.39): any of them planted must stay silent.
HOOKS = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
]


def program(path: Path, marks: Path, name: str, then: str = "") -> str:
    """A script that leaves the file `marks/name` when git runs it, then does `then`."""
    path.write_text(f'#!/bin/sh\ntouch "{marks}/{name}"\n{then}\n')
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def plant(repo: Path, tools: Path, marks: Path) -> None:
    """Every executing setting, as an agent with a shell would write them into `repo`."""
    tools.mkdir(exist_ok=True)
    marks.mkdir(exist_ok=True)
    settings = {
        "core.fsmonitor": program(tools / "fsmonitor", marks, "fsmonitor"),
        "filter.evil.clean": program(tools / "clean", marks, "clean", "exec cat"),
        "filter.evil.smudge": program(tools / "smudge", marks, "smudge", "exec cat"),
        "filter.evil.required": "true",
        "filter.long.process": program(tools / "process", marks, "process", "exit 1"),
        "diff.evil.textconv": program(tools / "textconv", marks, "textconv", 'cat "$1"'),
        "diff.external": program(tools / "extdiff", marks, "extdiff"),
        "core.hooksPath": str(tools / "hooks"),
        "core.sshCommand": program(tools / "ssh", marks, "ssh"),
        "core.pager": program(tools / "pager", marks, "pager", "exec cat"),
        "gc.auto": "1",
    }
    for key, value in settings.items():
        git(repo, "config", key, value)
    git_dir = Path(git(repo, "rev-parse", "--absolute-git-dir").strip())
    for hooks in (tools / "hooks", git_dir / "hooks"):
        hooks.mkdir(exist_ok=True)
        for hook in HOOKS:
            program(hooks / hook, marks, "hook-" + hook)
    (repo / ".gitattributes").write_text("*.txt filter=evil diff=evil\n*.dat filter=long\n")


def test_no_program_a_repository_configures_runs_and_the_review_is_right(tmp_path: Path) -> None:
    repo, tools, marks = tmp_path / "repo", tmp_path / "tools", tmp_path / "marks"
    committed(repo, {"a.txt": "a1\na2\na3\n", "d.dat": "d\n", "src/s.txt": "s\n"})
    plant(repo, tools, marks)
    index = (repo / ".git" / "index").read_bytes()
    with editor(repo) as ed:
        got = ed.nvim.call("getcompletion", "MiniMeAsk @", "cmdline")
        assert {"@a.txt", "@d.dat", "@src/s.txt", "@.gitattributes"} <= set(got), got

        turn_with_writes(ed, "/shell-write a.txt a1\\nA2\\na3\n/shell-write d.dat D", writes=2)
        assert review(ed)["items"] == [["a.txt", 2, "+1 -1 A2"], ["d.dat", 1, "+1 -1 D"]]
        ed.nvim.command("MiniMeReject")  # a.txt's hunk: its baseline text back, saved
        assert (repo / "a.txt").read_text() == "a1\na2\na3\n"
        assert review(ed, "all")["items"] == [["d.dat", 1, "+1 -1 D"]]
        ed.nvim.command("MiniMeReject!")
        assert (repo / "d.dat").read_text() == "d\n"
    assert sorted(os.listdir(marks)) == [], "git ran a program the repository configured"
    assert (repo / ".git" / "index").read_bytes() == index, "the user's index untouched"


def test_nothing_runs_inside_a_submodule(tmp_path: Path) -> None:
    """`git add -A` runs `git status` in each submodule under the submodule's own config."""
    sub, repo = tmp_path / "sub", tmp_path / "repo"
    tools, marks = tmp_path / "tools", tmp_path / "marks"
    committed(sub, {"s.txt": "s1\n"})
    committed(repo, {"a.txt": "a1\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    git(repo, "commit", "-qm", "sub")
    plant(repo / "sub", tools, marks)  # the submodule's own settings
    (repo / "sub" / "s.txt").write_text("s2\n")  # dirty: git would look inside
    with editor(repo) as ed:
        ed.nvim.call("getcompletion", "MiniMeAsk @", "cmdline")
        turn_with_writes(ed, "/shell-write a.txt A1", writes=1)
        assert review(ed)["items"] == [["a.txt", 1, "+1 -1 A1"]]
        buf = ed.lua("return vim.fn.bufnr(...)", str(repo / "a.txt"))
        ed.nvim.command("MiniMeReject")
        wait_for(lambda: lines(ed, buf) == ["a1"], 10, message="for the reject")
        assert quickfix(ed)["items"] == []
    assert sorted(os.listdir(marks)) == [], "git ran a program the submodule configured"


def test_a_fifo_where_git_reads_ends_git_and_the_ask_goes_on(tmp_path: Path) -> None:
    """A `.gitignore` that is a FIFO holds any git that reads it: the plugin's git is killed at
    its bound, the ask is not held past the baseline's bound, and the review says why it covers
    only the files the turn named."""
    repo = tmp_path / "repo"
    committed(repo, {"a.txt": "a1\n"})
    os.mkfifo(repo / "sub.gitignore")
    (repo / "sub").mkdir()
    os.rename(repo / "sub.gitignore", repo / "sub" / ".gitignore")
    with editor(repo) as ed:
        ed.lua("require('minime.git').TIMEOUT_MS = 1000")
        turn_with_writes(ed, "/ask-write a.txt A1", writes=1)
        q = review(ed)
        assert q["items"] == [["a.txt", 1, "+1 -1 A1"]], "the file the turn named"
        ed.wait_note("git could not snapshot turn 1 (git ls-files did not answer within 1 s)")
    assert gits_in(repo) == [], "no git left running"


def gits_in(directory: Path) -> list[int]:
    """The git processes running in `directory`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            if comm == "git" and os.readlink(f"/proc/{pid}/cwd").startswith(str(directory)):
                found.append(int(pid))
    return found
