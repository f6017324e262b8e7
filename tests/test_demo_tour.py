"""The demo's tour (`:MiniMeAsk /tour`, demo/scripted_mm/tour.py), end to end as a newcomer takes
it: scripts/demo's Neovim (demo/init.lua, its mappings, the panel), the offline demo agent found
as a user without mm finds it, in a scratch copy of demo/project/ (a git repository). Each step's
text says what to press; the test presses exactly that and checks what the user then sees."""

from __future__ import annotations

import shutil
import subprocess
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


def step(ed: Editor, prompt: str, permissions: int = 0) -> str:
    """Send ``prompt`` as the tour says (`i` in the panel, the text, Enter); answer each
    permission prompt as the step says: Alt-p, then 1. The turn's text once it ended."""
    count = len(ed.done()) + 1
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
    # A person reads the prompt for longer than the turn's baseline takes (git, off the loop).
    wait_for(lambda: ed.lua(snapshots) > before, 20, message="for the baseline")
    win = None
    for _ in range(permissions):
        win = ed.permission_win(other_than=win, timeout=30)
        wait_for(lambda: ed.lua("return require('minime.ui.permission').live()"), 10)
        ed.nvim.input("<M-p>")
        wait_for(lambda w=win: ed.lua("return vim.api.nvim_get_current_win()") == w, 10)
        ed.nvim.input("1")
        wait_for(lambda w=win: ed.lua("return require('minime.ui.permission').win()") != w, 10)
    ed.wait_done(count, timeout=60)
    return ed.turn_text()


def picks(ed: Editor) -> list[dict[str, Any]]:
    return ed.lua("return _G.picks")


def pick(ed: Editor, label: str, seen: int = 0) -> None:
    """Choose ``label`` in the last vim.ui.select shown, once more than ``seen`` were."""
    last = wait_for(lambda: len(picks(ed)) > seen and picks(ed), 20, message="a select")[-1]
    index = next(i for i, text in enumerate(last["labels"]) if label in text)
    ed.lua("_G.pick(...)", index + 1)


def test_the_tour_walks_through_every_feature(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = {"MM_BIN": "", "PATH": "/usr/bin:/bin"}
    with start(INIT, env=env) as nvim:
        nvim.command(f"cd {root} | edit greet.py")
        ed = Editor(nvim, root, timeout=30.0)
        code = ed.lua("return vim.api.nvim_get_current_win()")

        nvim.command("MiniMeAsk /tour")
        ed.wait_done(1, timeout=60)
        text = ed.turn_text()
        assert "Tour, step 1 of 9: the conversation." in text
        assert "press `i` in this panel" in text and "type `/tour` and press Enter" in text

        text = step(ed, "/tour", permissions=2)
        assert "Tour, step 2 of 9" in text and "press **Alt-p**" in text
        assert "client_open_buffers -> " in text and "greet.py" in text.split("client_open")[1]
        assert "bash -> ran: echo hello from the demo" in text

        text = step(ed, "/tour", permissions=3)
        assert "Tour, step 3 of 9: edits to review." in text
        assert "fs-write -> wrote notes.md" in text and "write -> wrote greet.py" in text
        assert (root / "CHANGES.txt").read_text() == "greet: a greeting argument\n"
        assert "greet() takes a greeting" in (root / "notes.md").read_text()
        # The buffer of greet.py, open and unmodified, follows the agent's write on disk.
        wait_for(
            lambda: "greeting" in "".join(ed.lua("return vim.fn.getbufline('greet.py', 1, '$')")),
            10,
            message="greet.py's buffer reloaded",
        )
        # `:MiniMeReview`, then `:MiniMeReject` on CHANGES.txt offers to delete it.
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
        pick(ed, "Delete")
        wait_for(lambda: not (root / "CHANGES.txt").exists(), 10, message="CHANGES.txt deleted")
        nvim.command("edit greet.py")
        nvim.command("MiniMeAccept!")

        # Step 4: `:MiniMeFollow`, then `/tour 4` again: the follow window shows greet.py:9.
        ed.lua("vim.api.nvim_set_current_win(...)", code)
        text = step(ed, "/tour")
        assert "Tour, step 4 of 9: follow the agent." in text and "locate -> done" in text
        nvim.command("MiniMeFollow")
        step(ed, "/tour 4")
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
        assert "Tour, step 5 of 9" in text and "run -> exit status 0" in text
        nvim.command("MiniMeTerminal")
        wait_for(
            lambda: "greet.py" in "\n".join(ed.lua("return vim.fn.getline(1, '$')")),
            20,
            message="the terminal's output",
        )
        nvim.command("close")

        # Step 6: the question waits; Alt-p goes to it, 2 picks Bonjour.
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
        assert "Tour, step 6 of 9" in text and "ask_user -> Bonjour" in text

        # Step 7: `:MiniMeMode yolo`, then `/tour 2` asks nothing.
        text = step(ed, "/tour")
        assert "Tour, step 7 of 9: modes and options." in text
        nvim.command("MiniMeMode yolo")
        wait_for(lambda: "mode: Yolo" in ed.lua("return require('minime').statusline()"), 20)
        prompts = len(ed.prompts())
        text = step(ed, "/tour 2")
        assert "bash -> ran" in text and len(ed.prompts()) == prompts, "no permission asked"
        nvim.command("MiniMeConfig pace slow")
        wait_for(lambda: any("pace" in n["msg"].lower() for n in ed.lua("return _G.notes")), 20)

        # Step 8: the title, then `:MiniMeReset` and `:MiniMeSessions` reload this session.
        text = step(ed, "/tour 8")
        assert "Tour, step 8 of 9: sessions." in text
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
        wait_for(lambda: "Tour, step 8 of 9" in ed.conversation_text(), 20, message="replayed")

        text = step(ed, "/tour 9")
        assert "Tour, step 9 of 9" in text and "That is the tour." in text
        seen = len(picks(ed))
        nvim.command("MiniMeLogin")
        pick(ed, "Demo login", seen)
        wait_for(lambda: any("logged in" in n["msg"] for n in ed.lua("return _G.notes")), 20)
