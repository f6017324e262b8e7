"""The demo's tour (`:MiniMeAsk /tour`, demo/scripted_mm/tour.py), end to end as a newcomer takes
it: scripts/demo's Neovim (demo/init.lua, its mappings, the panel), the offline demo agent found
as a user without mm finds it, in a scratch copy of demo/project/ (a git repository). Each step's
text says what to press; the test presses exactly that and checks what the user then sees."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from helpers.sessions_ui import WATCH_PROMPTS
from nvim_harness import REPO, start, wait_for
from plugin_harness import Editor

# The demo's own init (the split panel: the tests' float pin is lifted), vim.ui.select scripted.
INIT = f"""
vim.o.columns, vim.o.lines = 160, 45
package.preload['minime.config'] = nil
_G.notes, _G.done = {{}}, {{}}
vim.api.nvim_create_autocmd('User', {{ pattern = 'MiniMeTurnDone', callback = function(ev)
  table.insert(_G.done, ev.data)
end }})
{WATCH_PROMPTS}
dofile([==[{REPO}/demo/init.lua]==])
local notify = vim.notify
vim.notify = function(msg, level, o)
  table.insert(_G.notes, {{ msg = msg, level = level }})
  return notify(msg, level, o)
end
"""


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(REPO / "demo" / "project", root)
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "demo"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


def send(ed: Editor, prompt: str) -> None:
    """Send ``prompt`` as the tour says (`i` in the panel, the text, Enter), back in the code
    once the turn's baseline is taken (a person reads the prompt for longer: git, off the loop)."""
    # The turn's baseline (a checkpoint of its thread, taken off the loop): counted over threads.
    snapshots = (
        "local n = 0 for _, c in pairs(require('minime.review.baseline').snapshots) do"
        " n = n + c end return n"
    )
    before = ed.lua(snapshots)
    code = ed.lua("return vim.api.nvim_get_current_win()")
    panel = wait_for(lambda: ed.lua("local _, w = require('minime.ui.turn').shown() return w"))
    ed.lua("vim.api.nvim_set_current_win(...)", panel)
    ed.nvim.input("i")
    wait_for(lambda: ed.lua("return vim.b.minime") == "input", 10, message="the input")
    ed.nvim.input(prompt + "<CR>")
    wait_for(lambda: ed.lua("return vim.b.minime") != "input", 10)
    ed.lua("vim.api.nvim_set_current_win(...)", code)
    wait_for(lambda: ed.lua(snapshots) > before, 20, message="for the baseline")


def allow(ed: Editor, permissions: int) -> None:
    """Answer each permission prompt as the tour says: Alt-p, then 1."""
    win = None
    for _ in range(permissions):
        win = ed.permission_win(other_than=win, timeout=30)
        wait_for(lambda: ed.lua("return require('minime.ui.permission').live()"), 10)
        ed.nvim.input("<M-p>")
        wait_for(lambda w=win: ed.lua("return vim.api.nvim_get_current_win()") == w, 10)
        ed.nvim.input("1")
        wait_for(lambda w=win: ed.lua("return require('minime.ui.permission').win()") != w, 10)


def step(ed: Editor, prompt: str, permissions: int = 0) -> str:
    """Send ``prompt``, answer its permission prompts; the turn's text once it ended."""
    count = len(ed.done()) + 1
    send(ed, prompt)
    allow(ed, permissions)
    ed.wait_done(count, timeout=60)
    return ed.turn_text()


def current(ed: Editor) -> str:
    return ed.lua("return require('minime.threads').current()")


def done_of(ed: Editor, thread: str) -> list[dict[str, Any]]:
    return [d for d in ed.done() if d.get("thread") == thread]


def overview(ed: Editor) -> list[str]:
    """The lines of `:MiniMeThreads`."""
    return ed.lua(
        "local b = require('minime.ui.threads').buf()"
        " return b and vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}"
    )


def on_row(ed: Editor, win: int, row: int) -> None:
    """The cursor in window ``win`` at ``row``."""
    ed.lua(
        "local win, row = ... vim.api.nvim_set_current_win(win)"
        " vim.api.nvim_win_set_cursor(0, { row, 0 })",
        win,
        row,
    )


def picks(ed: Editor) -> list[dict[str, Any]]:
    return ed.lua("return _G.picks")


def pick(ed: Editor, label: str, seen: int = 0) -> None:
    """Choose ``label`` in the last vim.ui.select shown, once more than ``seen`` were."""
    last = wait_for(lambda: len(picks(ed)) > seen and picks(ed), 20, message="a select")[-1]
    index = next(i for i, text in enumerate(last["labels"]) if label in text)
    ed.lua("_G.pick(...)", index + 1)


