"""The rough edges a newcomer met in the first ten minutes (issue 32), each as the user sees it:
a real Neovim with a UI attached (the test's pynvim session, 80x24 unless said), the plugin,
the fake mm; what is on screen, which window holds what, whether a prompt waits."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor_with
from screen_grid import Screen


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def git_repo(path: Path) -> None:
    git(path, "init", "-q")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    (path / ".gitignore").write_text("trace.jsonl\nagent.yaml\n")  # the fake mm's files
    (path / "a.txt").write_text("a1\na2\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "a")


# Messages shown on the command line too, as Neovim's own vim.notify shows them (the harness's
# only records them).
SHOWN_NOTES = """
local record = vim.notify
vim.notify = function(msg, level, o)
  record(msg, level, o)
  vim.api.nvim_echo({ { msg } }, true, {})
end
"""


@contextlib.contextmanager
def ui_editor(
    tmp_path: Path, size: tuple[int, int] = (80, 24), **opts: Any
) -> Iterator[tuple[Editor, Screen]]:
    """An editor set up with ``opts`` (the split panel unless said), a UI of ``size`` attached."""
    opts = {
        "mm": FAKE_MM_BIN,
        "config": agent_file(tmp_path),
        "window": {"layout": "split"},
        "permission": {"key_delay": 0},
        **opts,
    }
    with editor_with(tmp_path, opts, SHOWN_NOTES, timeout=30.0) as ed:
        yield ed, Screen.attach(ed.nvim, *size)


def prompt_waits(ed: Editor) -> bool:
    """A hit-enter prompt (or any prompt) holds the editor."""
    mode = ed.nvim.api.get_mode()
    return mode["mode"] in ("r", "rm") or bool(mode["blocking"])


def windows(ed: Editor) -> dict[int, str]:
    """The tab page's normal windows and the tail of the name of what each shows."""
    return ed.lua(
        "local out = {} for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do"
        " if vim.api.nvim_win_get_config(w).relative == '' then"
        " out[tostring(w)] = vim.fn.fnamemodify(vim.api.nvim_buf_get_name("
        "vim.api.nvim_win_get_buf(w)), ':t') end end return out"
    )


def panel_win(ed: Editor) -> int:
    return wait_for(
        lambda: ed.lua("local _, w = require('minime.ui.turn').shown() return w"),
        20,
        message="the panel",
    )


def write_allowed(ed: Editor, prompt: str) -> None:
    """Ask ``prompt`` (one write); allow it once the turn's baseline is taken, as a person
    reading the prompt does; wait for the turn's end."""
    count = len(ed.done()) + 1
    # Baselines are kept per thread: the turn's is its thread's, whichever that is.
    snapshots = (
        "local n = 0 for _, c in pairs(require('minime.review.baseline').snapshots) do"
        " n = n + c end return n"
    )
    before = ed.lua(snapshots)
    ed.ask(prompt)
    wait_for(lambda: ed.lua(snapshots) > before, 20, message="for the baseline")
    answer_permissions(ed, 1)
    ed.wait_done(count)


def answer_permissions(ed: Editor, count: int) -> None:
    win = None
    for _ in range(count):
        win = ed.permission_win(other_than=win)
        ed.press(win, "1")


# -- N1: :MiniMeReject → "Delete" on a created file ---------------------------------------------


