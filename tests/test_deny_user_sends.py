"""The deny list holds for what the user sends too: one rule (lua/minime/editor/deny.lua) for
every way a file's text leaves the editor. A real Neovim, its host, and an agent that records
what crossed the wire: the fake mm (its trace) for asks, tests/adversary.py for a permission
request whose diff names a denied file.

Before: `:1MiniMeAsk` and `:MiniMeComment` from a `.env` buffer sent its secret while `@.env`
was refused, and a diff without oldText made the permission float read `.env` to compare.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from nvim_harness import wait_for
from plugin_harness import editor, editor_with

ADVERSARY = Path(__file__).with_name("adversary.py")
SECRET = "API_KEY=sk-DENIED-SECRET"
INPUT_OPEN = "input"
INPUT_OPEN_LUA = (
    "for _, w in ipairs(vim.api.nvim_list_wins()) do"
    " if vim.b[vim.api.nvim_win_get_buf(w)].minime == 'input' then return 'input' end end"
    " return 'none'"
)


def wire(tmp_path: Path) -> str:
    trace = tmp_path / "trace.jsonl"
    return trace.read_text() if trace.exists() else ""


def drafts(ed: object, cwd: str) -> str | None:
    return ed.lua("return require('minime.ui.drafts').get(...)", cwd)  # type: ignore[attr-defined]


def test_a_range_ask_from_a_denied_buffer_is_refused_and_kept_as_the_draft(
    tmp_path: Path,
) -> None:
    (tmp_path / ".env").write_text(f"{SECRET}\nOTHER=1\n")
    (tmp_path / "notes.txt").symlink_to(".env")  # as secret as its target
    (tmp_path / "fine.py").write_text("x = 1\n")
    with editor(tmp_path) as ed:
        ed.turn("hello")  # the agent runs: nothing below is held back for lack of it
        for name in (".env", "notes.txt"):
            ed.nvim.command(f"edit {name}")
            ed.nvim.command("1MiniMeAsk what is this key?")
            note = ed.wait_note(f"not sent: {name} is on the deny list")
            assert "your text is kept as the draft" in note
            assert drafts(ed, ed.cwd) == "what is this key?"
            ed.lua("require('minime.ui.drafts').clear(...)", ed.cwd)
            ed.nvim.command("bwipeout")  # the link would open the target's buffer
        # A range without text is refused before the input float opens (nothing to type).
        ed.nvim.command("edit .env")
        ed.nvim.command("1,2MiniMeAsk")
        wait_for(lambda: len([n for n in ed.notes() if "not sent: .env" in n]) == 2, 10)
        assert INPUT_OPEN not in [ed.lua(INPUT_OPEN_LUA)], "the input float opened"
        assert drafts(ed, ed.cwd) is None
        # A range of an allowed file still goes, with its lines.
        ed.nvim.command("edit fine.py")
        count = len(ed.done()) + 1
        ed.nvim.command("1MiniMeAsk explain")
        ed.wait_done(count)
    assert "sk-DENIED-SECRET" not in wire(tmp_path)
    assert "fine.py, lines 1-1" in wire(tmp_path) and "x = 1" in wire(tmp_path)


def test_a_comment_on_a_hunk_of_a_denied_file_sends_nothing_of_it(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"{SECRET}\n")
    with editor(tmp_path) as ed:
        ed.nvim.command("edit .env")  # loaded: the turn's baseline holds it
        ed.turn("/disk-write .env API_KEY=sk-DENIED-CHANGED")
        wait_for(lambda: ed.nvim.current.buffer[:] == ["API_KEY=sk-DENIED-CHANGED"], 10)
        ed.nvim.command("MiniMeReview")
        ed.nvim.command("MiniMeComment why this key?")
        # Refused by the deny list (or, where the review leaves a denied file out, no hunk).
        ways = ("not sent: .env", "hunk", "nothing to review")
        note = wait_for(lambda: [n for n in ed.notes() if any(w in n for w in ways)], 10)
        said = ed.notes()
        prompts = [
            json.dumps(m["msg"]["params"]["prompt"])
            for m in map(json.loads, wire(tmp_path).splitlines())
            if m["dir"] == "in" and m["msg"].get("method") == "session/prompt"
        ]
    assert note and len(prompts) == 1, (said, prompts)  # only the first ask went
    if any("not sent: .env" in n for n in said):
        assert drafts_kept(said)


def drafts_kept(notes: list[str]) -> bool:
    return any("your text is kept as the draft" in n for n in notes)


def test_a_diff_without_old_text_never_reads_a_denied_file(tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / ".env").write_text(f"{SECRET}\n")
    (cwd / "app.py").write_text("old app\n")
    diffs = [
        {"type": "diff", "path": str((cwd / name).resolve()), "newText": "NEW\n"}
        for name in (".env", "app.py")
    ]
    call = {"toolCallId": "w1", "title": "Write", "kind": "edit", "content": diffs}
    ask = {
        "method": "session/request_permission",
        "params": {
            "sessionId": "@SID@",
            "toolCall": call,
            "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}],
        },
    }
    shown = {"sessionUpdate": "tool_call", "status": "pending", **call}
    note = {"jsonrpc": "2.0", "method": "session/update"}
    steps = [
        {"raw": json.dumps({**note, "params": {"sessionId": "@SID@", "update": shown}})},
        {"ask": ask},
    ]
    script = tmp_path / "adversary.json"
    script.write_text(json.dumps({}))
    agent = {"cmd": [sys.executable, str(ADVERSARY), str(script)]}
    with editor_with(cwd, {"agent": agent}, timeout=30.0) as ed:
        ed.lua("require('minime').ask(...)", json.dumps(steps))
        text = ed.permission_text()
        conversation = ed.conversation_text()
        ed.answer_permission("1")
        ed.wait_done()
    for where in (text, conversation):
        assert "sk-DENIED-SECRET" not in where
        assert "(the agent sent no old text; the file is on the deny list: not read)" in where
        # An allowed file is still compared with its text as it is now.
        assert "-old app" in where and "(the agent sent no old text: compared with" in where
