"""Questions from the agent (elicitation/create, form mode), end to end: a real Neovim, its
Python host and tests/agents/fs_agent.py, which sends the request and writes the editor's
answer into its reply (``FS {...}``). Each test reads the float, what the agent received, or
that nothing was shown."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nvim_harness import wait_for
from plugin_harness import Editor, editor_with

AGENT = Path(__file__).with_name("agents") / "fs_agent.py"

# vim.ui.select / vim.ui.input answered from a script: each call takes the next answer (a
# label for select, text for input; false dismisses); what each step showed is kept.
SCRIPTED_UI = """
_G.ui_answers, _G.ui_steps = {}, {}
vim.ui.select = function(items, opts, on_choice)
  local labels = vim.tbl_map(opts.format_item or tostring, items)
  table.insert(_G.ui_steps, opts.prompt .. " " .. table.concat(labels, "|"))
  local want = table.remove(_G.ui_answers, 1)
  for i, l in ipairs(labels) do
    if want and l:find(want, 1, true) then return on_choice(items[i], i) end
  end
  on_choice(nil)
end
vim.ui.input = function(opts, on_confirm)
  table.insert(_G.ui_steps, opts.prompt .. (opts.default and ("[" .. opts.default .. "]") or ""))
  local want = table.remove(_G.ui_answers, 1)
  on_confirm(want ~= false and want or nil)
