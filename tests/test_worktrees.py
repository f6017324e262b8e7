"""Threads in worktrees of their own (:h minime-worktrees): `:MiniMeNew worktree` in a git
repository whose configuration plants a program for every hook, filter and fsmonitor git
knows. A real headless Neovim, its Python host, the fake mm and real git.

Asserted: where the worktree is (under the plugin's data directory, never in the user's tree),
its branch and files (as git stores them: no smudge filter ran), the tab page whose cwd it is,
the agent's cwd (the fake's trace), the tools' scope (the main tree's files refused), the
review (only the worktree's writes), the overview's line, what closing asks, what is removed,
and that no planted program ran while a worktree was made, listed or removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from helpers.wire import trace
from nvim_harness import start, wait_for
from plugin_harness import (
    ALLOW_CLIENT_TOOLS,
    FAKE_MM_BIN,
    Editor,
    agent_file,
    editor,
    editor_with,
    init,
    tool_answer,
)

# Every hook git runs, planted: each leaves a file named after itself in the marks directory.
HOOKS = [
    *["applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit"],
    *[
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "pre-rebase",
        "post-checkout",
        "post-merge",
    ],
    *["pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update"],
    *["reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite"],
    *["sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist"],
    *["p4-post-changelist", "p4-pre-submit", "post-index-change"],
]

# The last turn of thread `...` whose baseline is recorded (its snapshot written).
SNAPSHOT = (
    "local s = require('minime.review.baseline').sessions[...]"
    " local last = s and s.turns[#s.turns] return last and not last.pending and last.n or false"
)

# vim.ui.select answered by the test: each offer kept (its prompt and items); _G.pick(i) answers.
PICK = """
_G.offers = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.offers, { prompt = opts.prompt, items = items, kind = opts.kind })
  _G.pick = function(i) on_choice(items[i], i) end
