"""The conversation as a side panel (`window.layout = "split"`, the default; issue 20): a real
window at the right, beside the code instead of over it, in every tab page that asks for it;
`q` closes the window, never the conversation; and the code-block keys of the conversation
(`gy` yank, `gs` scratch buffer). A real headless Neovim, the Python host and the fake mm.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nvim_harness
import pytest
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor_with

SPLIT = {"window": {"layout": "split"}}

CODE = "".join(f"line {i} of the code, long enough to reach the middle of it\n" for i in range(30))

# Each window of the current tab page: [window, is a float, col, width].
WINDOWS = """
local out = {}
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  local col = vim.api.nvim_win_get_position(w)[2]
  local float = vim.api.nvim_win_get_config(w).relative ~= ''
  out[#out + 1] = { w, float, col, vim.api.nvim_win_get_width(w) }
end
return out
"""


@pytest.fixture
def ed(tmp_path: Path) -> Iterator[Editor]:
    (tmp_path / "code.py").write_text(CODE)
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path, trace=False), **SPLIT}
    with editor_with(tmp_path, opts, timeout=30.0) as e:
        e.nvim.command("edit code.py")
        yield e
        assert e.lua("return require('minime.ui.turn').errors") == []


def turn(ed: Editor) -> dict[str, Any]:
    return ed.lua("return require('minime.ui.turn').get(...) or {}", ed.cwd)


def panel_win(ed: Editor) -> int | None:
    """The conversation's window in the current tab page (None: not shown here)."""
    return turn(ed).get("win")


def test_the_default_layout_is_the_split() -> None:
    """What codecompanion, CopilotChat, avante, agentic.nvim, sidekick and Zed open by
    default: the chat beside the code. The harness pins the float for the float's tests, so
    the default is read from the module's own defaults."""
    out = subprocess.run(
        [
            nvim_harness.nvim_binary(),
            "--clean",
            "--headless",
            "--cmd",
            f"set rtp^={nvim_harness.REPO}",
            "-c",
            "lua io.stdout:write(require('minime.config').options.window.layout)",
            "-c",
            "qa!",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.stdout == "split", out


def test_the_panel_sits_beside_the_code_not_over_it(ed: Editor) -> None:
    ed.turn("hello")
    win = panel_win(ed)
    assert win is not None
    columns = ed.lua("return vim.o.columns")
    windows = ed.lua(WINDOWS)
    assert not any(is_float for _, is_float, _, _ in windows), windows
    assert len(windows) == 2, windows
    code = next(w for w in windows if w[0] != win)
    panel = next(w for w in windows if w[0] == win)
    assert panel[3] == int(columns * 0.4)
    assert panel[2] + panel[3] == columns, "at the editor's right edge"
    assert code[2] + code[3] < panel[2], "the code keeps its own columns, none under the panel"
    assert ed.lua("return vim.bo.filetype") == "python", "the focus stays in the code"
    winbar = ed.lua("return vim.wo[...].winbar", win)
    assert "done" in winbar and "mm" in winbar
    assert "q hide" in ed.lua("return vim.wo[...].statusline", win)
    assert "echo: hello" in ed.conversation_text()


def test_q_closes_the_window_and_the_turn_streams_on(ed: Editor) -> None:
    ed.ask("/slow 400")  # 20 s: still running after q
    ed.wait_text("slow 0")
    win = panel_win(ed)
    assert win is not None
    assert ed.lua("return vim.api.nvim_win_get_config(...).relative", win) == "", "a split"
    ed.nvim.command(f"call win_gotoid({win})")
    ed.nvim.input("q")
    wait_for(lambda: ed.lua("return vim.api.nvim_win_is_valid(...)", win) is False, 5, message="q")
    assert turn(ed)["running"] is True and panel_win(ed) is None
    assert ed.lua("return vim.bo.filetype") == "python"
    seen = ed.conversation_text().count("slow ")
    wait_for(lambda: ed.conversation_text().count("slow ") > seen + 2, 10, message="more chunks")
    ed.nvim.command("MiniMeToggle")
    win = wait_for(lambda: panel_win(ed), 5, message="shown again")
    shown = ed.lua(
        "return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(...), 0, -1, false)", win
    )
    assert shown == ed.conversation_lines() and "slow 0" in "\n".join(shown)
    ed.nvim.command("MiniMeCancel")
    ed.wait_done()


def test_every_tab_page_can_show_the_cwds_conversation(ed: Editor) -> None:
    ed.turn("first")
    first_tab_win = panel_win(ed)
    ed.nvim.command("tabnew")
    assert panel_win(ed) is None, "a new tab page shows only what it is asked to"
    ed.nvim.command("MiniMeToggle")
    second = wait_for(lambda: panel_win(ed), 5, message="the panel in the second tab page")
    assert second != first_tab_win
    buf = turn(ed)["buf"]
    assert ed.lua("return vim.fn.win_findbuf(...)", buf) == sorted([first_tab_win, second]) or set(
        ed.lua("return vim.fn.win_findbuf(...)", buf)
    ) == {first_tab_win, second}
    ed.turn("second")  # asked from the second tab: streams into both
    ed.nvim.command("tabnext 1")
    assert panel_win(ed) == first_tab_win
    lines = ed.lua(
        "return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(...), 0, -1, false)",
        first_tab_win,
    )
    assert "echo: second" in "\n".join(lines)
    ed.nvim.command("MiniMeToggle")  # hides this page's panel only
    assert panel_win(ed) is None
    ed.nvim.command("tabnext 2")
    assert panel_win(ed) == second


def test_the_panel_as_the_last_window_and_wiped_in_another_tab(ed: Editor) -> None:
    ed.turn("one")
    win = panel_win(ed)
    ed.nvim.command(f"call win_gotoid({win}) | only")
    ed.nvim.input("q")  # the last window cannot close: it shows an empty buffer instead
    wait_for(lambda: panel_win(ed) is None, 5, message="the panel hidden")
    assert ed.lua("return vim.api.nvim_win_is_valid(...)", win) is True
    assert ed.lua("return { vim.bo.buftype, vim.wo.winbar, vim.wo.number == vim.go.number }") == [
        "",
        "",
        True,
    ]
    ed.nvim.command("MiniMeToggle")
    wait_for(lambda: panel_win(ed), 5, message="shown again")
    ed.nvim.command("tabnew | MiniMeToggle")
    wait_for(lambda: panel_win(ed), 5, message="shown in the second tab")
    buf = turn(ed)["buf"]
    ed.nvim.command(f"tabnext 1 | bwipeout! {buf}")
    assert ed.lua("return #vim.api.nvim_list_tabpages()") == 2
    ed.turn("two")  # a new buffer, in a panel again
    assert "echo: two" in ed.conversation_text()
    assert panel_win(ed) is not None
    ed.nvim.command("MiniMeReset")  # a reset renews the buffer in every page's panel
    wait_for(lambda: ed.conversation_lines() == [""], 10, message="an empty conversation")
    assert panel_win(ed) is not None
    assert "idle" in ed.lua("return vim.wo[...].winbar", panel_win(ed))


def test_the_reply_input_sits_over_the_panel(ed: Editor) -> None:
    ed.turn("hello")
    win = panel_win(ed)
    assert ed.lua("return vim.api.nvim_win_get_config(...).relative", win) == "", "a split"
    ed.nvim.command(f"call win_gotoid({win})")
    ed.nvim.input("i")
    box = wait_for(
        lambda: next(
            (
                w
                for w in ed.lua("return vim.api.nvim_tabpage_list_wins(0)")
                if ed.lua("return vim.b[vim.api.nvim_win_get_buf(...)].minime", w) == "input"
            ),
            None,
        ),
        5,
        message="the input",
    )
    cfg = ed.float_config(box)
    assert cfg["relative"] == "win" and cfg["win"] == win
    ed.nvim.input("<Esc><Esc>")


def test_gy_yanks_and_gs_opens_the_code_block_under_the_cursor(ed: Editor) -> None:
    answer = "intro\n\n```lua\nlocal x = 1\nreturn x\n```\n\nafter\n"
    ed.lua(
        "require('minime.ui.turn').apply(...)",
        ed.cwd,
        [
            {"kind": "begin", "prompt": "a block", "cwd": ed.cwd, "session_id": "s1"},
            {"kind": "text", "text": answer},
            {"kind": "done", "stop_reason": "end_turn", "usage": None, "error": None},
        ],
    )
    lines = ed.conversation_lines()
    row = lines.index("local x = 1") + 1
    win = wait_for(lambda: panel_win(ed), 5, message="the panel")
    ed.nvim.command(f"call win_gotoid({win})")
    ed.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", row)
    ed.nvim.input("gy")
    wait_for(lambda: ed.lua("return vim.fn.getreg('\"')") == "local x = 1\nreturn x\n", 5)
    assert ed.lua("return vim.fn.getregtype('\"')") == "V"
    ed.nvim.input("gs")
    wait_for(lambda: ed.lua("return vim.bo.filetype") == "lua", 5, message="the scratch buffer")
    assert ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == [
        "local x = 1",
        "return x",
    ]
    assert ed.lua("return { vim.bo.buftype, vim.api.nvim_win_get_config(0).relative }") == [
        "nofile",
        "",
    ]
    assert panel_win(ed) == win, "the panel stays"
    ed.lua("vim.api.nvim_set_current_win(...)", win)
    ed.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", lines.index("after") + 1)
    ed.nvim.input("gy")
    wait_for(
        lambda: any(
            "no code block under the cursor" in n["msg"] for n in ed.lua("return _G.notes")
        ),
        5,
    )


@pytest.mark.parametrize(
    ("lines", "row", "want"),
    [
        (["a", "```py", "x = 1", "```", "b"], 3, [["x = 1"], "py"]),
        (["a", "```py", "x = 1", "```", "b"], 2, [["x = 1"], "py"]),  # on the opening fence
        (["a", "```py", "x = 1", "```", "b"], 4, [["x = 1"], "py"]),  # on the closing fence
        (["a", "```py", "x = 1", "```", "b"], 5, None),
        (["~~~~ sh", "```", "ls", "~~~~"], 3, [["```", "ls"], "sh"]),  # ``` inside ~~~~
        (["```lua", "streaming"], 2, [["streaming"], "lua"]),  # not closed yet: to the end
        (["``` `inline` ```", "x"], 2, None),  # a backtick in the info: no fence
        (["    ```", "indented code", "    ```"], 2, None),  # four spaces: not a fence
        (["```", "plain", "```"], 2, [["plain"], None]),
    ],
)
def test_the_code_block_under_a_line(lines: list[str], row: int, want: Any) -> None:
    with nvim_harness.start("") as n:
        got = n.exec_lua(
            "local b = require('minime.ui.turn.blocks').at(...)"
            " return b and { b.lines, b.lang or vim.NIL } or vim.NIL",
            lines,
            row,
        )
    assert got == want


# The panel's column filled with windows of one line each (the user's splits, each without a
# 'winbar': no line to spare for one), the panel among them.
SQUEEZE = """
vim.o.eventignore = 'WinResized'
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do vim.wo[w].winbar = '' end
for _ = 1, 12 do
  if not pcall(vim.cmd, 'split') then break end
end
vim.o.eventignore = ''
"""


def test_a_panel_squeezed_to_one_line_keeps_quiet_and_its_title(ed: Editor) -> None:
    """A window of one line in a column with no line to spare has no room for a 'winbar'
    (E36, which reached the user on the panel's next title: the seeded sequence 4159672273).
    The title moves into the 'statusline' while the panel is that short, and back into the
    'winbar' when it grows."""
    ed.turn("hello")
    win = panel_win(ed)
    assert win is not None
    ed.nvim.command(f"call win_gotoid({win})")
    ed.nvim.command("set lines=9")
    ed.lua(SQUEEZE)
    ed.lua("vim.v.errmsg = ''")
    ed.turn("again")
    assert ed.lua("return vim.v.errmsg") == ""
    assert ed.lua("return vim.wo[...].winbar", win) == ""
    status = ed.lua("return vim.wo[...].statusline", win)
    assert ed.lua("return vim.api.nvim_win_get_height(...)", win) == 1
    assert status.startswith("done") and "│ i reply" in status, status
    ed.nvim.command("set lines=40")
    ed.lua(
        "for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do"
        " if w ~= ... and vim.api.nvim_win_get_buf(w) == vim.api.nvim_win_get_buf(...) then"
        " vim.api.nvim_win_close(w, false) end end",
        win,
    )
    assert ed.lua("return vim.v.errmsg") == ""
    assert "done" in ed.lua("return vim.wo[...].winbar", win)
    assert "done" not in ed.lua("return vim.wo[...].statusline", win)
