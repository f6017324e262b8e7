"""Completion of `@` mentions in a real Neovim: :MiniMeAsk's command-line completion
(``getcompletion``) and the input float's 'omnifunc' through the built-in <C-x><C-o>. Files come
from git's index in a repository (ignored files left out), else from a walk; denied files never."""

from __future__ import annotations

import subprocess
from pathlib import Path

from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, agent_file, editor_with


def tree(cwd: Path) -> None:
    (cwd / "src").mkdir(parents=True)
    (cwd / "src" / "main.py").write_text("print(1)\n")
    (cwd / "notes.txt").write_text("n\n")
    (cwd / ".env").write_text("KEY=1\n")
    (cwd / "build.log").write_text("ignored\n")
    (cwd / "node_modules" / "pkg").mkdir(parents=True)
    (cwd / "node_modules" / "pkg" / "index.js").write_text("x\n")


def complete(ed, line: str) -> list[str]:
    return ed.nvim.call("getcompletion", line, "cmdline")


def test_cmdline_completes_gits_files_without_ignored_or_denied_ones(tmp_path: Path) -> None:
    cwd = tmp_path / "repo"
    tree(cwd)
    (cwd / ".gitignore").write_text("build.log\nnode_modules/\n")
    subprocess.run(["git", "init", "-q", str(cwd)], check=True)
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(cwd, opts) as ed:
        got = complete(ed, "MiniMeAsk look at @")
        assert {"@notes.txt", "@src/", "@src/main.py", "@.gitignore"} <= set(got), got
        for absent in ("@build.log", "@.env", "@node_modules/pkg/index.js"):
            assert absent not in got, got
        assert complete(ed, "MiniMeAsk @src/m") == ["@src/main.py"]
        assert complete(ed, "MiniMeAsk src") == []  # only mentions complete


def test_cmdline_walks_a_tree_that_is_no_repository(tmp_path: Path) -> None:
    cwd = tmp_path / "plain"
    tree(cwd)
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(cwd, opts) as ed:
        got = complete(ed, "MiniMeAsk @")
        assert {"@notes.txt", "@src/", "@src/main.py", "@build.log"} <= set(got), got
        assert "@.env" not in got and not any("node_modules" in g for g in got), got


def test_open_buffers_come_first(tmp_path: Path) -> None:
    cwd = tmp_path / "plain"
    tree(cwd)
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(cwd, opts) as ed:
        ed.nvim.command("edit src/main.py")
        assert complete(ed, "MiniMeAsk @")[0] == "@src/main.py"


def test_omnifunc_completes_a_mention_in_the_input_float(tmp_path: Path) -> None:
    cwd = tmp_path / "plain"
    tree(cwd)
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(cwd, opts) as ed:
        ed.lua("require('minime').ask()")
        wait_for(lambda: ed.nvim.api.win_get_config(0)["relative"] == "editor", 10)
        assert ed.nvim.eval("&omnifunc") == "v:lua.require'minime.ui.complete'.func"
        ed.nvim.input("see @src/ma<C-x><C-o>")
        wait_for(lambda: ed.nvim.current.line == "see @src/main.py", 10)
        # Not in a mention: no completion, and the text stays.
        ed.nvim.input(" plain<C-x><C-o>")
        wait_for(lambda: ed.nvim.current.line == "see @src/main.py plain", 10)
