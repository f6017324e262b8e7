"""The review (:MiniMeReview and its commands, lua/minime/review/) as a user drives it in a real
Neovim: git repositories to review in, the quickfix list and the hunks it shows, a turn whose
writes wait for their permission. Used by test_review*.py and test_git_runs_nothing.py."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from nvim_harness import wait_for
from plugin_harness import Editor


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def git_repo(path: Path) -> None:
    git(path, "init", "-q")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    (path / ".gitignore").write_text("trace.jsonl\nagent.yaml\n")  # the fake mm's files


def committed(path: Path, files: dict[str, str]) -> None:
    """A git repository at ``path`` holding ``files`` (name -> text), committed."""
    path.mkdir(parents=True, exist_ok=True)
    git_repo(path)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "start")


def load(ed: Editor, path: Path) -> int:
    return int(ed.lua("local b = vim.fn.bufadd(...) vim.fn.bufload(b) return b", str(path)))


def lines(ed: Editor, buf: int) -> list[str]:
    return ed.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)


def quickfix(ed: Editor) -> dict[str, Any]:
    return ed.lua(
        "local q = vim.fn.getqflist({ title = 1, items = 1 })"
        " return { title = q.title, items = vim.tbl_map(function(i)"
        " return { vim.fn.fnamemodify(vim.api.nvim_buf_get_name(i.bufnr), ':t'), i.lnum, i.text }"
        " end, q.items) }"
    )


def review(ed: Editor, arg: str = "") -> dict[str, Any]:
    """:MiniMeReview, and the quickfix list once it is filled (it is built off the main loop)."""
    ed.lua("vim.fn.setqflist({}, 'f')")
    ed.nvim.command("MiniMeReview " + arg)
    return wait_for(
        lambda: (q := quickfix(ed))["items"] and q, 20, message="for the review's quickfix list"
    )


def turn_with_writes(ed: Editor, prompt: str, writes: int) -> None:
    """Ask; answer each write's permission (the baseline is written before the prompt goes)."""
    count = len(ed.done()) + 1
    ed.ask(prompt)
    win = None
    for _ in range(writes):
        win = ed.permission_win(other_than=win)
        ed.press(win, "1")
    ed.wait_done(count)


def virtual_lines(ed: Editor, buf: int) -> list[str]:
    return ed.lua(
        "local ns = require('minime.review.hunks').ns local out = {}"
        " for _, m in ipairs(vim.api.nvim_buf_get_extmarks(..., ns, 0, -1, { details = true })) do"
        " for _, l in ipairs(m[4].virt_lines or {}) do out[#out + 1] = l[1][1] end end"
        " return out",
        buf,
    )


def at(ed: Editor, line: int) -> None:
    ed.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", line)