def test_rejecting_a_created_file_keeps_the_code_window_and_no_prompt_waits(
    tmp_path: Path,
) -> None:
    git_repo(tmp_path)
    with ui_editor(tmp_path) as (ed, _):
        ed.nvim.command("edit a.txt")
        code = ed.lua("return vim.api.nvim_get_current_win()")
        write_allowed(ed, "/shell-write made.txt hello")
        panel = panel_win(ed)
        ed.lua("vim.api.nvim_set_current_win(...)", code)
        ed.nvim.command("MiniMeReview")
        wait_for(lambda: windows(ed).get(str(code)) == "made.txt", 20, message="made.txt shown")
        # The real vim.ui.select (inputlist): "1" picks "Delete made.txt".
        ed.nvim.input(":MiniMeReject<CR>")
        wait_for(lambda: ed.nvim.api.get_mode()["mode"] == "c", 10, message="the confirmation")
        ed.nvim.input("1<CR>")
        wait_for(lambda: not (tmp_path / "made.txt").exists(), 10, message="made.txt deleted")
        wait_for(lambda: not prompt_waits(ed), 5, message="no Press ENTER after the choice")
        shown = windows(ed)
        assert shown.get(str(code)) == "a.txt", shown  # the code window stays, on a.txt
        assert str(panel) in shown, shown
        # :cc from the panel opens the file in a code window, never in the panel.
        ed.lua("vim.fn.setqflist({ { filename = 'a.txt', lnum = 2 } })")
        ed.lua("vim.api.nvim_set_current_win(...)", panel)
        ed.nvim.command("cc 1")
        shown = windows(ed)
        assert shown[str(panel)] != "a.txt", shown
        assert ed.lua("return vim.api.nvim_get_current_win()") == code
        assert shown[str(code)] == "a.txt"


# -- N8: the demo's banner at 80x24 ---------------------------------------------------------------


def test_the_demos_banner_at_80x24_is_no_hit_enter_prompt() -> None:
    from nvim_harness import REPO, start

    with start("", env={"MM_BIN": "", "PATH": "/usr/bin:/bin"}) as nvim:
        screen = Screen.attach(nvim, 80, 24)
        nvim.exec_lua(f"dofile([==[{REPO}/demo/init.lua]==])")
        screen.showing("minime demo:")
        shown, mode = screen.text(), nvim.api.get_mode()
        if mode["blocking"]:
            nvim.input("<CR>")  # leave the prompt, so that the editor can quit
        assert "Press ENTER" not in shown and not mode["blocking"], shown
        assert "/tour" in shown


# -- N3: a queued ask is seen --------------------------------------------------------------------


def test_the_queued_asks_are_on_screen_under_a_long_running_turn(tmp_path: Path) -> None:
    with ui_editor(tmp_path) as (ed, screen):
        lines = "\n".join(f"/say line {i}" for i in range(40))
        ed.ask(f"{lines}\n/locate-wait go.txt a.txt")
        screen.showing("line 39")
        ed.ask("then fix it")
        ed.ask("/review now")
        screen.showing("⧗ queued 2: /review now")
        assert "⧗ queued 1: then fix it" in screen.text()
        (tmp_path / "go.txt").write_text("")
        ed.wait_done(3)


# -- N6/N14: the panel keeps the user's layout and its chosen width --------------------------------

WIDTHS = """
return vim.tbl_map(function(w) return vim.api.nvim_win_get_width(w) end,
  vim.tbl_filter(function(w) return vim.api.nvim_win_get_config(w).relative == '' end,
    vim.api.nvim_tabpage_list_wins(0)))
"""


def test_toggling_the_panel_keeps_the_code_columns_and_the_width_the_user_gave_it(
    tmp_path: Path,
) -> None:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path), "window": {"layout": "split"}}
    with editor_with(tmp_path, opts, "vim.o.columns = 160", timeout=30.0) as ed:
        ed.nvim.command("vsplit")
        assert ed.lua(WIDTHS) == [80, 79]
        ed.turn("/say hi")
        left, right, panel = ed.lua(WIDTHS)
        assert panel == 64 and abs(left - right) <= 1, (left, right, panel)  # was 80|14
        ed.nvim.command("MiniMeToggle")
        assert ed.lua(WIDTHS) == [80, 79], "hidden: the columns as they were"
        ed.nvim.command("MiniMeToggle")
        ed.lua("local _, w = require('minime.ui.turn').shown() vim.api.nvim_win_set_width(w, 80)")
        ed.nvim.command("MiniMeToggle")
        ed.nvim.command("MiniMeToggle")
        left, right, panel = ed.lua(WIDTHS)
        assert panel == 80 and abs(left - right) <= 1, (left, right, panel)


# -- N7: the @ completion menu at the screen's right edge ----------------------------------------


