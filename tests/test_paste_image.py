"""An image pasted from the system clipboard into the input float (<M-v>), end to end, on each
real clipboard (tests/helpers/clipboards.py): an X server (Xvfb) with xclip, and a Wayland
compositor (headless sway) with wl-clipboard; a real Neovim, its Python host and
tests/agents/prompt_agent.py, which records each prompt's content blocks as they crossed the
wire. A clipboard whose programs are not installed is skipped (scripts/setup installs them as
root); the test without a clipboard tool needs none."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import clipboards
from helpers.clipboards import Clipboard
from nvim_harness import wait_for
from plugin_harness import Editor, editor_with

AGENT = Path(__file__).with_name("agents") / "prompt_agent.py"
# The smallest PNG: 1x1, transparent.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

BACKENDS = {
    "x11": (clipboards.x11, clipboards.has_x11, "Xvfb and xclip"),
    "wayland": (clipboards.wayland, clipboards.has_wayland, "sway and wl-clipboard"),
}


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def clip(request: pytest.FixtureRequest) -> Iterator[Clipboard]:
    """A real system clipboard, each kind for the whole module (skipped where its programs are
    not installed: scripts/setup installs them as root)."""
    start, installed, needs = BACKENDS[request.param]
    if not installed():
        pytest.skip(f"needs {needs} (scripts/setup installs them as root)")
    with start() as board:
        yield board


@contextlib.contextmanager
def prompt_editor(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    board: Clipboard | None,
    caps: str,
    held: tuple[bytes, str] = (PNG, "image/png"),
) -> Iterator[tuple[Editor, Path]]:
    """A Neovim reaching ``board`` (none: no clipboard at all) while it holds ``held`` (its
    bytes, its type), asking prompt_agent.py with promptCapabilities ``caps``."""
    with contextlib.ExitStack() as stack:
        if board:
            stack.enter_context(board.hold(*held))
        yield stack.enter_context(agent_editor(tmp_path, monkeypatch, board, caps))


@contextlib.contextmanager
def agent_editor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, board: Clipboard | None, caps: str
) -> Iterator[tuple[Editor, Path]]:
    cwd = tmp_path / "project"
    cwd.mkdir()
    trace = tmp_path / "prompts.jsonl"
    for name in clipboards.VARIABLES:  # the child Neovim inherits the test's environment
        monkeypatch.delenv(name, raising=False)
    for name, value in (board.env if board else {}).items():
        monkeypatch.setenv(name, value)
    agent = {"cmd": [sys.executable, str(AGENT), str(trace), caps], "label": "prompt-agent"}
    with editor_with(cwd, {"agent": agent}, timeout=30.0) as ed:
        yield ed, trace


def open_input(ed: Editor) -> int:
    ed.lua("require('minime').ask()")
    return wait_for(
        lambda: ed.lua("return vim.b.minime == 'input' and vim.api.nvim_get_current_win() or nil"),
        10,
        message="the input float",
    )


def input_text(ed: Editor, win: int) -> str:
    return "\n".join(ed.float_lines(win))


def paste_and_send(ed: Editor, trace: Path, typed: str) -> tuple[str, list[dict[str, Any]]]:
    """Type ``typed``, paste the clipboard's image (<M-v>), send: (the input's text once the
    token is in it, the blocks the agent received)."""
    win = open_input(ed)
    ed.nvim.input(typed)
    ed.nvim.input("<M-v>")
    text = wait_for(
        lambda: "@clipboard-" in input_text(ed, win) and input_text(ed, win),
        10,
        message="the image's token in the input",
    )
    count = len(ed.done()) + 1
    ed.nvim.input("<CR>")
    ed.wait_done(count)
    lines = wait_for(lambda: trace.exists() and trace.read_text(), 10, message="the prompt")
    return text, json.loads(lines.splitlines()[-1])


@pytest.mark.parametrize("takes_images", [True, False])
def test_a_pasted_image_is_kept_outside_the_cwd_and_sent_where_the_agent_takes_images(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clip: Clipboard, takes_images: bool
) -> None:
    caps = "embeddedContext,image" if takes_images else "embeddedContext"
    with prompt_editor(tmp_path, monkeypatch, clip, caps) as (ed, trace):
        text, blocks = paste_and_send(ed, trace, "what is this")
        if takes_images:
            ed.wait_text("📎 clipboard-1.png (image)")
            note = None
        else:
            note = ed.wait_note("not attached")
        state = ed.lua("return vim.fn.stdpath('state')")
        kept = list(Path(state, "minime", "pasted").iterdir())
        kept_bytes = [p.read_bytes() for p in kept]
        in_cwd = os.listdir(ed.cwd)
        ed.lua("vim.api.nvim_exec_autocmds('VimLeavePre', { group = 'minime.pasted_image' })")
        left = [p for p in kept if p.exists()]
    assert text == "what is this @clipboard-1.png "
    assert blocks[0] == {"type": "text", "text": text}, "the text as typed"
    if takes_images:
        assert len(blocks) == 2
        assert blocks[1]["type"] == "image" and blocks[1]["mimeType"] == "image/png"
        assert base64.b64decode(blocks[1]["data"]) == PNG
    else:
        assert len(blocks) == 1
        assert base64.b64encode(PNG).decode()[:20] not in trace.read_text()
        assert note is not None and "@clipboard-1.png: the agent does not take images" in note
    assert kept_bytes == [PNG], "kept under stdpath('state')/minime/pasted"
    assert in_cwd == [], "nothing was written in the cwd"
    assert left == [], "the temporary file is deleted when Neovim quits"


def test_a_clipboard_without_an_image_says_so_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clip: Clipboard
) -> None:
    text_only = (b"just text", "UTF8_STRING" if clip.name == "x11" else "text/plain")
    with prompt_editor(tmp_path, monkeypatch, clip, "image", text_only) as (ed, _):
        win = open_input(ed)
        ed.nvim.input("hello<M-v>")
        note = ed.wait_note("clipboard")
        text = input_text(ed, win)
    assert note == "minime: the clipboard holds no image (png, jpeg, gif or webp)"
    assert text == "hello"


def test_without_a_clipboard_tool_the_user_is_told_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with prompt_editor(tmp_path, monkeypatch, None, "image") as (ed, _):
        win = open_input(ed)
        ed.nvim.input("hello<M-v>")
        note = ed.wait_note("clipboard")
        text = input_text(ed, win)
    assert note == (
        "minime: no clipboard tool for images: install wl-clipboard (Wayland) or xclip (X11)"
    )
    assert text == "hello"
