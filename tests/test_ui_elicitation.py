"""The agent's question float (lua/minime/ui/elicitation.lua) driven directly in a headless
Neovim: it lives as a permission prompt's float does (lua/minime/ui/ask/), so it takes the focus
when the user comes to the agent, and :MiniMePermission makes its keys work at once, its footer
saying so. The end-to-end questions (the agent's wire, the forms) are test_elicitation.py's."""

from __future__ import annotations

import nvim_harness
import pytest
from helpers.permission_ui import CONVERSATION, INIT, answers, request
from nvim_harness import wait_for

# `question(req)` opens a question whose answers land in _G.questions as {id, action, content}.
QUESTIONS = """
_G.questions = {}
_G.question = function(req)
  require('minime.ui.elicitation').open(req, function(action, content)
    table.insert(_G.questions, { req.id, action, content or vim.NIL })
  end)
end
"""

ONE_CHOICE = {
    "id": "q1",
    "cwd": "/tmp/proj",
    "session_id": "s1",
    "message": "Which database?",
    "fields": [
        {
            "name": "db",
            "type": "string",
            "enum": ["Postgres", "SQLite"],
        }
    ],
}

FOOTER_HL = """
local cfg = vim.api.nvim_win_get_config(require('minime.ui.elicitation').win())
return cfg.footer[1][2] or ''
"""


@pytest.fixture
def nvim():
    with nvim_harness.start(INIT + QUESTIONS) as n:
        yield n


def setup(nvim, **opts):
    nvim.exec_lua(
        "require('minime').setup({ permission = vim.tbl_extend('force',"
        " require('minime.config').options.permission, ...) })",
        opts,
    )


def current_win(nvim):
    return nvim.exec_lua("return vim.api.nvim_get_current_win()")


def question_win(nvim):
    return nvim.exec_lua("return require('minime.ui.elicitation').win()")


def feed(nvim, keys):
    nvim.exec_lua(
        "local keys = vim.api.nvim_replace_termcodes(..., true, false, true)"
        " vim.api.nvim_feedkeys(keys, 'mx', false)",
        keys,
    )


def test_a_question_takes_the_focus_when_the_user_comes_to_the_conversation(nvim):
    setup(nvim, focus="agent", idle=0.3)
    code = current_win(nvim)
    nvim.exec_lua("question(...)", ONE_CHOICE)
    assert question_win(nvim) is not None and current_win(nvim) == code
    conversation = nvim.exec_lua(CONVERSATION, "/tmp/proj")
    wait_for(lambda: current_win(nvim) == question_win(nvim), message="the question to take focus")
    feed(nvim, "2")
    assert nvim.exec_lua("return _G.questions") == [["q1", "accept", {"db": "SQLite"}]]
    assert current_win(nvim) == conversation


def test_minimepermission_makes_its_keys_work_and_its_footer_says_so(nvim):
    setup(nvim, focus="agent", idle=0, key_delay=3)
    nvim.exec_lua(CONVERSATION, "/tmp/proj")
    nvim.exec_lua("question(...)", ONE_CHOICE)
    assert current_win(nvim) == question_win(nvim)
    feed(nvim, "q")  # in its key delay: nothing
    assert nvim.exec_lua("return _G.questions") == []
    assert nvim.exec_lua(FOOTER_HL) == "Comment"
    nvim.command("MiniMePermission")
    assert nvim.exec_lua(FOOTER_HL) == ""
    feed(nvim, "q")
    assert nvim.exec_lua("return _G.questions") == [["q1", "decline", None]]


# Open one float of each kind: a question, or a permission prompt.
OPEN = {"question": "question(...)", "prompt": "ask(...)"}
WIN = {
    "question": "return require('minime.ui.elicitation').win()",
    "prompt": "return require('minime.ui.permission').win()",
}


@pytest.mark.parametrize("first", ["question", "prompt"])
def test_the_user_in_one_asking_float_is_looking_at_the_agent_for_the_other(nvim, first):
    """Under "agent" a question's float and a prompt's are both the agent's windows: the user in
    one (answering the agent) gets the other's focus when it comes, and answering it brings
    them back to the first, whose answer then brings them back to the code."""
    second = "prompt" if first == "question" else "question"
    setup(nvim, focus="agent", idle=0, key_delay=0)
    code = current_win(nvim)
    nvim.exec_lua(OPEN[first], ONE_CHOICE if first == "question" else request())
    assert current_win(nvim) == code, "never from a code window"
    nvim.command("MiniMePermission")
    there = nvim.exec_lua(WIN[first])
    assert current_win(nvim) == there
    nvim.exec_lua(OPEN[second], ONE_CHOICE if second == "question" else request())
    assert current_win(nvim) == nvim.exec_lua(WIN[second]), "the second float took the focus"
    feed(nvim, "2")
    assert current_win(nvim) == there, "back in the first float"
    feed(nvim, "1")
    assert current_win(nvim) == code
    assert nvim.exec_lua("return _G.questions") == [
        ["q1", "accept", {"db": "SQLite" if second == "question" else "Postgres"}]
    ]
    assert answers(nvim) == [["r1", "allow_always" if second == "prompt" else "allow"]]