def test_the_mention_menu_fits_the_screen_each_entry_readable(tmp_path: Path) -> None:
    names = ["agent_pool.py", "session_modes.py", "session_reopen.py", "terminal_view.py"]
    for name in names:
        path = tmp_path / "rplugin/python3/minime/nvim" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    with ui_editor(tmp_path) as (ed, screen):
        ed.turn("/say hi")
        ed.nvim.command("MiniMeAsk")
        screen.showing("<CR> send")
        ed.nvim.input("look at @rplu<C-x><C-o>")
        screen.showing("match 1 of 8")
        menu = screen.rows()
        for name in names:  # each entry ends with its own name (at main all read rplugin/python…)
            assert any(name in row for row in menu), (name, screen.text())
        assert all(len(row) <= 80 for row in screen.rows())


# -- N9: accept, reject and :MiniMeStop say what they did, in one line ---------------------------


def test_accept_reject_and_stop_each_say_what_they_did(tmp_path: Path) -> None:
    git_repo(tmp_path)
    (tmp_path / "b.txt").write_text("l1\nl2\nl3\nl4\nl5\nl6\n")
    git(tmp_path, "add", "b.txt")
    git(tmp_path, "commit", "-qm", "b")
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(tmp_path, opts, timeout=30.0) as ed:
        write_allowed(ed, "/shell-write b.txt l1\\nl2\\nX3\\nl4\\nl5\\nX6")
        ed.nvim.command("MiniMeReview")
        wait_for(lambda: ed.lua("return vim.fn.line('.')") == 3, 20, message="the first hunk")
        ed.nvim.command("MiniMeAccept")
        assert ed.notes()[-1] == "minime: kept the hunk at b.txt:3 (1 left to review)"
        ed.nvim.command("cfirst")
        ed.nvim.command("MiniMeReject")
        said = "minime: reverted the hunk at b.txt:6 and saved (nothing left to review)"
        assert ed.notes()[-1] == said
        assert (tmp_path / "b.txt").read_text() == "l1\nl2\nX3\nl4\nl5\nl6\n"

        ed.ask("/locate-wait go.txt b.txt")
        ed.wait_text("Read b.txt")
        ed.ask("then this")
        ed.ask("and that")
        queued = "return #require('minime.ui.turn').get(...).queued"
        wait_for(lambda: ed.lua(queued, ed.cwd) == 2, 20, message="two asks queued")
        ed.nvim.command("MiniMeStop")
        ed.wait_note("minime: agent stopped;")
        assert ed.notes()[-1] == (
            "minime: agent stopped; 1 turn ended, 2 queued asks dropped"
            " (the text is the next input's draft)"
        )


# -- N10/N11: what went along with the prompt is shown under it ------------------------------------


def test_range_lines_and_a_refused_mention_are_shown_under_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(tmp_path, opts, timeout=30.0) as ed:
        ed.nvim.command("edit README.md")
        ed.nvim.command("10,14MiniMeAsk /say seen")
        ed.wait_done(1)
        lines = [x for x in ed.turn_lines() if x and not x.startswith("ℹ starting")]
        assert lines[:3] == ["> /say seen", "📎 README.md:10-14", "seen"], lines
        ed.nvim.command("MiniMeAsk /say look at @../outside.txt")
        ed.wait_done(2)
        text = ed.turn_text()
        assert "ℹ not attached: @../outside.txt: " in text, text


# -- N12: a question waits like a permission, and leaves a line ---------------------------------


def test_a_question_is_said_in_the_statusline_and_leaves_a_line(tmp_path: Path) -> None:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path), "window": {"layout": "split"}}
    with editor_with(tmp_path, opts, timeout=30.0) as ed:
        ed.ask("/question")
        win = wait_for(lambda: ed.lua("return require('minime.ui.elicitation').win()"), 20)
        wait_for(
            lambda: (
                "question asked (:MiniMePermission)"
                in ed.lua("return require('minime').statusline()")
            ),
            10,
            message="the statusline",
        )
        title = "local _, w = require('minime.ui.turn').shown() return vim.wo[w].winbar"
        wait_for(lambda: "waiting for your answer" in ed.lua(title), 10, message="the title")
        wait_for(lambda: ed.lua("return require('minime.ui.elicitation').live()"), 10)
        ed.press(win, "2")
        ed.wait_done(1)
        assert (
            "ℹ question: Which greeting should the demo use from now on? — you answered: Bonjour"
            in ed.turn_lines()
        ), ed.turn_text()
        assert "question" not in ed.lua("return require('minime').statusline()")


