"""`:h minime` works without a build step: doc/tags is committed and must match doc/minime.txt."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nvim_harness
from nvim_harness import REPO


def test_committed_help_tags_are_fresh(tmp_path: Path) -> None:
    doc = tmp_path / "doc"
    doc.mkdir()
    shutil.copy(REPO / "doc" / "minime.txt", doc / "minime.txt")
    subprocess.run(
        [nvim_harness.nvim_binary(), "--clean", "--headless", "-c", f"helptags {doc}", "-c", "qa!"],
        check=True,
        timeout=30,
        capture_output=True,
    )
    fresh = (doc / "tags").read_text(encoding="utf-8")
    committed = (REPO / "doc" / "tags").read_text(encoding="utf-8")
    assert committed == fresh, (
        "doc/tags is stale: run  nvim --clean --headless -c 'helptags doc' -c q"
    )


def test_help_opens_on_the_by_hand_route() -> None:
    # The repo on 'runtimepath' and nothing else, as README's by-hand install leaves it.
    with nvim_harness.start() as nvim:
        nvim.command("help minime-commands")
        assert nvim.eval("&buftype") == "help"
        assert nvim.funcs.expand("%:t") == "minime.txt"
        nvim.command("help :MiniMeAsk")
        assert ":MiniMeAsk" in nvim.current.line


def test_help_minime_opens_at_the_top() -> None:
    # Before the *minime* tag, `:h minime` matched the MCP section's tags first (issue 32, N5).
    with nvim_harness.start() as nvim:
        nvim.command("help minime")
        assert nvim.funcs.expand("%:t") == "minime.txt"
        assert "*minime*" in nvim.current.line
        assert nvim.funcs.line(".") <= 3
