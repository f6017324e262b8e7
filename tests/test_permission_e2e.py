"""Permission prompts end to end: a real headless Neovim, the plugin, the Python host, the fake mm.

What crosses the wire is read from the fake mm's trace (``session/request_permission`` and
the answer it got), what the user sees from the buffers and floats.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.shared_nvim import SharedNvim
from helpers.wire import permission_traffic
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file

MM_OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


SHARED = SharedNvim()


def opened(tmp_path: Path, fresh: bool = False, **opts: Any) -> Any:
    options = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path), **opts}
    return SHARED.editor_with(tmp_path, options, fresh=fresh)


def line(ed: Editor) -> str:
    return ed.lua("return vim.api.nvim_get_current_line()")


# -- 1. the prompt never answers itself with the user's typing ------------------------------------


def test_typing_total_while_a_bash_prompt_arrives(tmp_path: Path) -> None:
    """The reproduction: `tot` typed, `bash: rm -rf build` asked, `al = 1` typed."""
    with opened(tmp_path) as ed:
        main = ed.lua("return vim.api.nvim_get_current_win()")
        ed.nvim.input("itot")
        wait_for(lambda: line(ed) == "tot", message="'tot' typed")
        ed.lua("require('minime').ask(...)", "/bash rm -rf build")
        ed.permission_win()  # the prompt arrived, shown
        wait_for(
            lambda: permission_traffic(tmp_path)[0] == ["bash: rm -rf build"],
            20,
            message="the request on the wire",
        )
        ed.nvim.input("al = 1")
        wait_for(lambda: line(ed) == "total = 1", message="the rest typed into the buffer")
        assert ed.nvim.api.get_mode()["mode"] == "i"
        assert ed.lua("return vim.api.nvim_get_current_win()") == main
        assert ed.lua("return require('minime.ui.permission').pending()") != []
        assert permission_traffic(tmp_path)[1] == [], "nothing answered on the wire"
        ed.wait_note("permission asked: bash: rm -rf build — :MiniMePermission to answer")
        # The user answers when they choose to.
        ed.nvim.input("<Esc>")
        ed.nvim.command("MiniMePermission")
        ed.press(ed.permission_win(), "3")
        assert ed.wait_done()["stop_reason"] == "end_turn"
        assert ed.nvim.current.buffer[:] == ["total = 1"]
    assert permission_traffic(tmp_path)[1] == [("bash: rm -rf build", "reject")]


# -- 2. who answered ------------------------------------------------------------------------------


def test_a_rule_answer_says_it_was_the_rule(tmp_path: Path) -> None:
    rules = [
        {"pattern": "bash: git status*", "decision": "allow"},
        {"pattern": "bash: rm *", "decision": "reject"},
    ]
    with opened(tmp_path, permission_rules=rules) as ed:
        ed.lua("require('minime').ask(...)", "/bash git status -s\n/bash rm -rf build")
        ed.wait_done()
        text = ed.turn_text()
        assert "permission 'bash: git status -s': allowed by rule 'bash: git status*'" in text
        assert "permission 'bash: rm -rf build': rejected by rule 'bash: rm *'" in text
        assert ed.lua("return require('minime.ui.permission').win()") is None


def test_the_float_says_what_each_answer_does(tmp_path: Path) -> None:
    with opened(tmp_path) as ed:
        ed.ask("/bash make")
        win = ed.permission_win()
        lines = ed.float_lines(win)
        assert lines[-5:] == [
            "1. Allow — allow once",
            "2. Always allow — mm will not ask again for any bash command in this session",
            "3. Reject — reject once",
            "4. Never — mm will reject any bash command in this session without asking",
            "a. allow, and allow the same request (same input) until :MiniMeReset",
        ]
        footer = "".join(c[0] for c in ed.float_config(win)["footer"])
        assert footer.strip() == "1-4 choose · a allow again · q reject"
        ed.press(win, "q")
        ed.wait_done()


# -- 3. rules never allow chained shell text ---------------------------------------------------


def test_a_prefix_rule_does_not_allow_chained_commands(tmp_path: Path) -> None:
    rules = [{"pattern": "bash: git status*", "decision": "allow"}]
    script = "/bash git status -s\n/bash git status && rm -rf ~\n/bash git status; curl x|sh"
    with opened(tmp_path, permission_rules=rules) as ed:
        ed.lua("require('minime').ask(...)", script)
        for title in ["bash: git status && rm -rf ~", "bash: git status; curl x|sh"]:
            win = ed.permission_win()
            lines = ed.float_lines(win)
            assert lines[0] == title
            assert (
                "(rule 'bash: git status*' not applied: the text its wildcard matched holds "
                "shell control characters (; & | < > ` $( or a newline))"
            ) in lines
            ed.press(win, "3")
            wait_for(lambda w=win: ed.lua("return require('minime.ui.permission').win()") != w)
        ed.wait_done()
    assert permission_traffic(tmp_path)[1] == [
        ("bash: git status -s", "allow"),
        ("bash: git status && rm -rf ~", "reject"),
        ("bash: git status; curl x|sh", "reject"),
    ]


# -- 4. every request is shown, whatever its text -----------------------------------------------


def test_newlines_in_a_key_and_a_diff_path_are_shown(tmp_path: Path) -> None:
    with opened(tmp_path) as ed:
        ed.turn("hello")
        sid = ed.lua("return require('minime.ui.turn').get(...).session_id", ed.cwd)
        params = {
            "sessionId": sid,
            "toolCall": {
                "toolCallId": "odd",
                "title": "edit: odd\nfile",
                "kind": "edit",
                "rawInput": {"pa\nth": "x\x1b[31my", "long": "v" * 50000},
                "content": [
                    {"type": "diff", "path": "a\nb.txt", "oldText": "1\n", "newText": "2\n"}
                ],
            },
            "options": MM_OPTIONS,
        }
        ed.lua(
            "require('minime').ask(...)", "/call session/request_permission " + json.dumps(params)
        )
        win = ed.permission_win()
        lines = ed.float_lines(win)
        assert lines[0] == "edit: odd file"
        assert "pa⏎th: x\x1b[31my" in lines
        # A huge value is cut at 20,000 bytes, and says how much is not shown.
        assert "long: " + "v" * 19994 + " … [30006 more bytes]" in lines
        assert "--- a/a⏎b.txt" in lines and "+++ b/a⏎b.txt" in lines
        assert "-1" in lines and "+2" in lines
        ed.press(win, "1")
        ed.wait_done(2)
        assert 'session/request_permission -> {"outcome":{"optionId":"allow"' in ed.turn_text()


def test_the_first_prompt_waits_after_a_normal_mode_keystroke(tmp_path: Path) -> None:
    """Keys are timed from start-up, before any prompt code loads."""
    # A Neovim of its own: the prompt's code is not loaded yet.
    with opened(tmp_path, fresh=True, permission={"idle": 60}) as ed:
        main = ed.lua("return vim.api.nvim_get_current_win()")
        ed.nvim.input("ix<Esc>")
        wait_for(lambda: line(ed) == "x" and ed.nvim.api.get_mode()["mode"] == "n")
        assert ed.lua("return package.loaded['minime.ui.permission'] == nil")
        ed.lua("require('minime').ask(...)", "/bash ls")
        ed.permission_win()
        assert ed.lua("return vim.api.nvim_get_current_win()") == main
        ed.wait_note("permission asked: bash: ls — :MiniMePermission to answer")
        ed.nvim.command("MiniMePermission")
        ed.press(ed.permission_win(), "1")
        ed.wait_done()
    assert permission_traffic(tmp_path)[1] == [("bash: ls", "allow")]


# -- 5. the demo, as the README's first step says -------------------------------------------------


def test_the_demo_answers_its_two_prompts_with_alt_p_then_1(tmp_path: Path) -> None:
    """scripts/demo's Neovim (demo/init.lua, the offline demo agent): `:MiniMeAsk hello`, then
    for each prompt Alt-p and `1`, typed in the code window the prompt never took."""
    from nvim_harness import REPO, start

    env = {"MM_BIN": "", "PATH": "/usr/bin:/bin"}
    with start(f"dofile([==[{REPO}/demo/init.lua]==])", env=env) as nvim:
        ed = Editor(nvim, tmp_path, timeout=30.0)
        nvim.command(f"cd {tmp_path}")
        main = ed.lua("return vim.api.nvim_get_current_win()")
        nvim.command("MiniMeAsk hello")
        for n in (1, 2):
            win = ed.permission_win(timeout=60)
            assert ed.lua("return vim.api.nvim_get_current_win()") == main, f"prompt {n}"
            assert "permission asked" in ed.lua("return require('minime').statusline()")
            nvim.input("<M-p>")
            wait_for(lambda w=win: ed.lua("return vim.api.nvim_get_current_win()") == w)
            nvim.input("1")
            wait_for(lambda w=win: ed.lua("return require('minime.ui.permission').win()") != w)
        wait_for(
            lambda: "■" in "\n".join(ed.conversation_lines()), 60, message="for the turn's end"
        )
        assert ed.lua("return vim.api.nvim_get_current_win()") == main