@contextmanager
def touring(tmp_path: Path) -> Iterator[tuple[Any, Editor, Path, int]]:
    """scripts/demo's Neovim in a scratch copy of demo/project/, greet.py open, after
    `:MiniMeAsk /tour` (step 1): Neovim, the editor, the project and the code's window."""
    root = project(tmp_path)
    env = {"MM_BIN": "", "PATH": "/usr/bin:/bin"}
    with start(INIT, env=env) as nvim:
        nvim.command(f"cd {root} | edit greet.py")
        ed = Editor(nvim, root, timeout=30.0)
        code = ed.lua("return vim.api.nvim_get_current_win()")
        nvim.command("MiniMeAsk /tour")
        ed.wait_done(1, timeout=60)
        yield nvim, ed, root, code


def test_the_tour_walks_through_every_feature(tmp_path: Path) -> None:
    with touring(tmp_path) as (nvim, ed, root, code):
        text = ed.turn_text()
        assert "Tour, step 1 of 11: the conversation." in text
        assert "press `i` in this panel" in text and "type `/tour` and press Enter" in text

        text = step(ed, "/tour", permissions=2)
        assert "Tour, step 2 of 11" in text and "press **Alt-p**" in text
        assert "client_open_buffers -> " in text and "greet.py" in text.split("client_open")[1]
        assert "bash -> ran: echo hello from the demo" in text

        text = step(ed, "/tour", permissions=3)
        assert "Tour, step 3 of 11: edits to review." in text
        assert "fs-write -> wrote notes.md" in text and "write -> wrote greet.py" in text
        assert (root / "CHANGES.txt").read_text() == "greet: a greeting argument\n"
        assert "greet() takes a greeting" in (root / "notes.md").read_text()
        # The buffer of greet.py, open and unmodified, follows the agent's write on disk.
        wait_for(
            lambda: "greeting" in "".join(ed.lua("return vim.fn.getbufline('greet.py', 1, '$')")),
            10,
            message="greet.py's buffer reloaded",
        )
        # `:MiniMeReview`, then `:MiniMeReject` on CHANGES.txt offers to delete it: kept here,
        # for the rewind to remove.
        nvim.command("MiniMeReview")
        items = wait_for(
            lambda: ed.lua(
                "return vim.tbl_map(function(i)"
                " return vim.fn.fnamemodify(vim.fn.bufname(i.bufnr), ':t') .. ' ' .. i.text end,"
                " vim.fn.getqflist())"
            ),
            20,
            message="the review's quickfix list",
        )
        files = sorted({i.split()[0] for i in items})
        assert files == ["CHANGES.txt", "greet.py", "notes.md"], items
        nvim.command("edit CHANGES.txt")
        nvim.command("MiniMeReject")
        pick(ed, "Keep it")
        assert picks(ed)[-1]["labels"] == ["Delete CHANGES.txt", "Keep it"]
        nvim.command("edit greet.py")
        nvim.command("MiniMeAccept!")
        edited = {name: (root / name).read_text() for name in ("notes.md", "greet.py")}

        # Step 4: `:MiniMeRewind 3` puts the files back as before step 3's ask, CHANGES.txt
        # removed after a confirmation; `:MiniMeRewind undo` brings them back.
        ed.lua("vim.api.nvim_set_current_win(...)", code)
        text = step(ed, "/tour")
        assert "Tour, step 4 of 11: going back." in text
        assert "`:MiniMeRewind 3` puts every file changed since ask 3 (step 3's) began" in text
        assert "`:MiniMeRewind undo` brings back" in text and "`e` opens it" in text
        seen = len(picks(ed))
        nvim.command("MiniMeRewind 3")
        pick(ed, "Rewind, removing them", seen)
        assert "CHANGES.txt" in picks(ed)[-1]["prompt"]
        note = ed.wait_note("rewound to before ask 3")
        assert note == "minime: rewound to before ask 3: 2 files restored, 1 removed", note
        for name in edited:
            assert (root / name).read_text() == (REPO / "demo" / "project" / name).read_text()
        assert not (root / "CHANGES.txt").exists()
        nvim.command("MiniMeRewind undo")
        ed.wait_note("rewind undone")
        assert {name: (root / name).read_text() for name in edited} == edited
        assert (root / "CHANGES.txt").read_text() == "greet: a greeting argument\n"
        # `e` on step 3's ask opens it to edit and resend (emptied and closed: nothing sent).
        asks = [i for i, x in enumerate(ed.conversation_lines(), 1) if x == "> /tour"]
        on_row(ed, ed.lua("local _, w = require('minime.ui.turn').shown() return w"), asks[2])
        nvim.input("e")
        wait_for(lambda: ed.lua("return vim.b.minime") == "input", 10, message="the input")
        win = ed.lua("return vim.api.nvim_get_current_win()")
        assert "edit ask 3" in "".join(part[0] for part in ed.float_config(win)["title"])
        assert ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["/tour"]
        ed.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, {})")
        nvim.input("<Esc><Esc>")
        wait_for(lambda: ed.lua("return vim.b.minime") != "input", 10)
        ed.lua("vim.api.nvim_set_current_win(...)", code)

        # Step 5: `:MiniMeFollow`, then `/tour 5` again: the follow window shows greet.py:9.
        ed.lua("vim.api.nvim_set_current_win(...)", code)
        text = step(ed, "/tour")
        assert "Tour, step 5 of 11: follow the agent." in text and "locate -> done" in text
        nvim.command("MiniMeFollow")
        step(ed, "/tour 5")
        shown = wait_for(
            lambda: ed.lua(
                "local f = require('minime.ui.follow') local w = f.win"
                " if not (w and vim.api.nvim_win_is_valid(w)) then return nil end"
                " return { vim.fn.fnamemodify(vim.api.nvim_buf_get_name("
                "vim.api.nvim_win_get_buf(w)), ':t'), vim.api.nvim_win_get_cursor(w)[1] }"
            ),
            20,
            message="the follow window",
        )
        assert shown == ["greet.py", 9]
        nvim.command("MiniMeFollow")

        text = step(ed, "/tour", permissions=1)
        assert "Tour, step 6 of 11" in text and "run -> exit status 0" in text
        nvim.command("MiniMeTerminal")
        wait_for(
            lambda: "greet.py" in "\n".join(ed.lua("return vim.fn.getline(1, '$')")),
            20,
            message="the terminal's output",
        )
        nvim.command("close")

        # Step 7: the question waits; Alt-p goes to it, 2 picks Bonjour.
        count = len(ed.done()) + 1
        ed.lua("vim.api.nvim_set_current_win(...)", code)
        nvim.command("MiniMeAsk /tour")
        question = wait_for(
            lambda: ed.lua("return require('minime.ui.elicitation').win()"), 30, message="question"
        )
        wait_for(lambda: ed.lua("return require('minime.ui.elicitation').live()"), 10)
        assert ed.lua("return vim.api.nvim_get_current_win()") == code, "it never takes focus"
        nvim.input("<M-p>")
        wait_for(lambda: ed.lua("return vim.api.nvim_get_current_win()") == question, 10)
        nvim.input("2")
        ed.wait_done(count, timeout=60)
        text = ed.turn_text()
        assert "Tour, step 7 of 11" in text and "ask_user -> Bonjour" in text

        # Step 8: `:MiniMeMode yolo`, then `/tour 2` asks nothing.
        text = step(ed, "/tour")
        assert "Tour, step 8 of 11: modes and options." in text
        nvim.command("MiniMeMode yolo")
        wait_for(lambda: "mode: Yolo" in ed.lua("return require('minime').statusline()"), 20)
        prompts = len(ed.prompts())
        text = step(ed, "/tour 2")
        assert "bash -> ran" in text and len(ed.prompts()) == prompts, "no permission asked"
        nvim.command("MiniMeConfig pace slow")
        wait_for(lambda: any("pace" in n["msg"].lower() for n in ed.lua("return _G.notes")), 20)

        # Step 9: the title, then `:MiniMeReset` and `:MiniMeSessions` reload this session.
        text = step(ed, "/tour 9")
        assert "Tour, step 9 of 11: sessions." in text
        assert "The minime tour" in ed.lua(
            "local _, w = require('minime.ui.turn').shown() return vim.wo[w].winbar"
        )
        nvim.command("MiniMeReset")
        nvim.command("MiniMeSessions")
        wait_for(lambda: picks(ed) and "a session" in picks(ed)[-1]["prompt"], 20)
        labels = picks(ed)[-1]["labels"]
        assert any("The minime tour" in x for x in labels), labels
        assert any("An earlier session (scripted)" in x for x in labels), labels
        pick(ed, "The minime tour")
        wait_for(lambda: "Tour, step 9 of 11" in ed.conversation_text(), 20, message="replayed")

        # Step 10: a second thread (`:MiniMeNew`) asked while this one works; both listed.
        first = current(ed)
        send(ed, "/tour 10")
        ed.wait_text("(working: a scripted wait of 60 s)")
        # Counted once step 10 runs: the reloaded session's end comes before its first text.
        ended = len(done_of(ed, first))
        assert "Tour, step 10 of 11: two threads at once." in ed.turn_text()
        assert "`:MiniMeCancel` ends my wait; then `/tour 11`." in ed.turn_text()
        nvim.command("MiniMeNew")
        second = wait_for(lambda: current(ed) != first and current(ed), 10, message="new thread")
        send(ed, "hello")
        ed.permission_win(timeout=30)
        nvim.command("MiniMeThreads")
        lines = wait_for(
            lambda: "waits: permission" in "".join(overview(ed)) and overview(ed),
            20,
            message="both threads listed",
        )
        assert len(lines) == 2, lines
        assert any("running" in x and "The minime tour" in x for x in lines), lines
        assert any("waits: permission" in x and "hello" in x for x in lines), lines
        status = ed.lua("return require('minime').statusline()")
        assert "1 running" in status and "1 waits" in status, status
        allow(ed, 2)
        wait_for(lambda: done_of(ed, second), 60, message="the second thread's turn")
        assert done_of(ed, second)[0]["stop_reason"] == "end_turn"
        assert len(done_of(ed, first)) == ended, "the first thread still works"
        # `<CR>` on the first thread's line shows it; `:MiniMeCancel` ends its wait.
        threads = ed.lua("return require('minime.threads').all()")
        row = next(i for i, t in enumerate(threads, 1) if t["id"] == first)
        listing = ed.lua("return vim.fn.bufwinid(require('minime.ui.threads').buf())")
        on_row(ed, listing, row)
        nvim.input("<CR>")
        wait_for(lambda: current(ed) == first, 10, message="the first thread current")
        wait_for(lambda: "Tour, step 10 of 11" in ed.turn_text(), 10, message="its conversation")
        ed.lua("vim.api.nvim_win_close(..., true)", listing)
        ed.lua("vim.api.nvim_set_current_win(...)", code)
        nvim.command("MiniMeCancel")
        wait_for(lambda: len(done_of(ed, first)) > ended, 20, message="the wait cancelled")
        assert done_of(ed, first)[ended]["stop_reason"] == "cancelled"
        assert "My wait is over" not in ed.turn_text()

        text = step(ed, "/tour 11")
        assert "Tour, step 11 of 11" in text and "That is the tour." in text
        seen = len(picks(ed))
        nvim.command("MiniMeLogin")
        pick(ed, "Demo login", seen)
        wait_for(lambda: any("logged in" in n["msg"] for n in ed.lua("return _G.notes")), 20)