# -- N4: the title names the agent of the session it shows ----------------------------------------


def test_the_title_names_the_agent_the_session_runs_on_after_a_new_setup(tmp_path: Path) -> None:
    import sys

    from nvim_harness import REPO

    cmd = [sys.executable, str(REPO / "tests" / "fake_mm.py"), "-acp", "-config"]
    config = agent_file(tmp_path)
    first = {
        "agent": {"cmd": [*cmd, config], "label": "first-agent"},
        "window": {"layout": "split"},
    }
    with editor_with(tmp_path, first, timeout=30.0) as ed:
        title = "local _, w = require('minime.ui.turn').shown() return vim.wo[w].winbar"
        ed.turn("/say one")
        assert "first-agent" in ed.lua(title)
        ed.lua(
            "require('minime').setup({ agent = { cmd = ..., label = 'second-agent' },"
            " window = { layout = 'split' } })",
            [*cmd, config],
        )
        ed.turn("/say two")  # the cwd's session goes on, on the first agent
        assert "first-agent" in ed.lua(title) and "second-agent" not in ed.lua(title)


# -- N17: the "permission asked" message goes once answered; :MiniMeLog at its end ----------------


def test_the_permission_asked_message_goes_once_it_is_answered(tmp_path: Path) -> None:
    with ui_editor(tmp_path) as (ed, screen):
        ed.ask("/bash ls")
        screen.showing("permission asked: bash: ls")
        ed.nvim.command("MiniMePermission")
        win = ed.permission_win()
        ed.press(win, "1")
        ed.wait_done(1)
        screen.wait(lambda s: "permission asked" not in s.rows()[-1])


def test_minime_log_opens_at_its_end(tmp_path: Path) -> None:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(tmp_path, opts, timeout=30.0) as ed:
        ed.turn("/say hi")
        ed.nvim.command("MiniMeLog")
        wait_for(lambda: ed.lua("return vim.b.minime") == "log", 10, message="the log")
        assert ed.lua("return vim.fn.line('.') == vim.fn.line('$')")


# -- N17: a reopened session keeps its title; a new session says it remembers nothing -------------


def test_a_reopened_session_keeps_the_title_it_was_listed_with(tmp_path: Path) -> None:
    import os

    from helpers.sessions_ui import WATCH_PROMPTS, stored_sessions

    config = agent_file(
        tmp_path, fake={"load_sessions": stored_sessions(os.path.realpath(tmp_path))}
    )
    opts = {"mm": FAKE_MM_BIN, "config": config, "window": {"layout": "split"}}
    with editor_with(tmp_path, opts, WATCH_PROMPTS, timeout=30.0) as ed:
        ed.nvim.command("MiniMeSessions")
        wait_for(lambda: ed.lua("return _G.picks"), 20, message="for vim.ui.select")
        ed.lua("_G.pick(1)")
        ed.wait_done()
        title = "local _, w = require('minime.ui.turn').shown() return vim.wo[w].winbar"
        wait_for(lambda: "Fix the parser" in ed.lua(title), 10, message="the session's title")
        ed.turn("and now?")
        assert "Fix the parser" in ed.lua(title)


def test_after_minime_stop_the_next_ask_says_the_new_session_remembers_nothing(
    tmp_path: Path,
) -> None:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(tmp_path, opts, timeout=30.0) as ed:
        ed.turn("/say one")
        assert "does not remember" not in ed.conversation_text()
        ed.nvim.command("MiniMeStop")
        ed.wait_note("minime: agent stopped")
        _, text = ed.turn("/say two")
        assert "ℹ a new session: the agent does not remember the turns above" in text
        _, text = ed.turn("/say three")  # the same session: nothing to say
        assert "does not remember" not in text


# -- an agent that dies: no stale stderr line, no interpreter named; the log says it -----------