end
"""


def editor_picking(root: Path) -> Any:
    """``editor(root)`` whose vim.ui.select the test answers (PICK)."""
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(root)}
    return editor_with(root, opts, PICK, timeout=30.0)


@contextlib.contextmanager
def neovim_in(cwd: Path, data: Path, opts: Any) -> Iterator[Editor]:
    """A Neovim in ``cwd`` whose data directory is ``data`` (shared by the test's Neovims)."""
    with start(init(opts), env={"XDG_DATA_HOME": str(data)}) as nvim:
        nvim.command(f"cd {cwd}")
        yield Editor(nvim, cwd, timeout=30.0)


def git(cwd: Path, *args: str) -> str:
    """The test's own git: nothing the repository configures runs (the marks stay the plugin's)."""
    argv = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", *args]
    return subprocess.run(argv, cwd=cwd, check=True, capture_output=True, text=True).stdout


def planted_repo(root: Path, marks: Path) -> None:
    """A repository with one commit (a.txt, an attribute naming a filter and a diff driver),
    then every hook and a config that runs a program for fsmonitor, filters and diff."""
    root.mkdir()
    marks.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / ".gitignore").write_text("trace.jsonl\nagent.yaml\n")
    (root / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    (root / "a.txt").write_text("l1\nl2\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "one")
    for hook in HOOKS:
        script = root / ".git" / "hooks" / hook
        script.write_text(f"#!/bin/sh\ntouch {marks}/hook-{hook}\ncat >/dev/null\n")
        script.chmod(0o755)

    def ran(what: str) -> str:
        return f"sh -c 'touch {marks}/{what}; cat'"

    for key, what in (
        ("filter.evil.smudge", "smudge"),
        ("filter.evil.clean", "clean"),
        ("filter.evil.process", "process"),
        ("diff.evil.textconv", "textconv"),
        ("diff.evil.command", "diff-command"),
        ("core.fsmonitor", "fsmonitor"),
        ("diff.external", "external-diff"),
    ):
        git(root, "config", key, ran(what))


def tool(ed: Editor, cwd: str, name: str, args: dict[str, Any]) -> str:
    """What the model of the thread of ``cwd`` (the window's) read from editor tool ``name``."""
    count = len(ed.done()) + 1
    ed.ask(f"/tool {name} {json.dumps(args)}")
    ed.wait_done(count)
    return tool_answer(ed.turn_text(cwd), name)


def marks_of(marks: Path) -> list[str]:
    return sorted(p.name for p in marks.iterdir())


def worktree_thread(ed: Editor) -> dict[str, Any]:
    """The thread that has a worktree, once it is made."""
    return wait_for(
        lambda: ed.lua(
            "for _, t in ipairs(require('minime.threads').all()) do"
            " if t.worktree then return t end end"
        ),
        ed.timeout,
        message="for the worktree thread",
    )


def another_worktree_thread(ed: Editor, *known: str) -> dict[str, Any]:
    """A thread with a worktree other than those of ``known`` ids, once it is made."""
    return wait_for(
        lambda: next(
            (
                t
                for t in ed.lua("return require('minime.threads').all()")
                if t.get("worktree") and t["id"] not in known
            ),
            None,
        ),
        ed.timeout,
        message="for another worktree thread",
    )


def overview_line(ed: Editor, thread_id: str) -> str:
    ed.nvim.command("MiniMeThreads")
    ids = [t["id"] for t in ed.lua("return require('minime.threads').all()")]
    row = ids.index(thread_id) + 1
    ed.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", row)
    return ed.lua("return vim.api.nvim_get_current_line()")


def worktrees_of(root: Path) -> list[str]:
    return [
        line.split(" ", 1)[1]
        for line in git(root, "worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]


def test_a_worktree_thread_works_in_its_own_tree_and_tab(tmp_path: Path) -> None:
    """The worktree is made under stdpath('data'), on branch minime/<slug>, from HEAD; its
    files are the repository's as stored; a tab page's cwd is it; the agent's session, the
    tools' scope and the review are the worktree's; nothing planted ran."""
    root, marks = tmp_path / "repo", tmp_path / "marks"
    planted_repo(root, marks)
    with editor(root, permission_rules=ALLOW_CLIENT_TOOLS) as ed:
        ed.nvim.command("MiniMeNew worktree")
        t = worktree_thread(ed)
        wt = t["worktree"]
        path = Path(wt["path"])
        data = ed.nvim.call("stdpath", "data")
        assert wt["path"].startswith(f"{data}/minime/worktrees/repo-")
        assert not wt["path"].startswith(str(root))
        assert wt["branch"].startswith("minime/mm-") and t["cwd"] == wt["path"]
        assert wt["base"] == git(root, "rev-parse", "HEAD").strip()
        assert (path / "a.txt").read_text() == "l1\nl2\n", "as git stores it"
        assert ed.lua("return #vim.api.nvim_list_tabpages()") == 2
        assert ed.lua("return vim.fn.getcwd(-1, vim.fn.tabpagenr())") == wt["path"]
        ed.wait_note("minime: thread in worktree")
        assert marks_of(marks) == [], "no program the repository configures ran"
        # The agent works there: its session's cwd, the tools' scope.
        ed.lua("vim.cmd.badd(...)", str(root / "a.txt"))  # listed: only its scope refuses it
        answer = tool(ed, wt["path"], "read_buffer", {"path": str(root / "a.txt")})
        assert "not a file open in the editor under the working directory" in answer, answer
        ed.lua("vim.cmd.badd(...)", str(path / "a.txt"))
        read = tool(ed, wt["path"], "read_buffer", {"path": "a.txt"})
        assert json.loads(read)["text"] == "l1\nl2", read
        sessions = [
            m["params"]["cwd"] for m in trace(root, "in") if m.get("method") == "session/new"
        ]
        assert sessions == [wt["path"]]
        # Its review sees its own writes, not the main tree's.
        (root / "a.txt").write_text("main tree\n")
        count = len(ed.done()) + 1
        ed.ask("/shell-write a.txt l1\\nworktree")
        win = ed.permission_win()
        wait_for(lambda: ed.lua(SNAPSHOT, t["id"]) == 3, 20, message="for the turn's baseline")
        ed.press(win, "1")
        ed.wait_done(count)
        assert (path / "a.txt").read_text() == "l1\nworktree\n"
        ed.lua("vim.fn.setqflist({}, 'f')")
        ed.nvim.command("MiniMeReview")
        items = wait_for(
            lambda: ed.lua(
                "return vim.tbl_map(function(i) return { vim.api.nvim_buf_get_name(i.bufnr),"
                " i.text } end, vim.fn.getqflist())"
            ),
            20,
            message="for the review",
        )
        assert items == [[str(path / "a.txt"), "+1 -1 worktree"]]
        wait_for(lambda: f"{wt['branch']} [changes]" in overview_line(ed, t["id"]), 20,
                 message="the overview to show the branch and its changes")  # fmt: skip
        assert root.joinpath("a.txt").read_text() == "main tree\n"
        assert str(path) in worktrees_of(root)


def test_closing_asks_about_a_worktree_with_changes_and_removes_an_empty_one(
    tmp_path: Path,
) -> None:
    """x on a worktree thread with changes asks keep or remove (keep: the worktree and branch
    stay, the thread leaves the list); with commits not merged likewise (remove: both go);
    an empty one goes without a question. Nothing planted ran."""
    root, marks = tmp_path / "repo", tmp_path / "marks"
    planted_repo(root, marks)
    with editor_picking(root) as ed:
        ed.nvim.command("MiniMeNew worktree")
        kept = worktree_thread(ed)
        Path(kept["worktree"]["path"], "new.txt").write_text("untracked\n")
        line = overview_line(ed, kept["id"])
        wait_for(lambda: "[changes]" in overview_line(ed, kept["id"]), 20, message="its status")
        ed.nvim.input("x")
        offer = wait_for(lambda: ed.lua("return _G.offers[1]"), 20, message="the question")
        assert offer["kind"] == "minime.worktree"
        assert offer["prompt"].endswith(f"({kept['worktree']['branch']}) holds changes:")
        ed.lua("_G.pick(1)")  # keep
        ed.wait_note("minime: worktree kept:")
        assert Path(kept["worktree"]["path"], "new.txt").exists()
        assert kept["worktree"]["branch"] in git(root, "branch", "--list", "minime/*")
        assert ed.lua("return require('minime.threads').get(...)", kept["id"]) is None
        assert line

        # Commits not merged: asked, then removed with the branch.
        ed.nvim.command("tabnext 1")
        ed.nvim.command("MiniMeNew worktree")
        committed = another_worktree_thread(ed, kept["id"])
        where = Path(committed["worktree"]["path"])
        assert marks_of(marks) == [], "made, listed, kept: nothing the repository configures ran"
        (where / "b.md").write_text("b\n")
        git(where, "add", "b.md")
        git(where, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "b")
        for mark in marks.iterdir():  # the test's own git may run a filter (a racy file)
            mark.unlink()
        wait_for(lambda: "1 commit not merged" in overview_line(ed, committed["id"]), 20,
                 message="its status")  # fmt: skip
        ed.nvim.input("x")
        offer = wait_for(lambda: ed.lua("return _G.offers[2]"), 20, message="the question")
        assert "1 commit not merged" in offer["prompt"]
        tabs = ed.lua("return #vim.api.nvim_list_tabpages()")
        ed.lua("_G.pick(2)")  # remove
        wait_for(lambda: not where.exists(), 20, message="the worktree to go")
        wait_for(lambda: committed["worktree"]["branch"] not in git(root, "branch"), 20,
                 message="the branch to go")  # fmt: skip
        wait_for(lambda: ed.lua("return #vim.api.nvim_list_tabpages()") == tabs - 1, 10,
                 message="its tab page to close")  # fmt: skip

        # An empty one: no question.
        ed.nvim.command("tabnext 1")
        ed.nvim.command("MiniMeNew worktree")
        empty = another_worktree_thread(ed, kept["id"], committed["id"])
        overview_line(ed, empty["id"])
        ed.nvim.input("x")
        wait_for(lambda: not Path(empty["worktree"]["path"]).exists(), 20,
                 message=f"removed {ed.notes()} {ed.lua('return _G.offers')}")  # fmt: skip
        assert len(ed.lua("return _G.offers")) == 2, "not asked"
        assert worktrees_of(root) == [str(root), kept["worktree"]["path"]]
        assert marks_of(marks) == [], "no program the repository configures ran"


def test_a_worktree_thread_mid_start_up_mid_turn_and_from_another_threads_window(
    tmp_path: Path,
) -> None:
    """:MiniMeNew worktree while the agent still starts for the first ask, then from the
    window of that thread's conversation while its slow turn runs: each new thread works in
    its own worktree, its ask never waits behind the slow turn, each answer lands in its own
    conversation; the worktree is made from the main tree (the window's cwd's repository)."""
    root, marks = tmp_path / "repo", tmp_path / "marks"
    planted_repo(root, marks)
    gate = tmp_path / "initialize.go"
    config = agent_file(root, fake={"hold_initialize": str(gate)})
    with editor(root, config=config) as ed:
        first = ed.lua("return require('minime.actions').thread_of()")
        ed.ask("/slow 300")
        wait_for(
            lambda: any(m.get("method") == "initialize" for m in trace(root, "in")),
            ed.timeout,
            message="initialize sent",
        )
        ed.nvim.command("MiniMeNew worktree")
        one = worktree_thread(ed)
        ed.ask("/say in the worktree")  # the worktree's tab: its cwd's thread
        gate.write_text("")
        ed.wait_done(1)
        assert ed.done()[0]["thread"] == one["id"]
        assert "in the worktree" in ed.conversation_text(one["cwd"])
        # From the window of the first thread's conversation, mid-turn.
        ed.nvim.command("tabnext 1")
        buf = ed.lua("return require('minime.ui.turn').get(...).buf", first)
        ed.nvim.command(f"botright sbuffer {buf}")
        assert ed.lua("return require('minime.threads').here()") == first
        ed.nvim.command("MiniMeNew worktree")
        two = another_worktree_thread(ed, one["id"])
        assert two["worktree"]["root"] == str(root) != two["cwd"]
        assert two["worktree"]["path"] != one["worktree"]["path"]
        ed.ask("/say second worktree")
        ed.wait_done(2)
        assert ed.done()[1]["thread"] == two["id"]
        running = ed.lua("return require('minime.ui.turn').get(...).running", first)
        assert running, "the slow turn runs on"
        assert "second worktree" not in ed.conversation_text(one["cwd"])
        ed.lua("require('minime').cancel(...)", first)
        ed.wait_done(3)


def test_worktree_outside_a_repository_and_worktree_always(tmp_path: Path) -> None:
    """Outside git: `:MiniMeNew worktree` says so and makes nothing; with worktree = "always"
    a plain :MiniMeNew still makes a plain thread there, and a worktree thread in a repository."""
    plain, root, marks = tmp_path / "plain", tmp_path / "repo", tmp_path / "marks"
    plain.mkdir()
    planted_repo(root, marks)
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(plain), "worktree": "always"}
    with editor_with(plain, opts, timeout=30.0) as ed:
        ed.nvim.command("MiniMeNew worktree")
        note = ed.wait_note("no worktree")
        assert note == f"minime: no worktree: {plain} is not in a git repository"
        assert ed.lua("return #require('minime.threads').all()") == 0
        ed.nvim.command("MiniMeNew")
        wait_for(lambda: ed.lua("return #require('minime.threads').all()") == 1, 10,
                 message="a plain thread")  # fmt: skip
        assert ed.lua("return require('minime.threads').all()[1].worktree") is None
        ed.nvim.command(f"cd {root}")
        ed.nvim.command("MiniMeNew")
        assert worktree_thread(ed)["worktree"]["root"] == str(root)


def test_after_a_crash_a_worktree_thread_reopens_in_its_worktree_and_an_empty_one_is_cleaned(
    tmp_path: Path,
) -> None:
    """Neovim 1 makes two worktree threads (one asked, one never: no session) and is killed.
    Neovim 2 on the same data directory: reading the list removes the empty worktree of the
    thread that never had a session (its Neovim is gone); the other is listed with its branch,
    and <CR> reopens it in its worktree's tab page, its session loaded there."""
    root, marks = tmp_path / "repo", tmp_path / "marks"
    planted_repo(root, marks)
    data = tmp_path / "data"
    config = agent_file(root)
    opts = {"mm": FAKE_MM_BIN, "config": config, "warm": False}
    with neovim_in(root, data, opts) as ed:
        ed.nvim.command("MiniMeNew worktree")
        asked = worktree_thread(ed)
        ed.ask("/say in the worktree")
        ed.wait_done(1)
        ed.nvim.command("tabnext 1")
        ed.nvim.command("MiniMeNew worktree")
        empty = another_worktree_thread(ed, asked["id"])
        session = ed.lua("return require('minime.threads').get(...).session_id", asked["id"])
        saved = data / "nvim" / "minime" / "threads"
        wait_for(
            lambda: json.loads((saved / f"{asked['id']}.json").read_text()).get("session_id"),
            10,
            message="the asked thread's record",
        )
        os.kill(ed.lua("return vim.fn.getpid()"), signal.SIGKILL)  # a crash
    assert Path(empty["worktree"]["path"]).exists() and (saved / f"{empty['id']}.json").exists()
    stored = {
        "sessionId": session,
        "cwd": asked["cwd"],
        "history": [{"role": "agent", "text": "kept"}],
    }
    agent = yaml.safe_load(Path(config).read_text())
    agent["fake"]["load_sessions"] = [stored]
    Path(config).write_text(yaml.safe_dump(agent))
    with neovim_in(root, data, opts) as ed:
        ed.nvim.command("MiniMeThreads")
        wait_for(lambda: not Path(empty["worktree"]["path"]).exists(), 20, message="cleaned")
        wait_for(lambda: not (saved / f"{empty['id']}.json").exists(), 10, message="its record")
        assert empty["worktree"]["branch"] not in git(root, "branch")
        (line,) = wait_for(
            lambda: (
                len(lines := ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")) == 1
                and lines
            ),
            10,
            message="one thread listed",
        )
        assert " saved " in line and asked["worktree"]["branch"] in line, line
        ed.nvim.input("<CR>")
        ed.wait_done(1)
        assert ed.lua("return vim.fn.getcwd(-1, vim.fn.tabpagenr())") == asked["cwd"]
        loads = [m["params"] for m in trace(root, "in") if m.get("method") == "session/load"]
        assert [(p["sessionId"], p["cwd"]) for p in loads] == [(session, asked["cwd"])]
        assert "kept" in ed.conversation_text(asked["cwd"])


def test_closing_a_worktree_thread_mid_turn_removes_its_worktree_once_closed(
    tmp_path: Path,
) -> None:
    """x while the worktree thread's turn runs: the turn is cancelled and drawn, the thread
    closes, and only then its (empty) worktree and branch go; the main tree's thread runs on."""
    root, marks = tmp_path / "repo", tmp_path / "marks"
    planted_repo(root, marks)
    with editor_picking(root) as ed:
        ed.nvim.command("MiniMeNew worktree")
        t = worktree_thread(ed)
        ed.ask("/slow 400")
        ed.wait_text("slow 0", cwd=t["cwd"])
        overview_line(ed, t["id"])
        ed.nvim.input("x")
        done = ed.wait_done(1)
        assert done["thread"] == t["id"] and done["stop_reason"] == "cancelled"
        wait_for(lambda: t["worktree"]["branch"] not in git(root, "branch"), 20,
                 message="the branch to go")  # fmt: skip
        assert not Path(t["worktree"]["path"]).exists()
        assert ed.lua("return _G.offers") == [], "an empty worktree: no question"
        notes = ed.notes()
        closed = next(i for i, n in enumerate(notes) if n.startswith("minime: thread mm"))
        assert "closed" in notes[closed]
        assert worktrees_of(root) == [str(root)]


def test_no_room_for_the_worktree_s_tab_page_is_said_plainly(tmp_path: Path) -> None:
    """E36 from :tabnew (a screen with no room left) came in git's answer as a Lua stack trace
    and a more-prompt that held Neovim (the random sequence test's seed 567549663): now one
    plain line, and the thread works in its worktree all the same."""
    root, marks = tmp_path / "repo", tmp_path / "marks"
    planted_repo(root, marks)
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(root)}
    with editor_with(root, opts, timeout=30.0) as ed:
        ed.nvim.command("set lines=12 cmdheight=10")
        tabs = ed.lua("return #vim.api.nvim_list_tabpages()")
        ed.nvim.command("MiniMeNew worktree")
        note = ed.wait_note("no tab page for the worktree")
        t = worktree_thread(ed)
        assert note == (
            "minime: no tab page for the worktree (E36: Not enough room); the thread works in "
            + ed.lua("return vim.fn.fnamemodify(..., ':~')", t["cwd"])
            + " all the same"
        )
        assert ed.lua("return #vim.api.nvim_list_tabpages()") == tabs
        messages = ed.nvim.api.exec2("messages", {"output": True})["output"]
        assert "stack traceback" not in messages and "Error executing" not in messages
        assert marks_of(marks) == []


def test_a_new_thread_where_the_directory_is_gone_says_so(tmp_path: Path) -> None:
    """A tab page whose directory was removed under it (a worktree closed from another tab
    page): `:MiniMeNew worktree` ran git there and said `…/_system.lua:252: ENOENT …` (seed 15
    of the random sequences). Now one plain line, and no thread is made."""
    root, marks = tmp_path / "repo", tmp_path / "marks"
    planted_repo(root, marks)
    gone = root / "gone"
    gone.mkdir()
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(root)}
    with editor_with(root, opts, timeout=30.0) as ed:
        ed.nvim.command(f"tcd {gone}")
        gone.rmdir()
        for command in ("MiniMeNew worktree", "MiniMeNew"):
            ed.lua("_G.notes = {}")
            ed.nvim.command(command)
            note = ed.wait_note("directory is gone")
            assert note == "minime: no new thread: this window's directory is gone (:cd to another)"
        assert ed.lua("return #require('minime.threads').all()") == 0
        assert marks_of(marks) == []
