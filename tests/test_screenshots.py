"""Reference screenshots of the conversation float and the permission float (tests/screenshots/).

Each test draws a fixed scene in a 120x40 headless Neovim and compares the screen, its attributes
and the float's highlight extmarks with a committed text file: any change to what the user sees
(a glyph, a colour, a concealed marker, the float's place or title) fails until the reference is
accepted with MINIME_UPDATE_SCREENSHOTS=1 (see tests/screenshot.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nvim_harness
import pytest
import screenshot
from nvim_harness import wait_for

KEY = "/tmp/minime-shot"

INIT = """
vim.o.columns, vim.o.lines = 120, 40
vim.o.shortmess = vim.o.shortmess .. 'I'
vim.notify = function() end
require('minime').setup({ permission = { key_delay = 0 } })
_G.ask = function(req) require('minime.ui.permission').open(req, function() end) end
"""

ANSWER_1 = (
    "The bug is in **parse**: it drops the last line.\n\n"
    "```lua\nlocal function parse(s)\n  return vim.split(s, '\\n')\nend\n```\n\n"
    "- keep the *last* line\n- add a test\n"
)


@pytest.fixture
def nvim() -> Iterator[Any]:
    with nvim_harness.start(INIT) as n:
        yield n
        assert n.exec_lua("return require('minime.ui.turn').errors") == []
        assert n.exec_lua("return require('minime.ui.turn.markdown').errors") == []


def apply(nvim: Any, *events: dict[str, Any]) -> None:
    nvim.exec_lua("require('minime.ui.turn').apply(...)", KEY, list(events))


def settled(nvim: Any, buf: int) -> str:
    """The screenshot once no markdown block waits and two shots in a row agree."""
    pending = (
        "local buf = ...; local ns = require('minime.ui.turn.markdown').ns_pending\n"
        "return #vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, {})"
    )
    last: list[str] = [""]

    def stable() -> str | None:
        if nvim.exec_lua(pending, buf) != 0:
            return None
        shot = screenshot.take(nvim, buf)
        same, last[0] = shot == last[0], shot
        return shot if same else None

    return wait_for(stable, 10, message="for the markdown marks to settle")


def test_conversation_float(nvim: Any) -> None:
    apply(
        nvim,
        {"kind": "begin", "prompt": "why does parse lose a line?", "cwd": KEY, "session_id": "s1"},
        {"kind": "thinking", "text": "The split keeps a trailing empty item.\n"},
        {"kind": "text", "text": ANSWER_1},
        {
            "kind": "tool_call",
            "id": "t1",
            "title": "bash: ls tests",
            "tool_kind": "execute",
            "status": "pending",
            "input": {"command": "ls tests"},
        },
        {"kind": "tool_result", "id": "t1", "status": "completed", "output": "test_parse.lua\n"},
        {
            "kind": "done",
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1200, "output_tokens": 34, "total_tokens": 1234},
            "error": None,
        },
    )
    apply(
        nvim,
        {"kind": "begin", "prompt": "fix it", "cwd": KEY, "session_id": "s1"},
        {
            "kind": "plan",
            "entries": [
                {"content": "change parse", "status": "completed", "priority": "high"},
                {"content": "run the tests", "status": "in_progress", "priority": "medium"},
                {"content": "commit", "status": "pending", "priority": "low"},
            ],
        },
        {"kind": "text", "text": "Done: `parse` now keeps **every** line."},
        {"kind": "done", "stop_reason": "end_turn", "usage": None, "error": None},
    )
    buf = nvim.exec_lua("return require('minime.ui.turn').get(...).buf", KEY)
    screenshot.check("conversation", settled(nvim, buf))


def test_queued_asks_under_the_running_turn(nvim: Any) -> None:
    apply(
        nvim,
        {"kind": "begin", "prompt": "run the tests", "cwd": KEY, "session_id": "s1"},
        {"kind": "text", "text": "Running them now; this takes a while.\n"},
        {
            "kind": "tool_call",
            "id": "t1",
            "title": "bash: make test",
            "tool_kind": "execute",
            "status": "in_progress",
            "input": {"command": "make test"},
        },
        {"kind": "tool_result", "id": "t1", "status": "completed", "output": "2 failed\n"},
        {"kind": "text", "text": "Two failed; reading the first one.\n"},
        {"kind": "queued", "prompts": ["then fix the first failure", "/review now"]},
    )
    buf = nvim.exec_lua("return require('minime.ui.turn').get(...).buf", KEY)
    screenshot.check("queued", settled(nvim, buf))


def test_permission_float(nvim: Any) -> None:
    nvim.exec_lua(
        "ask(...)",
        {
            "id": "r1",
            "cwd": KEY,
            "session_id": "s1",
            "title": "Edit src/app.py",
            "tool_kind": "edit",
            "input": {"path": "src/app.py"},
            "content": [
                {
                    "type": "diff",
                    "path": "src/app.py",
                    "oldText": "a = 1\nb = 2\nc = 3\n",
                    "newText": "a = 1\nb = 20\nc = 3\n",
                },
            ],
            "options": [
                {"option_id": "allow", "name": "Allow", "kind": "allow_once"},
                {"option_id": "allow_always", "name": "Always allow", "kind": "allow_always"},
                {"option_id": "reject", "name": "Reject", "kind": "reject_once"},
                {"option_id": "never", "name": "Never", "kind": "reject_always"},
            ],
        },
    )
    win = wait_for(
        lambda: nvim.exec_lua("return require('minime.ui.permission').win()"), 5, message="float"
    )
    buf = nvim.exec_lua("return vim.api.nvim_win_get_buf(...)", win)
    screenshot.check("permission", settled(nvim, buf))


CODE = [
    "def parse(s):",
    '    """Split s into its lines."""',
    "    return s.split('\\n')[:-1]",
    "",
    "",
    "def test_parse():",
    "    assert parse('a\\nb') == ['a', 'b']",
]


def panel_scene(nvim: Any, columns: int, lines: int) -> int:
    """Code in the window at the left, the conversation in the panel beside it (the split
    layout, the default), with a running turn and two queued asks; the panel's buffer."""
    nvim.exec_lua(
        "vim.o.columns, vim.o.lines = ...\n"
        "require('minime').setup({ window = { layout = 'split' },"
        " permission = { key_delay = 0 } })\n"
        "vim.api.nvim_buf_set_lines(0, 0, -1, false, select(3, ...))\n"
        "vim.bo.modified = false",
        columns,
        lines,
        CODE,
    )
    apply(
        nvim,
        {"kind": "begin", "prompt": "why does parse lose a line?", "cwd": KEY, "session_id": "s1"},
        {"kind": "text", "text": ANSWER_1},
        {"kind": "queued", "prompts": ["then fix it", "/review now"]},
    )
    return nvim.exec_lua("return require('minime.ui.turn').get(...).buf", KEY)


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (160, 45)], ids=["80x24", "160x45"])
def test_the_panel_beside_the_code(nvim: Any, columns: int, lines: int) -> None:
    buf = panel_scene(nvim, columns, lines)
    win = nvim.exec_lua("return require('minime.ui.turn').get(...).win", KEY)
    assert nvim.exec_lua("return vim.api.nvim_win_get_config(...).relative", win) == ""
    screenshot.check(f"panel-{columns}x{lines}", settled(nvim, buf))