def test_a_death_names_no_stale_stderr_line_nor_the_interpreter_and_the_log_has_it(
    tmp_path: Path,
) -> None:
    import sys

    from nvim_harness import REPO

    cmd = [sys.executable, str(REPO / "tests" / "fake_mm.py"), "-acp", "-config"]
    agent = {"cmd": [*cmd, agent_file(tmp_path)], "label": "fake-agent"}
    with editor_with(tmp_path, {"agent": agent}, timeout=30.0) as ed:
        ed.turn("/stderr [acp] session 1 client tools (request): client_open_buffers")
        done, _ = ed.turn("/exit 4")
        assert done["error"] == "fake-agent exited: exit status 4", done  # at main: "python …"
        ed.nvim.command("MiniMeLog")
        log = wait_for(
            lambda: (
                ed.lua("return vim.b.minime") == "log"
                and "\n".join(ed.lua("return vim.fn.getline(1, '$')"))
            ),
            10,
            message="the log",
        )
        assert "fake-agent exited: exit status 4" in log.split("# messages")[0], log


# -- markdown: the agent's words only, its thinking too -------------------------------------------

MARKS_ON = """
local key, row = ...
local t = require('minime.ui.turn').get(key)
local md = require('minime.ui.turn.markdown')
return #vim.api.nvim_buf_get_extmarks(t.buf, md.ns, { row, 0 }, { row, -1 }, {})
"""


def test_a_tool_line_is_never_markdown_and_thinking_is(tmp_path: Path) -> None:
    import nvim_harness

    key = str(tmp_path)
    with nvim_harness.start("require('minime').setup({})") as nvim:
        events = [
            {"kind": "begin", "prompt": "p", "cwd": key, "session_id": "s"},
            {"kind": "text", "text": "Edited the package.\n\n"},
            {"kind": "tool_call", "id": "t1", "title": "Read __init__.py", "status": "pending"},
            {"kind": "thinking", "text": "I think **this** is `code`\n"},
            {"kind": "done", "stop_reason": "end_turn"},
        ]
        nvim.exec_lua("require('minime.ui.turn').apply(...)", key, events)
        lines = nvim.exec_lua(
            "local t = require('minime.ui.turn').get(...)"
            " return vim.api.nvim_buf_get_lines(t.buf, 0, -1, false)",
            key,
        )
        header = next(i for i, x in enumerate(lines) if x.startswith("⚙ Read __init__.py"))
        thinking = next(i for i, x in enumerate(lines) if x.startswith("I think"))
        pending = (
            "local t = require('minime.ui.turn').get(...)"
            " local md = require('minime.ui.turn.markdown')"
            " return #vim.api.nvim_buf_get_extmarks(t.buf, md.ns_pending, 0, -1, {})"
        )
        wait_for(lambda: nvim.exec_lua(pending, key) == 0, 10, message="the markdown marks")
        wait_for(lambda: nvim.exec_lua(MARKS_ON, key, thinking) > 0, 10, message="thinking")
        assert nvim.exec_lua(MARKS_ON, key, header) == 0, "no bold init in __init__.py"


# -- N13: the layout switched mid-session, the title is drawn once --------------------------------


def test_a_float_opened_from_the_panel_draws_its_title_once(tmp_path: Path) -> None:
    with ui_editor(tmp_path, size=(100, 24)) as (ed, screen):
        ed.turn("/say hello there")
        panel = panel_win(ed)
        ed.lua("vim.api.nvim_set_current_win(...)", panel)
        config = ed.lua("return require('minime.config').options.config")
        ed.lua(
            "require('minime').setup({ mm = ..., config = select(2, ...),"
            " window = { layout = 'float' } })",
            FAKE_MM_BIN,
            config,
        )
        ed.turn("/say again")  # in the panel still: the new layout is for its next showing
        ed.nvim.command("MiniMeToggle")
        ed.nvim.command("MiniMeToggle")
        screen.showing("╭")
        ed.nvim.command("redraw!")
        screen.drain()
        rows = screen.rows()
        top = next(i for i, row in enumerate(rows) if "╭" in row)
        assert "> /say hello there" in rows[top + 1], screen.text()  # no winbar title under it


