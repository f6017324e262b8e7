"""Edit and resend with a real agent: claude-agent-acp 0.101 (tests/test_interop_claude.py's
set-up: its scripted model on loopback, its wire tapped). It writes files with its own Write
tool; `e` on its second ask puts the files back (a file it created is removed) and resends:
claude advertises ``sessionCapabilities.fork``, so the session is forked after the last message
of the first ask (``session/fork`` with ``_meta.jetbrains.air.fork``), and the next request to
the model holds the first ask and the edited one, never the dropped one."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agents.anthropic_model import Reply, last_tool, user_text
from helpers.rewind_ui import PICKER, ended
from nvim_harness import wait_for
from test_interop_claude import CWD, claude_editor

WRITES = {"write alpha": "a.txt", "write beta": "b.txt", "write gamma": "c.txt"}


def script(messages: list[dict[str, Any]]) -> Reply:
    """ "write <word>": its Write tool writes <file> with "<word>"; then "Done <word>."."""
    done, prompt = last_tool(messages), user_text(messages)
    for words, name in WRITES.items():
        if words in prompt:
            word = words.split()[1]
            if done is None:
                path = os.path.join(CWD[0], name)
                return Reply(
                    text="Writing.", tool="Write", input={"file_path": path, "content": word + "\n"}
                )
            return Reply(text=f"Done {word}.")
    return Reply(text="Hello.")


def on_ask(ed: Any, text: str) -> None:
    """The cursor on the conversation's line ``> text``, in its window."""
    row = ed.conversation_lines().index("> " + text) + 1
    win = ed.lua("return require('minime.ui.turn').get(vim.fn.getcwd()).win")
    ed.lua("local w = ... vim.api.nvim_set_current_win(w)", win)
    ed.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", row)


def test_claude_edit_and_resend_forks_and_puts_the_files_back(tmp_path: Path) -> None:
    with claude_editor(tmp_path, model_script=script, lua_before=PICKER) as claude:
        ed = claude.ed
        for n, words in enumerate(["write alpha", "write beta"], 1):
            ed.ask(words)
            ed.answer_permission("1")
            ed.wait_done(n)
        cwd = Path(ed.cwd)
        assert (cwd / "a.txt").read_text() == "alpha\n"
        assert (cwd / "b.txt").read_text() == "beta\n"
        wait_for(lambda: ended(ed), 20, message="for the second ask's end to be recorded")
        on_ask(ed, "write beta")
        ed.nvim.input("e")
        wait_for(lambda: ed.lua("return vim.b.minime") == "input", 10, message="for the input")
        ed.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'write gamma' })")
        ed.nvim.input("<Esc><CR>")
        ed.answer_permission("1")
        ed.wait_done(3)
        assert not (cwd / "b.txt").exists(), "the file the dropped ask created is gone"
        assert (cwd / "a.txt").read_text() == "alpha\n"
        assert (cwd / "c.txt").read_text() == "gamma\n"
        line = "── rewound to before ask 2 (0 files restored, 1 removed; the agent's session"
        assert line + " forked before it) ──" in ed.conversation_lines()
        (fork,) = claude.wire("in", "session/fork")
        point = fork["params"]["_meta"]["jetbrains"]["air"]["fork"]
        assert point["version"] == 1 and point["messageId"]
        # The model's next request: the first ask and the edited one, not the dropped one.
        last = json.dumps(claude.model.turns()[-1]["messages"])
        assert "write alpha" in last and "write gamma" in last
        assert "write beta" not in last
