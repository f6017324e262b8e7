"""Following the agent (`follow`, :MiniMeFollow, lua/minime/ui/follow.lua) and <CR> on a tool
line, in a real Neovim with the fake mm: its ``/locate`` calls name files in their ACP
``locations`` (tests/fake_mm_faults.py). Each test reads what the user sees: the windows, the
buffer and line each shows, where the cursor and the mode are."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from helpers.shared_nvim import SharedNvim
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor_with

# What the user sees of the follow window (none: nil fields), and where they are.
SEEN = """
local f = require('minime.ui.follow')
local api = vim.api
local win = f.win and api.nvim_win_is_valid(f.win) and f.win or nil
local normal = vim.tbl_filter(function(w)
  return api.nvim_win_get_config(w).relative == ''
end, api.nvim_tabpage_list_wins(0))
return {
  win = win,
  file = win and vim.fn.fnamemodify(api.nvim_buf_get_name(api.nvim_win_get_buf(win)), ':t'),
  line = win and api.nvim_win_get_cursor(win)[1],
  split = win and api.nvim_win_get_config(win).relative == '',
  current = api.nvim_get_current_win(),
  mode = api.nvim_get_mode().mode,
  windows = #normal,
}
"""


def seen(ed: Editor) -> dict[str, Any]:
    """The follow window's fields are absent when there is none (Lua's nil): None here."""
    return {"win": None, "file": None, "line": None, "split": None, **ed.lua(SEEN)}


def files(cwd: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt", "main.txt"):
        (cwd / name).write_text("".join(f"{name} {i}\n" for i in range(1, 21)))


SHARED = SharedNvim()


def follow_editor(tmp_path: Path, follow: bool = True, idle: float = 0, fresh: bool = False) -> Any:
    """An editor in ``tmp_path`` editing main.txt; ``idle``: permission.idle."""
    files(tmp_path)
    opts = {
        "mm": FAKE_MM_BIN,
        "config": agent_file(tmp_path),
        "follow": follow,
        "permission": {"focus": "idle", "idle": idle},
    }
    return SHARED.editor_with(tmp_path, opts, fresh=fresh, timeout=30.0)


def user_window(ed: Editor) -> int:
    ed.nvim.command("edit main.txt")
    return ed.lua("return vim.api.nvim_get_current_win()")


def wait_shown(ed: Editor, file: str, line: int) -> dict[str, Any]:
    return wait_for(
        lambda: (s := seen(ed))["file"] == file and s["line"] == line and s,
        10,
        message=f"for the follow window to show {file}:{line}",
    )


def ask(ed: Editor, prompt: str) -> None:
    """An ask from any mode (a function call: no command line of its own)."""
    ed.lua("require('minime').ask(...)", prompt)


def test_follow_shows_where_the_agent_is_in_one_split_it_never_enters(tmp_path: Path) -> None:
    with follow_editor(tmp_path) as ed:
        mine = user_window(ed)
        ed.turn("/locate a.txt:3 b.txt:7")
        s = wait_shown(ed, "b.txt", 7)  # the last place the call reached
        assert s["split"] and s["win"] != mine and s["windows"] == 2
        assert s["current"] == mine and s["mode"] == "n", "the focus stays with the user"
        ed.turn("/locate c.txt:12")
        again = wait_shown(ed, "c.txt", 12)
        assert again["win"] == s["win"] and again["windows"] == 2, "one follow window, reused"
        ed.turn("/locate a.txt:999")
        assert wait_shown(ed, "a.txt", 20)["current"] == mine, "a line past the end: the last"
        # The file the user edits is untouched and theirs.
        assert ed.lua("return vim.fn.expand('%:t')") == "main.txt"


@pytest.mark.parametrize(("keys", "mode"), [("i", "i"), (":", "c"), ("v", "v")])
def test_a_location_reached_while_the_user_types_waits_until_they_stop(
    tmp_path: Path, keys: str, mode: str
) -> None:
    with follow_editor(tmp_path) as ed:
        mine = user_window(ed)
        ed.nvim.input(keys)
        wait_for(lambda: seen(ed)["mode"] == mode, 5, message=f"for mode {mode}")
        count = len(ed.done()) + 1
        ask(ed, "/locate b.txt:5")
        ed.wait_done(count)
        ed.wait_text("locate -> done")
        s = seen(ed)
        assert s["win"] is None and s["windows"] == 1, "nothing opens while the user types"
        assert s["mode"] == mode and s["current"] == mine
        ed.nvim.input("<Esc>")
        shown = wait_shown(ed, "b.txt", 5)
        assert shown["current"] == mine and shown["mode"] == "n"


def test_a_location_waits_for_the_permission_idle_rule(tmp_path: Path) -> None:
    """permission.idle: a key typed, then within 30 s nothing shows; once the rule allows it
    (idle 0 now), the waiting location does."""
    with follow_editor(tmp_path, idle=30) as ed:
        user_window(ed)
        ed.nvim.input("0")  # a key in normal mode: the user is at work
        wait_for(lambda: ed.lua("return require('minime.ui.last_key').ms() > 0"), 5)
        ed.turn("/locate b.txt:4")
        assert seen(ed)["win"] is None
        ed.lua("require('minime.config').options.permission.idle = 0")
        wait_shown(ed, "b.txt", 4)


def test_the_window_the_user_is_in_is_never_moved(tmp_path: Path) -> None:
    with follow_editor(tmp_path) as ed:
        mine = user_window(ed)
        ed.turn("/locate a.txt:2")
        follow_win = wait_shown(ed, "a.txt", 2)["win"]
        ed.lua("vim.api.nvim_set_current_win(...)", follow_win)
        ed.turn("/locate b.txt:6")
        s = seen(ed)
        assert (s["file"], s["line"]) == ("a.txt", 2), "the window the user is in stays"
        ed.lua("vim.api.nvim_set_current_win(...)", mine)
        assert wait_shown(ed, "b.txt", 6)["current"] == mine


def test_denied_and_outside_files_are_never_shown_nor_loaded(tmp_path: Path) -> None:
    cwd = tmp_path / "proj"
    cwd.mkdir()
    (tmp_path / "outside.txt").write_text("secret outside\n")
    (cwd / ".env").write_text("TOKEN=1\n")
    os.symlink(tmp_path / "outside.txt", cwd / "link.txt")
    with follow_editor(cwd) as ed:
        user_window(ed)
        for place in (".env:1", "../outside.txt:1", "link.txt:1", str(tmp_path)):
            ed.turn(f"/locate {place}")
            assert seen(ed)["win"] is None, place
        loaded = ed.lua(
            "return vim.tbl_map(function(b) return vim.fn.fnamemodify("
            "vim.api.nvim_buf_get_name(b), ':t') end, vim.api.nvim_list_bufs())"
        )
        assert not {".env", "outside.txt", "link.txt"} & set(loaded), loaded
        ed.turn("/locate a.txt:2")
        wait_shown(ed, "a.txt", 2)


def test_follow_toggles_before_start_up_and_mid_turn(tmp_path: Path) -> None:
    with follow_editor(tmp_path, follow=False, fresh=True) as ed:  # no host yet
        mine = user_window(ed)
        ed.nvim.command("MiniMeFollow")
        ed.wait_note("minime: follow on")
        ed.nvim.command("MiniMeFollow")
        ed.wait_note("minime: follow off")
        assert ed.lua("return require('minime.host').chan") is None, "nothing started"
        ed.ask(
            "/locate a.txt:2\n/locate-wait go b.txt:4\n/locate-wait go2 c.txt:5\n/locate a.txt:9"
        )
        ed.wait_line("⚙ Read b.txt:4")
        assert seen(ed)["win"] is None, "off: nothing shown"
        ed.nvim.command("MiniMeFollow")
        ed.wait_note("follow on")
        (tmp_path / "go").write_text("")
        s = wait_shown(ed, "c.txt", 5)  # mid-turn: the call waits for go2
        assert ed.lua("return require('minime.ui.turn').get(...).running", ed.cwd)
        assert s["current"] == mine
        ed.nvim.command("MiniMeFollow")
        ed.wait_note("minime: follow off")
        (tmp_path / "go2").write_text("")
        ed.wait_done(1)
        s = seen(ed)
        assert (s["file"], s["line"]) == ("c.txt", 5), "off again: a.txt:9 not shown"


def test_cr_on_a_tool_line_opens_its_location_in_the_code_window_mid_turn(
    tmp_path: Path,
) -> None:
    with follow_editor(tmp_path, follow=False) as ed:
        mine = user_window(ed)
        ed.ask("/say before\n/locate-wait go b.txt:7\n/say after")
        header = ed.wait_line("⚙ Read b.txt:7")
        t = ed.lua("return require('minime.ui.turn').get(...)", ed.cwd)
        assert t["win"] and t["running"], "the conversation float is shown, the turn runs"
        lines = ed.conversation_lines()
        ed.lua("vim.api.nvim_set_current_win(...)", t["win"])
        ed.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", lines.index("before") + 1)
        ed.nvim.input("<CR>")  # not a tool line: <CR> moves down, as before
        wait_for(lambda: ed.lua("return vim.fn.line('.')") > lines.index("before") + 1, 5)
        assert ed.lua("return vim.api.nvim_get_current_win()") == t["win"]
        ed.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", lines.index(header) + 1)
        ed.nvim.input("<CR>")
        wait_for(lambda: ed.lua("return vim.fn.expand('%:t')") == "b.txt", 10, message="for b.txt")
        assert ed.lua("return vim.api.nvim_get_current_win()") == mine, "a code window, no float"
        assert ed.lua("return vim.fn.line('.')") == 7
        assert seen(ed)["win"] is None, "follow is off: <CR> opened no follow window"
        (tmp_path / "go").write_text("")
        assert ed.wait_done(1)["stop_reason"] == "end_turn"


def test_follow_toggled_while_the_agent_starts(tmp_path: Path) -> None:
    files(tmp_path)
    hold = tmp_path / "started"
    opts = {
        "mm": FAKE_MM_BIN,
        "config": agent_file(tmp_path, fake={"hold_initialize": str(hold)}),
        "permission": {"idle": 0},
    }
    with editor_with(tmp_path, opts, timeout=30.0) as ed:
        mine = user_window(ed)
        ed.ask("/locate a.txt:4")
        wait_for(lambda: ed.lua("return require('minime.host').chan") is not None, 20)
        ed.nvim.command("MiniMeFollow")
        ed.wait_note("minime: follow on")
        hold.write_text("")
        ed.wait_done(1)
        assert wait_shown(ed, "a.txt", 4)["current"] == mine
