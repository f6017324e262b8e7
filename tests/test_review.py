""":MiniMeReview, :MiniMeAccept, :MiniMeReject in a real Neovim with the fake mm: what the agent
wrote — through a tool naming the file, or a shell command naming none — hunk by hunk, against
the turn's baseline (lua/minime/review/). The agent's writes wait for a permission answer, given
once the baseline is recorded, as a real agent's would for the user."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.review_ui import (
    at,
    git,
    git_repo,
    lines,
    load,
    quickfix,
    review,
    turn_with_writes,
    virtual_lines,
)
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, agent_file, editor, editor_with

LINES = ["l1", "l2", "l3", "l4", "l5", "l6"]
AGENT = ["l1", "l2", "X3", "l4", "l5", "X6"]
AGENT_TEXT = "\\n".join(AGENT)


def test_git_review_shows_a_shell_commands_writes_and_rejects_accepts_undoes(
    tmp_path: Path,
) -> None:
    git_repo(tmp_path)
    (tmp_path / "a.txt").write_text("\n".join(LINES) + "\n")
    git(tmp_path, "add", "a.txt")
    git(tmp_path, "commit", "-qm", "a")
    (tmp_path / "u.txt").write_text("u1\n")  # untracked, not ignored: part of the baseline
    with editor(tmp_path) as ed:
        turn_with_writes(ed, f"/shell-write a.txt {AGENT_TEXT}\n/shell-write u.txt u2", writes=2)
        assert (tmp_path / "u.txt").read_text() == "u2\n"
        # The user's own buffer-local ]h (mini.diff's, gitsigns') comes back after the review.
        mine = "<Cmd>let g:mine = 1<CR>"
        ed.lua(
            "local path, rhs = ... local b = vim.fn.bufadd(path) vim.fn.bufload(b)"
            " vim.keymap.set('n', ']h', rhs, { buffer = b })",
            str(tmp_path / "a.txt"),
            mine,
        )
        q = review(ed)
        assert q["title"].startswith("minime review: ") and q["title"].endswith("turn 1")
        assert q["items"] == [
            ["a.txt", 3, "+1 -1 X3"],
            ["a.txt", 6, "+1 -1 X6"],
            ["u.txt", 1, "+1 -1 u2"],
        ]
        buf = ed.lua("return vim.api.nvim_get_current_buf()")
        assert ed.lua("return vim.fn.line('.')") == 3, "the first hunk is opened"
        assert virtual_lines(ed, buf) == ["l3", "l6"], "the baseline's lines are shown"

        ed.nvim.command("MiniMeReject")
        assert lines(ed, buf) == ["l1", "l2", "l3", "l4", "l5", "X6"]
        assert (tmp_path / "a.txt").read_text().splitlines() == lines(ed, buf), "saved"
        assert [i[1] for i in quickfix(ed)["items"]] == [6, 1], "the hunk left the review"
        ed.nvim.command("normal! u")
        assert lines(ed, buf) == AGENT, "one u undoes the reject"

        at(ed, 1)
        ed.nvim.input("]h")
        wait_for(lambda: ed.lua("return vim.fn.line('.')") == 6, 10, message="for ]h")
        ed.nvim.command("MiniMeAccept")
        assert virtual_lines(ed, buf) == []
        q = review(ed)
        assert q["items"] == [["a.txt", 3, "+1 -1 X3"], ["u.txt", 1, "+1 -1 u2"]], (
            "an accepted hunk is not reviewed again; the undone reject is"
        )
        ed.nvim.command("MiniMeAccept!")
        assert ed.lua("return vim.fn.maparg(']h', 'n')") == mine
        assert [i[0] for i in quickfix(ed)["items"]] == ["u.txt"]
        ed.nvim.command("cfirst")
        ed.nvim.command("MiniMeReject")
        assert (tmp_path / "u.txt").read_text() == "u1\n"
        ed.nvim.command("MiniMeReview")
        ed.wait_note("nothing to review")


def test_review_outside_git_keeps_the_users_edits_and_refuses_a_hunk_they_changed(
    tmp_path: Path,
) -> None:
    a, b, c = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    a.write_text("\n".join(LINES) + "\n")
    b.write_text("b\n")
    c.write_text("c\n")  # not loaded: recorded when the agent's tool call names it
    with editor(tmp_path) as ed:
        abuf, bbuf = load(ed, a), load(ed, b)
        # Unsaved at the turn's start: the user's, never shown as the agent's.
        ed.lua("vim.api.nvim_buf_set_lines(..., 0, -1, false, { 'mine b' })", bbuf)
        turn_with_writes(ed, f"/ask-write a.txt {AGENT_TEXT}\n/ask-write c.txt new c", writes=2)
        wait_for(lambda: lines(ed, abuf) == AGENT, 10, message="for a.txt to be reloaded")
        q = review(ed)
        assert q["items"] == [
            ["a.txt", 3, "+1 -1 X3"],
            ["a.txt", 6, "+1 -1 X6"],
            ["c.txt", 1, "+1 -1 new c"],
        ]

        # The user's edit and the reject in one go (as a mapping of theirs would): one `u` still
        # takes back the reject alone.
        at(ed, 3)
        ed.lua(
            "vim.api.nvim_buf_set_lines(..., 0, 1, false, { 'mine1' }) vim.cmd('MiniMeReject')",
            abuf,
        )
        assert lines(ed, abuf) == ["mine1", "l2", "l3", "l4", "l5", "X6"]
        assert a.read_text().splitlines() == AGENT, "not saved over the user's unsaved edit"
        ed.wait_note("not saved: it holds other unsaved edits")
        ed.nvim.command("normal! u")
        assert lines(ed, abuf) == ["mine1", *AGENT[1:]], "one u undoes the reject, only it"

        ed.lua("vim.api.nvim_buf_set_lines(..., 5, 6, false, { 'X6 and mine' })", abuf)
        at(ed, 6)
        ed.nvim.command("MiniMeReject")
        ed.wait_note("changed after the agent wrote it: not reverted", 5)
        assert lines(ed, abuf)[5] == "X6 and mine"
        assert lines(ed, bbuf) == ["mine b"]

        # A comment on that hunk goes to the agent as the next ask, naming the file and lines.
        ed.nvim.command("MiniMeComment why X6?")
        ed.wait_done(2)
        prompts = [
            json.dumps(m["msg"]["params"]["prompt"])
            for m in map(json.loads, (tmp_path / "trace.jsonl").read_text().splitlines())
            if m["dir"] == "in" and m["msg"].get("method") == "session/prompt"
        ]
        assert "why X6?" in prompts[-1] and "a.txt" in prompts[-1] and "X6 and mine" in prompts[-1]


# vim.ui.select answers with the item _G.pick (every prompt kept in _G.selects).
PICKER = """
_G.selects, _G.pick = {}, 2
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.selects, opts.prompt)
  on_choice(items[_G.pick], _G.pick)
