"""Your review, back to the agent (issue 31, :h minime-feedback): the hunks rejected with
:MiniMeReject and the comments kept with :MiniMeComment! go with the thread's next ask, once,
as a resource block after the prompt (a text block for an agent that takes none, as mm).

A real headless Neovim, its host, and the fake mm (whose writes wait for a permission answer,
given once the turn's baseline is recorded, as in tests/test_review.py); the embedded resource
with tests/agents/prompt_agent.py, which takes them and records what it is sent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from helpers.wire import prompts_by_session, trace
from nvim_harness import wait_for
from plugin_harness import Editor, agent_file, editor, editor_with
from test_review import AGENT, AGENT_TEXT, LINES, at, lines, load, review

PROMPT_AGENT = Path(__file__).with_name("agents") / "prompt_agent.py"


def last_prompt(directory: Path) -> str:
    return prompts_by_session(directory)[-1][1]


SNAPSHOTS = "return require('minime.review.baseline').snapshots[...] or 0"
CURRENT = "return require('minime.threads').current()"


def turn_with_writes(ed: Editor, prompt: str, writes: int) -> None:
    """Ask in the current thread; answer each write's permission once the turn's baseline is
    recorded (the baseline's snapshots are counted per thread)."""
    count = len(ed.done()) + 1
    key = ed.lua(CURRENT)
    before = int(ed.lua(SNAPSHOTS, key)) if key else 0
    ed.ask(prompt)
    key = ed.lua(CURRENT)
    wait_for(lambda: ed.lua(SNAPSHOTS, key) > before, 20, message="for the baseline")
    win = None
    for _ in range(writes):
        win = ed.permission_win(other_than=win)
        ed.press(win, "1")
    ed.wait_done(count)


def reviewed(ed: Editor, tmp_path: Path) -> None:
    """a.txt loaded; the agent rewrites it (two hunks: lines 3 and 6); the review shows them."""
    (tmp_path / "a.txt").write_text("\n".join(LINES) + "\n")
    buf = load(ed, tmp_path / "a.txt")
    turn_with_writes(ed, f"/ask-write a.txt {AGENT_TEXT}", writes=1)
    wait_for(lambda: lines(ed, buf) == AGENT, 10, message="for a.txt to be read again")
    assert [i[1] for i in review(ed)["items"]] == [3, 6]


def test_a_rejected_hunk_and_a_kept_comment_go_with_the_next_ask_once(tmp_path: Path) -> None:
    with editor(tmp_path) as ed:
        reviewed(ed, tmp_path)
        at(ed, 3)
        ed.nvim.command("MiniMeReject")
        at(ed, 6)
        ed.nvim.command("MiniMeComment! why X6?")
        ed.wait_note("comment kept: it goes with the next ask in this thread")
        ed.nvim.command("MiniMeComment!")
        ed.wait_note(":MiniMeComment! needs the comment's text")
        assert len(prompts_by_session(tmp_path)) == 1, "nothing asked at once"

        done, text = ed.turn("/say next")
        assert done["stop_reason"] == "end_turn"
        sent = last_prompt(tmp_path)
        assert sent.startswith("/say next\n\nThe user reviewed your changes in the editor.")
        assert (
            "Rejected in a.txt: the user put the old lines back (do not make this change again"
            " unless asked):\n```diff\n--- a/a.txt\n+++ b/a.txt\n@@ -3,1 +3,1 @@\n-l3\n+X3\n```"
        ) in sent
        assert "Comment on a hunk in a.txt: why X6?\n```diff\n" in sent and "-l6\n+X6" in sent
        assert "📎 review: 1 hunk rejected, 1 comment" in text

        ed.turn("/say again")
        assert last_prompt(tmp_path) == "/say again", "sent once"


def test_denied_files_and_feedback_off_send_nothing(tmp_path: Path) -> None:
    (tmp_path / "app.env").write_text("KEY=1\n")
    (tmp_path / "b.txt").write_text("b1\n")
    with editor(tmp_path) as ed:
        env, b = load(ed, tmp_path / "app.env"), load(ed, tmp_path / "b.txt")
        turn_with_writes(ed, "/ask-write app.env KEY=2\n/ask-write b.txt b2", writes=2)
        wait_for(
            lambda: lines(ed, env) == ["KEY=2"] and lines(ed, b) == ["b2"],
            10,
            message="for the files to be read again",
        )
        # A denied file is never listed, even to the user (Trust III: the one rule), so it
        # cannot be rejected: only b.txt is.
        assert [i[0] for i in review(ed)["items"]] == ["b.txt"]
        ed.nvim.command("MiniMeReject")
        assert (tmp_path / "b.txt").read_text() == "b1\n"
        ed.turn("/say next")
        sent = last_prompt(tmp_path)
        assert "Rejected in b.txt" in sent and "-b1\n+b2" in sent
        assert "app.env" not in sent and "KEY" not in sent

    off = tmp_path / "off"
    off.mkdir()
    with editor(off, review={"feedback": False}) as ed:
        reviewed(ed, off)
        at(ed, 3)
        ed.nvim.command("MiniMeReject")
        at(ed, 6)
        ed.nvim.command("MiniMeComment! kept?")
        ed.wait_note("comment not kept: review feedback is off")
        _, text = ed.turn("/say next")
        assert last_prompt(off) == "/say next"
        assert "📎" not in text


def test_comment_mid_turn_mid_start_up_and_from_another_threads_window(tmp_path: Path) -> None:
    """A comment kept while a turn runs goes with the next ask, not that turn; kept while the
    agent starts again, with the ask that waits for it; kept from a code window while another
    thread is current, with the next ask of the review's thread."""
    gate = tmp_path / "initialize.go"
    gate.write_text("")
    config = agent_file(tmp_path, fake={"hold_initialize": str(gate)})
    with editor(tmp_path, config=config) as ed:
        reviewed(ed, tmp_path)
        first = ed.lua("return require('minime.threads').current()")
        code = ed.lua("return vim.api.nvim_get_current_win()")

        ed.ask("/slow 30")
        ed.wait_text("slow 0")
        at(ed, 3)
        ed.nvim.command("MiniMeComment! mid-turn")
        ed.wait_done(2)
        assert "mid-turn" not in last_prompt(tmp_path)

        ed.nvim.command("MiniMeNew")
        ed.turn("/say other thread")
        assert "mid-turn" not in last_prompt(tmp_path), "the other thread's ask carries none"
        ed.lua("vim.api.nvim_set_current_win(...)", code)
        at(ed, 6)
        ed.nvim.command("MiniMeComment! from the code window")
        ed.wait_note("comment kept")
        ed.turn("/say still the other thread")  # the current thread: not the review's
        assert last_prompt(tmp_path) == "/say still the other thread"

        ed.nvim.command("MiniMeStop")
        ed.wait_note("stopped")
        gate.unlink()
        ed.lua("local text, id = ... require('minime').ask(text, nil, id)", "/say again", first)
        wait_for(
            lambda: sum(1 for m in trace(tmp_path, "in") if m.get("method") == "initialize") == 2,
            ed.timeout,
            message="the agent starting again",
        )
        at(ed, 6)
        ed.nvim.command("MiniMeComment! mid-start-up")
        gate.write_text("")
        ed.wait_done(5)
        sent = last_prompt(tmp_path)
        assert sent.startswith("/say again")
        for words in ("mid-turn", "from the code window", "mid-start-up"):
            assert f"Comment on a hunk in a.txt: {words}" in sent, words


def test_an_agent_that_takes_resources_gets_them_as_resource_blocks(tmp_path: Path) -> None:
    """The review and the diagnostics as ``resource`` blocks after the prompt (the ops as
    lua/minime/feedback/ sends them), and the new errors shown under the turn."""
    record = tmp_path / "prompts.jsonl"
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "x.py").write_text("x = (\n")
    cmd = [sys.executable, str(PROMPT_AGENT), str(record), "embeddedContext"]
    opts = {"agent": {"cmd": cmd, "label": "prompt-agent"}}
    with editor_with(cwd, opts, timeout=30.0) as ed:
        ed.turn("first")
        where = "local id = require('minime.threads').current() return { id, vim.fn.getcwd() }"
        thread, here = ed.lua(where)
        item = {"kind": "rejected", "path": "x.py", "diff": "@@ -1 +1 @@\n-x = 1\n+x = (\n"}
        ed.lua(
            "require('minime.host').notify('review_feedback', ...)",
            {"thread": thread, "cwd": here, "items": [item]},
        )
        diagnostic = {"line": 1, "col": 5, "severity": "error", "message": "Parse error: (x)"}
        payload = ed.lua("return require('minime.actions').host_payload(...)", thread)
        payload["files"] = [{"path": "x.py", "items": [diagnostic]}]
        ed.lua("require('minime.host').notify('diagnostics', ...)", payload)
        ed.wait_line("⚠ 1 new error in x.py")
        assert "  1:5 error: Parse error: (x)" in ed.conversation_lines()

        ed.nvim.command("MiniMeFix")
        ed.wait_done(2)
        blocks: list[dict[str, Any]] = json.loads(record.read_text().splitlines()[-1])
        assert [b["type"] for b in blocks] == ["text", "resource", "resource"]
        assert blocks[0]["text"].startswith("Fix the new errors and warnings")
        review_block, errors = blocks[1]["resource"], blocks[2]["resource"]
        assert review_block["uri"] == "minime://feedback/review"
        assert review_block["mimeType"] == "text/plain"
        assert "Rejected in x.py" in review_block["text"] and "+x = (" in review_block["text"]
        assert errors["uri"] == "minime://feedback/diagnostics"
        assert "x.py:1:5: error: Parse error: (x)" in errors["text"]
        text = ed.turn_text()
        assert "📎 review: 1 hunk rejected" in text and "📎 diagnostics: 1 error in x.py" in text