# -- N17: a tool's status in one place; a closed fold cut at 64 columns keeps it and its ▸ -------


def test_a_long_tool_fold_in_a_64_column_panel_keeps_its_state_and_its_sign(
    tmp_path: Path,
) -> None:
    config = agent_file(tmp_path, name="yolo.yaml", yolo=True)
    with ui_editor(tmp_path, size=(160, 30), config=config) as (ed, screen):
        ed.turn("/bash python -m pytest tests/test_something_long.py -k 'a and b' --maxfail 3")
        screen.showing("⚙ bash: python")
        ed.nvim.command("redraw!")
        screen.drain()
        row = next(r for r in screen.rows() if "⚙ bash: python" in r)
        # The status where an open tool's line has it (at main: first when folded, last when
        # not), and the fold's sign, both in view (at main: cut at the window's edge).
        assert row.rstrip().endswith("…  [execute] completed  ▸ 2 lines"), row


# -- N15: :bd in the panel hides the conversation, never erases it silently -----------------------


def test_bd_in_the_panel_hides_the_conversation_and_toggle_brings_it_back(tmp_path: Path) -> None:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path), "window": {"layout": "split"}}
    with editor_with(tmp_path, opts, timeout=30.0) as ed:
        ed.turn("/say hello there")
        ed.lua("vim.api.nvim_set_current_win(...)", panel_win(ed))
        ed.nvim.command("bd")
        ed.wait_note("the conversation is hidden, not erased")
        ed.nvim.command("MiniMeToggle")
        wait_for(lambda: "hello there" in ed.conversation_text(), 10, message="the text back")
        _, text = ed.turn("/say again")
        assert "hello there" in ed.conversation_text() and "again" in text


# -- N8: a vim.ui.select confirmation followed by a message: no Press ENTER -----------------------


def test_a_message_after_a_pick_is_no_hit_enter_prompt(tmp_path: Path) -> None:
    """What :MiniMeReject's "Delete …?" does: Neovim's own vim.ui.select (an inputlist), then a
    message of the plugin in its callback, at once (at main: Press ENTER)."""
    with ui_editor(tmp_path) as (ed, screen):
        ed.lua(
            "vim.schedule(function() vim.ui.select({ 'Delete made.txt', 'Keep it' },"
            " { prompt = 'Delete made.txt, which the agent created?' }, function(_, i)"
            " require('minime.ui.say').say('minime: deleted made.txt (' .. i .. ')') end) end)"
        )
        screen.showing("Delete made.txt, which the agent created?")
        ed.nvim.input("1<CR>")
        screen.showing("minime: deleted made.txt (1)")
        mode = ed.nvim.api.get_mode()
        if mode["blocking"]:
            ed.nvim.input("<CR>")  # leave the prompt, so that the editor can quit
        assert not mode["blocking"] and "Press ENTER" not in screen.text(), screen.text()


def test_a_closed_thinking_fold_reads_its_first_line_without_markers(tmp_path: Path) -> None:
    import nvim_harness

    key = str(tmp_path)
    with nvim_harness.start("require('minime').setup({})") as nvim:
        events = [
            {"kind": "begin", "prompt": "p", "cwd": key, "session_id": "s"},
            {
                "kind": "thinking",
                "text": "I think **this** is `code`, [a link](http://x)\nand more\n",
            },
            {"kind": "text", "text": "done\n"},
            {"kind": "done", "stop_reason": "end_turn"},
        ]
        nvim.exec_lua("require('minime.ui.turn').apply(...)", key, events)
        nvim.exec_lua("require('minime.ui.turn').open(...)", key)
        fold = nvim.exec_lua(
            "local t = require('minime.ui.turn').get(...)"
            " local lines = vim.api.nvim_buf_get_lines(t.buf, 0, -1, false)"
            " local lnum = vim.fn.match(lines, '^I think') + 1"
            " return vim.api.nvim_win_call(t.win, function()"
            " vim.cmd(lnum .. 'foldclose') return vim.fn.foldtextresult(lnum) end)",
            key,
        )
        assert "I think this is code, a link" in fold, fold  # at main: the raw markers