end
"""

# Claude's AskUserQuestion (claude-agent-acp 0.101): one enum question, an optional "Other".
CLAUDE_FORM = {
    "mode": "form",
    "message": "Which database should the service use?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "question_0": {
                "type": "string",
                "title": "Database",
                "oneOf": [
                    {"const": "Postgres", "title": "Postgres", "description": "the usual one"},
                    {"const": "SQLite", "title": "SQLite"},
                ],
            },
            "question_0_custom": {"type": "string", "title": "Other"},
        },
    },
}

FORM = {
    "mode": "form",
    "message": "New service",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "port": {"type": "integer", "title": "Port", "default": 8080, "minimum": 1},
            "public": {"type": "boolean", "title": "Public"},
            "tags": {
                "type": "array",
                "title": "Tags",
                "items": {"type": "string", "enum": ["web", "db", "ops"]},
            },
            "tier": {"type": "string", "enum": ["free", "paid"], "default": "free"},
        },
        "required": ["name", "port"],
    },
}


@contextlib.contextmanager
def asking_editor(cwd: Path) -> Iterator[Editor]:
    agent = {"cmd": [sys.executable, str(AGENT)], "label": "fs-agent"}
    with editor_with(cwd, {"agent": agent}, SCRIPTED_UI, timeout=30.0, ask_command=False) as ed:
        yield ed


def ask(ed: Editor, *params: dict[str, Any]) -> None:
    ed.ask(json.dumps([{"method": "elicitation/create", "params": p} for p in params]))


def answers(ed: Editor) -> list[dict[str, Any]]:
    text = "".join(ed.turn_lines())
    return [json.JSONDecoder().raw_decode("{" + part)[0] for part in text.split("FS {")[1:]]


def question_win(ed: Editor) -> int:
    win = wait_for(
        lambda: ed.lua("return require('minime.ui.elicitation').win()"), 20, message="the float"
    )
    wait_for(
        lambda: ed.lua("return require('minime.ui.elicitation').live()"), 10, message="its keys"
    )
    return win


def test_claudes_one_question_is_answered_by_the_number_of_the_choice(tmp_path: Path) -> None:
    with asking_editor(tmp_path) as ed:
        ask(ed, CLAUDE_FORM)
        win = question_win(ed)
        lines = ed.float_lines(win)
        ed.press(win, "2")
        ed.wait_done()
        got = answers(ed)
    assert lines[0] == "Which database should the service use?"
    assert "  1  Postgres — the usual one" in lines and "  2  SQLite" in lines
    assert "  o  Other: type an answer" in lines
    assert got == [{"result": {"action": "accept", "content": {"question_0": "SQLite"}}}]


def test_other_types_the_answer_and_escape_declines(tmp_path: Path) -> None:
    with asking_editor(tmp_path) as ed:
        ed.lua("_G.ui_answers = {'MySQL, sharded'}")
        ask(ed, CLAUDE_FORM, CLAUDE_FORM)
        ed.press(question_win(ed), "o")
        wait_for(lambda: len(answers(ed)) == 1, 20, message="the first answer")
        win = question_win(ed)
        ed.press(win, "<Esc>")
        ed.wait_done()
        got = answers(ed)
    assert got == [
        {"result": {"action": "accept", "content": {"question_0_custom": "MySQL, sharded"}}},
        {"result": {"action": "decline"}},
    ]


def test_a_form_is_filled_in_step_by_step_with_required_fields_enforced(tmp_path: Path) -> None:
    with asking_editor(tmp_path) as ed:
        # name left empty: required, the form stays open; then every field in turn.
        ed.lua("_G.ui_answers = {false}")
        ask(ed, FORM)
        win = question_win(ed)
        lines = ed.float_lines(win)
        ed.press(win, "<CR>")
        ed.wait_note("Name is required")
        assert ed.lua("return require('minime.ui.elicitation').win()") == win
        ed.lua("_G.ui_answers = {'api', 'x', '0', '9000', 'yes', 'web', 'ops', 'done', 'paid'}")
        ed.press(win, "<CR>")
        ed.wait_done()
        got = answers(ed)
        steps = ed.lua("return _G.ui_steps")
        notes = ed.notes()
    assert "  Name* (string)" in lines and "  Port* (integer) [8080]" in lines
    assert got == [
        {
            "result": {
                "action": "accept",
                "content": {
                    "name": "api",
                    "port": 9000,
                    "public": True,
                    "tags": ["web", "ops"],
                    "tier": "paid",
                },
            }
        }
    ]
    assert "Port (required): [8080]" in steps, steps  # the default offered
    assert any("Port must be a whole number" in n for n in notes)
    assert any("Port must be at least 1" in n for n in notes)
    assert any(s.startswith("tier:") and "● free|  paid" in s for s in steps), steps


def test_cancel_answers_cancel_and_an_unknown_session_shows_nothing(tmp_path: Path) -> None:
    with asking_editor(tmp_path) as ed:
        ask(ed, {**CLAUDE_FORM, "sessionId": "never-opened"})
        ed.wait_done()
        assert ed.lua("return require('minime.ui.elicitation').win()") is None
        (refused,) = answers(ed)
        ask(ed, CLAUDE_FORM)
        question_win(ed)
        ed.nvim.command("MiniMeCancel")
        wait_for(
            lambda: ed.lua("return require('minime.ui.elicitation').win()") is None,
            10,
            message="the float to close",
        )
        ed.wait_done(2)
        cancelled = answers(ed)
        bad = {
            **CLAUDE_FORM,
            "requestedSchema": {"type": "object", "properties": {"x": {"type": "array"}}},
        }
        ask(ed, bad)
        ed.wait_done(3)
        assert ed.lua("return require('minime.ui.elicitation').win()") is None
        (malformed,) = answers(ed)
    assert "never opened" in refused["error"]["data"]["details"], refused
    assert cancelled == [{"result": {"action": "cancel"}}]
    assert malformed["error"]["code"] == -32602, malformed


def test_a_question_never_takes_keys_from_typing_and_minimepermission_reaches_it(
    tmp_path: Path,
) -> None:
    with asking_editor(tmp_path) as ed:
        ed.nvim.command("enew")
        code = ed.nvim.current.window.handle
        ed.nvim.input("i")  # typing in the code
        ask(ed, CLAUDE_FORM)
        note = ed.wait_note("the agent asks")
        win = ed.lua("return require('minime.ui.elicitation').win()")
        assert ed.nvim.current.window.handle == code, "the float took focus from typing"
        ed.nvim.input("12")  # typed into the code, not an answer
        ed.nvim.input("<Esc>")
        ed.nvim.command("MiniMePermission")
        assert ed.nvim.current.window.handle == win
        ed.nvim.input("1")
        ed.wait_done()
        got = answers(ed)
        text = ed.nvim.current.buffer[:]
    # One notice, as a permission prompt's: the question cut to fit the screen, then how to
    # reach it.
    assert note.startswith("minime: the agent asks: Which database"), note
    assert note.endswith(" — :MiniMePermission to answer"), note
    assert got == [{"result": {"action": "accept", "content": {"question_0": "Postgres"}}}]
    assert text == ["12"]


def test_a_question_follows_the_user_to_the_tab_page_entered_and_is_answered_there(
    tmp_path: Path,
) -> None:
    # Floats live only in the tab page the user is in (a float left in another page crashes
    # Neovim 0.11.4, ui/window.lua): leaving the page closes the question's float, which shows
    # again in the page entered, still waiting for its answer.
    with asking_editor(tmp_path) as ed:
        ask(ed, CLAUDE_FORM)
        first = question_win(ed)
        ed.nvim.command("tabnew")
        here = ed.nvim.current.tabpage.handle

        def shown_here() -> int | None:
            w = ed.lua("return require('minime.ui.elicitation').win()")
            if w in (None, first):
                return None
            return w if ed.lua("return vim.api.nvim_win_get_tabpage(...)", w) == here else None

        win = wait_for(shown_here, 10, message="the question's float in the tab page entered")
        lines = ed.float_lines(win)
        ed.nvim.command("MiniMePermission")
        ed.press(win, "2")
        ed.wait_done()
        got = answers(ed)
        valid = ed.lua("return vim.api.nvim_win_is_valid(...)", first)
    assert "  2  SQLite" in lines
    assert not valid, "the float was left in the other tab page"
    assert got == [{"result": {"action": "accept", "content": {"question_0": "SQLite"}}}]


@pytest.mark.parametrize("how", ["host killed", "agent killed", "MiniMeStop"])
def test_a_question_left_unanswerable_closes_and_the_next_ask_works(
    tmp_path: Path, how: str
) -> None:
    """The host died (nothing can answer the question now), its agent died, or :MiniMeStop
    ended the agent: no float is left waiting for an answer nobody would read, one plain
    message (or the turn's end) says why, and the next question shows and is answered."""
    with asking_editor(tmp_path) as ed:
        ed.nvim.command("enew")
        code = ed.nvim.current.window.handle
        ask(ed, CLAUDE_FORM)
        question_win(ed)
        ed.nvim.command("MiniMePermission")  # in the float: focus must come back to the code
        host = ed.host_pid()
        before = len(ed.notes())
        if how == "host killed":
            os.kill(host, signal.SIGKILL)
            said = "the Python host stopped (exit 137)"
        elif how == "agent killed":
            (agent,) = ed.lua("return vim.tbl_keys(require('minime.host').agents)")
            os.kill(agent, signal.SIGKILL)
            said = "killed by signal SIGKILL"  # in the turn: an agent's end is the turn's
        else:
            ed.nvim.command("MiniMeStop")
            said = "agent stopped"
        wait_for(
            lambda: ed.lua("return require('minime.ui.elicitation').win()") is None,
            10,
            message="the question's float to close",
        )
        if how == "agent killed":
            ed.wait_text(said)
        else:
            ed.wait_note(said)
        wait_for(
            lambda: not ed.lua("return require('minime.ui.elicitation').waiting(...)", ed.cwd),
            10,
            message="no question left waiting",
        )
        notes = ed.notes()[before:]
        floats = ed.lua(
            "return vim.tbl_filter(function(w) return vim.api.nvim_win_get_config(w).relative"
            " ~= '' and vim.b[vim.api.nvim_win_get_buf(w)].minime == 'elicitation' end,"
            " vim.api.nvim_list_wins())"
        )
        back = ed.nvim.current.window.handle
        errors = ed.lua("return require('minime.ui.elicitation').errors")
        ask(ed, CLAUDE_FORM)
        win = question_win(ed)
        ed.nvim.command("MiniMePermission")
        ed.press(win, "1")
        wait_for(lambda: "FS {" in ed.turn_text(), 20, message="the answer in the turn")
        got = answers(ed)
    assert floats == []
    assert back == code, "focus went back where the user was"
    assert errors == []
    assert [n for n in notes if "question" in n or "Error" in n or "stack" in n] == [], notes
    assert len([n for n in notes if said in n]) == (0 if how == "agent killed" else 1), notes
    assert got == [{"result": {"action": "accept", "content": {"question_0": "Postgres"}}}]
