"""The conversation float read as a user sees it, in a real Neovim with the fake mm: the
``editor`` fixture, the cwd's turn state, the float's title, the current window. Used by
test_conversation.py, test_drafts.py and test_reset_midturn.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor_with


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[Editor]:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path, trace=False)}
    with editor_with(tmp_path, opts) as ed:
        yield ed


def turn(ed: Editor) -> dict[str, Any]:
    return ed.lua("return require('minime.ui.turn').get(...) or vim.NIL", ed.cwd) or {}


def title(ed: Editor) -> str:
    win = turn(ed).get("win")
    if not win:
        return ""
    return "".join(chunk[0] for chunk in ed.float_config(win)["title"])


def wait_title(ed: Editor, needle: str) -> str:
    return wait_for(lambda: needle in title(ed) and title(ed), ed.timeout, message=needle)


def current(ed: Editor) -> dict[str, Any]:
    return ed.lua(
        "local w = vim.api.nvim_get_current_win()"
        " return { win = w, kind = vim.b.minime or vim.NIL,"
        " height = vim.api.nvim_win_get_height(w), mode = vim.api.nvim_get_mode().mode }"
    )


def wait_input(ed: Editor) -> dict[str, Any]:
    return wait_for(
        lambda: (c := current(ed))["kind"] == "input" and c, ed.timeout, message="the input"
    )