end
"""


def test_a_deleted_file_is_restored_and_a_created_one_removed_only_once_confirmed(
    tmp_path: Path,
) -> None:
    git_repo(tmp_path)
    gone, made = tmp_path / "gone.txt", tmp_path / "made.txt"
    gone.write_text("keep me\n")
    git(tmp_path, "add", "gone.txt", ".gitignore")
    git(tmp_path, "commit", "-qm", "gone")
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(tmp_path, opts, PICKER, timeout=30.0) as ed:
        turn_with_writes(ed, "/shell-write gone.txt -\n/shell-write made.txt hello", writes=2)
        assert not gone.exists() and made.exists()
        q = review(ed)
        assert q["items"] == [
            ["gone.txt", 1, "deleted by the agent (-1 lines; :MiniMeReject here restores it)"],
            ["made.txt", 1, "created by the agent (+1 lines)"],
        ]
        ed.nvim.command("MiniMeReject")  # in gone.txt, opened first
        assert gone.read_text() == "keep me\n"
        assert [i[0] for i in quickfix(ed)["items"]] == ["made.txt"]

        ed.nvim.command("cfirst")
        ed.nvim.command("MiniMeReject")  # "Keep it"
        assert ed.lua("return _G.selects") == ["Delete made.txt, which the agent created?"]
        assert made.exists(), "never removed without the confirming choice"
        ed.lua("_G.pick = 1")
        ed.nvim.command("MiniMeReject")
        assert not made.exists()
        ed.nvim.command("MiniMeReview")
        ed.wait_note("nothing to review")


def test_review_before_any_turn_and_while_the_turn_still_runs(tmp_path: Path) -> None:
    """Before a turn there is nothing to review; mid-turn (a write waiting for its permission)
    :MiniMeReview shows what is written so far, and the turn goes on."""
    git_repo(tmp_path)
    (tmp_path / "a.txt").write_text("a\n")
    git(tmp_path, "add", "a.txt", ".gitignore")
    git(tmp_path, "commit", "-qm", "a")
    with editor(tmp_path) as ed:
        ed.nvim.command("MiniMeReview")
        ed.wait_note("nothing to review: no turn in")
        ed.nvim.command("MiniMeAccept")
        ed.wait_note("minime: nothing to review")
        ed.ask("/shell-write a.txt first\n/shell-write a.txt second")
        win = ed.permission_win()
        ed.press(win, "1")
        ed.permission_win(other_than=win)  # the second write waits: the turn runs
        assert (tmp_path / "a.txt").read_text() == "first\n"
        q = review(ed)
        assert q["items"] == [["a.txt", 1, "+1 -1 first"]]
        assert ed.permission_open(), "the permission prompt is still there"
        ed.answer_permission("1")
        assert ed.wait_done(1)["stop_reason"] == "end_turn"
        buf = ed.lua("return vim.fn.bufnr(...)", str(tmp_path / "a.txt"))
        wait_for(lambda: lines(ed, buf) == ["second"], 10, message="for the buffer to follow")
        assert review(ed)["items"] == [["a.txt", 1, "+1 -1 second"]]


def test_outside_git_a_file_named_only_by_a_calls_locations_is_reviewed(tmp_path: Path) -> None:
    """An agent's own edit tool that names its file only in ``locations`` (no diff, a
    permission request naming nothing, the write on disk): the baseline took the file when the
    tool call named it, so the review shows and rejects the hunk."""
    c = tmp_path / "c.txt"
    c.write_text("\n".join(LINES) + "\n")
    (tmp_path / "d.txt").write_text("d1\nd2\n")  # long before its turn: its text then is its own
    with editor(tmp_path) as ed:
        turn_with_writes(ed, f"/located-write c.txt {AGENT_TEXT}", writes=1)
        assert c.read_text().splitlines() == AGENT
        q = review(ed)
        assert q["items"] == [["c.txt", 3, "+1 -1 X3"], ["c.txt", 6, "+1 -1 X6"]]
        ed.nvim.command("MiniMeReject!")
        assert c.read_text().splitlines() == LINES

        # A call that only reads (no permission asked): its tool_call's location alone names
        # the file, before the agent's next step writes it (here, the test as that step).
        count = len(ed.done()) + 1
        ed.ask("/locate-wait go d.txt:2")
        ed.wait_line("⚙ Read d.txt:2")
        (tmp_path / "d.txt").write_text("d1\nD2\n")
        (tmp_path / "go").write_text("")
        ed.wait_done(count)
        assert review(ed)["items"] == [["d.txt", 2, "+1 -1 D2"]]


def test_a_day_of_turns_keeps_one_copy_of_a_loaded_buffer_and_both_reviews_still_read_right(
    tmp_path: Path,
) -> None:
    """Each turn's start records every loaded buffer (the baseline, and the turn's checkpoint:
    every turn is kept for a rewind); a text unchanged since the turn before is that turn's
    table, not a copy: `all` reads the first turn's, the last turn's review its own. Before
    sharing, every turn kept its copies: 20 buffers of 1,000 lines grew Neovim by ~160 KiB a
    turn (bench/conversation_memory.py buffers)."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("\n".join(LINES) + "\n")
    b.write_text("b\n")
    copies = (
        "local turns = require('minime.review.baseline')"
        ".sessions[require('minime.threads').key(...)].turns"
        " local seen, n = {}, 0 for _, turn in ipairs(turns) do for _, text in pairs(turn.texts)"
        " do if not seen[text] then seen[text], n = true, n + 1 end end end"
        " return { copies = n, turns = #turns }"
    )
    with editor(tmp_path) as ed:
        abuf = load(ed, a)
        load(ed, b)
        turn_with_writes(ed, f"/ask-write a.txt {AGENT_TEXT}", writes=1)
        wait_for(lambda: lines(ed, abuf) == AGENT, 10, message="for a.txt to be reloaded")
        for i in range(4):
            ed.turn(f"turn {i}")
        # a before and after the agent's write, b: not one per turn (10).
        assert ed.lua(copies, ed.cwd) == {"copies": 3, "turns": 5}
        last = ["l1", "l2", "X3", "l4", "l5", "Y6"]
        turn_with_writes(ed, "/ask-write a.txt " + "\\n".join(last), writes=1)
        wait_for(lambda: lines(ed, abuf) == last, 10, message="for a.txt to be reloaded")
        assert ed.lua(copies, ed.cwd) == {"copies": 3, "turns": 6}
        last_turn = review(ed)
        assert last_turn["items"] == [["a.txt", 6, "+1 -1 Y6"]], "against the last turn's start"
        assert last_turn["title"].endswith(", turn 6")
        whole = review(ed, "all")
        assert whole["items"] == [
            ["a.txt", 3, "+1 -1 X3"],
            ["a.txt", 6, "+1 -1 Y6"],
        ], "against the first turn's start"
        assert whole["title"].endswith(", turns 1-6")