def test_edit_and_resend_goes_on_with_the_tour(tmp_path: Path) -> None:
    """`e` on step 3's ask, sent again: the files go back, a new session opens with the asks
    and answers before it (the demo offers no fork), and the demo agent, reading them, shows
    step 3 again and numbers its asks as the editor does (step 4 names ask 3)."""
    with touring(tmp_path) as (nvim, ed, root, code):
        step(ed, "/tour", permissions=2)
        assert "Tour, step 3 of 11" in step(ed, "/tour", permissions=3)
        assert (root / "CHANGES.txt").exists()

        asks = [i for i, x in enumerate(ed.conversation_lines(), 1) if x == "> /tour"]
        on_row(ed, ed.lua("local _, w = require('minime.ui.turn').shown() return w"), asks[2])
        count = len(ed.done()) + 1
        nvim.input("e")
        wait_for(lambda: ed.lua("return vim.b.minime") == "input", 10, message="the input")
        nvim.input("<Esc><CR>")
        pick(ed, "Rewind, removing them")
        ed.lua("vim.api.nvim_set_current_win(...)", code)
        allow(ed, 3)
        ed.wait_done(count, timeout=60)
        how = "(2 files restored, 1 removed; new session with the history)"
        assert f"── rewound to before ask 3 {how} ──" in ed.conversation_lines()
        text = ed.turn_text()
        assert "echo: > /tour" in text, "the history the new session got, echoed"
        assert "Tour, step 3 of 11: edits to review." in text
        assert (root / "CHANGES.txt").read_text() == "greet: a greeting argument\n"

        text = step(ed, "/tour")
        assert "`:MiniMeRewind 3` puts every file changed since ask 3 (step 3's) began" in text
        line = "minime: rewound to before ask 3: 2 files restored, 1 removed"
        said = ed.notes().count(line)  # once already: the resend's own rewind
        nvim.command("MiniMeRewind 3")
        pick(ed, "Rewind, removing them", len(picks(ed)))
        wait_for(lambda: ed.notes().count(line) > said, 20, message="the rewind's line")
        assert not (root / "CHANGES.txt").exists()
