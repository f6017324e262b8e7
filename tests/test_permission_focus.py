"""A permission prompt never answers itself with the user's typing (lua/minime/ui/permission.lua,
its focus policy in permission_focus.lua).

In a real headless Neovim: the float takes focus only when nobody is typing (mode, blocking
state, last key), keys do nothing for `key_delay` seconds after it took focus, and
:MiniMePermission / <Plug>(minime-permission) go to the oldest prompt.
"""

from __future__ import annotations

import nvim_harness
import pytest
from helpers.permission_ui import CONVERSATION, INIT, answers, ask, pending, request, shown
from nvim_harness import wait_for

FOOTER_HL = """
local cfg = vim.api.nvim_win_get_config(require('minime.ui.permission').win())
return cfg.footer[1][2] or ''
"""


@pytest.fixture
def nvim():
    with nvim_harness.start(INIT) as n:
        yield n


def current_win(nvim):
    return nvim.exec_lua("return vim.api.nvim_get_current_win()")


def prompt_win(nvim):
    return nvim.exec_lua("return require('minime.ui.permission').win()")


def notes(nvim):
    return nvim.exec_lua("return _G.notes")


def line(nvim):
    return nvim.exec_lua("return vim.api.nvim_get_current_line()")


def setup(nvim, **opts):
    """setup() again with these `permission` fields changed (the others as they are)."""
    nvim.exec_lua(
        "require('minime').setup({ permission = vim.tbl_extend('force',"
        " require('minime.config').options.permission, ...) })",
        opts,
    )


def feed(nvim, keys):
    """Keys typed and run to the end before this returns (mappings apply, as when typed)."""
    nvim.exec_lua(
        "local keys = vim.api.nvim_replace_termcodes(..., true, false, true)"
        " vim.api.nvim_feedkeys(keys, 'mx', false)",
        keys,
    )


def assert_rang_once(nvim):
    rung = [n for n in notes(nvim) if ":MiniMePermission" in n]
    assert rung == ["minime: permission asked: bash: rm -rf build — :MiniMePermission to answer"]


def test_insert_mode_typing_goes_into_the_buffer_not_the_prompt(nvim):
    main = current_win(nvim)
    nvim.input("itot")
    wait_for(lambda: line(nvim) == "tot", message="'tot' typed")
    ask(nvim, request())
    assert shown(nvim)[0] == "bash: rm -rf build"  # shown, without focus
    nvim.input("al = 1")
    wait_for(lambda: line(nvim) == "total = 1", message="the rest typed into the buffer")
    assert current_win(nvim) == main
    assert nvim.api.get_mode()["mode"] == "i"
    assert answers(nvim) == [] and pending(nvim) == ["r1"]
    assert_rang_once(nvim)


@pytest.mark.parametrize(
    ("keys", "mode"),
    [
        (":", "c"),  # command line
        ("d", "no"),  # operator pending
        ("v", "v"),  # visual
        ("R", "R"),  # replace
    ],
)
def test_no_focus_while_keys_go_elsewhere(nvim, keys, mode):
    setup(nvim, idle=0)  # only the mode keeps focus away here
    main = current_win(nvim)
    nvim.input(keys)
    wait_for(lambda: nvim.api.get_mode()["mode"] == mode, message=f"mode {mode}")
    ask(nvim, request())
    assert shown(nvim)[0] == "bash: rm -rf build"
    assert current_win(nvim) == main
    assert nvim.api.get_mode()["mode"] == mode
    nvim.input("<Esc>")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "n", message="normal mode")
    assert answers(nvim) == [] and pending(nvim) == ["r1"]
    assert_rang_once(nvim)


def test_no_focus_in_a_terminal(nvim):
    setup(nvim, idle=0)
    nvim.command("terminal cat")
    nvim.input("i")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "t", message="terminal mode")
    term = current_win(nvim)
    ask(nvim, request())
    assert current_win(nvim) == term and nvim.api.get_mode()["mode"] == "t"
    assert pending(nvim) == ["r1"]


def test_no_focus_right_after_a_keystroke(nvim):
    setup(nvim, idle=60)
    nvim.input("ix<Esc>")
    wait_for(lambda: line(nvim) == "x" and nvim.api.get_mode()["mode"] == "n", message="typed")
    main = current_win(nvim)
    ask(nvim, request())
    assert current_win(nvim) == main
    assert_rang_once(nvim)


def test_focus_when_the_last_keystroke_is_old_enough(nvim):
    """The same as above with idle = 0: what kept focus away was the keystroke."""
    setup(nvim, idle=0)
    nvim.input("ix<Esc>")
    wait_for(lambda: line(nvim) == "x" and nvim.api.get_mode()["mode"] == "n", message="typed")
    ask(nvim, request())
    assert current_win(nvim) == prompt_win(nvim)
    assert not [n for n in notes(nvim) if ":MiniMePermission" in n]


def test_keys_do_nothing_during_the_key_delay_then_work(nvim):
    setup(nvim, key_delay=3)
    ask(nvim, request())
    assert current_win(nvim) == prompt_win(nvim)  # nobody typing: it took focus
    assert nvim.exec_lua("return require('minime.ui.permission').live()") is False
    assert nvim.exec_lua(FOOTER_HL) == "Comment"  # dimmed until the keys work
    for key in ["1", "a", "q", "<Esc>", "<CR>"]:
        feed(nvim, key)
    assert answers(nvim) == [] and pending(nvim) == ["r1"]
    assert current_win(nvim) == prompt_win(nvim)
    wait_for(
        lambda: nvim.exec_lua("return require('minime.ui.permission').live()"),
        10,
        message="the key delay to end",
    )
    wait_for(lambda: nvim.exec_lua(FOOTER_HL) != "Comment", message="the footer lit")
    feed(nvim, "3")
    assert answers(nvim) == [["r1", "reject"]]


def test_the_next_prompt_takes_focus_after_an_answer_in_the_float(nvim):
    """Answering is typing, but into the prompts: the next one comes in focused, delayed."""
    setup(nvim, idle=60, key_delay=3)
    nvim.input("ix<Esc>")  # just typed: the first prompt comes in without focus
    wait_for(lambda: line(nvim) == "x" and nvim.api.get_mode()["mode"] == "n", message="typed")
    ask(nvim, request("r1", title="first"))
    assert current_win(nvim) != prompt_win(nvim)
    ask(nvim, request("r2", title="second"))
    nvim.exec_lua("require('minime.ui.permission').focus()")  # the user went there: live
    feed(nvim, "1")  # a double press: the second "1" lands in the next prompt's delay
    feed(nvim, "1")
    assert answers(nvim) == [["r1", "allow"]]
    assert shown(nvim)[0] == "second" and current_win(nvim) == prompt_win(nvim)
    assert pending(nvim) == ["r2"]


def test_minimepermission_goes_to_the_oldest_prompt(nvim):
    setup(nvim, focus=False)
    main = current_win(nvim)
    ask(nvim, request("r1", title="first"))
    ask(nvim, request("r2", title="second"))
    assert current_win(nvim) == main
    nvim.command("MiniMePermission")
    assert current_win(nvim) == prompt_win(nvim)
    assert shown(nvim)[0] == "first"
    nvim.input("3")
    wait_for(lambda: answers(nvim), message="an answer")
    assert answers(nvim) == [["r1", "reject"]]
    assert current_win(nvim) == main  # back where the user was
    assert shown(nvim)[0] == "second"


def test_plug_mapping_from_insert_mode(nvim):
    setup(nvim, focus=False)
    nvim.command("imap <F2> <Plug>(minime-permission)")
    main = current_win(nvim)
    nvim.input("ihello")
    wait_for(lambda: line(nvim) == "hello", message="typed")
    ask(nvim, request())
    nvim.input("<F2>")
    wait_for(lambda: current_win(nvim) == prompt_win(nvim), message="the prompt focused")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "n", message="normal mode")
    nvim.input("1")
    wait_for(lambda: answers(nvim), message="an answer")
    assert answers(nvim) == [["r1", "allow"]]
    assert current_win(nvim) == main and line(nvim) == "hello"


def test_minimepermission_without_a_prompt_says_so(nvim):
    nvim.command("MiniMePermission")
    assert notes(nvim)[-1] == "minime: no permission prompt is waiting"


# -- the default policy, "agent": the focus is taken only from someone looking at the agent ------


def statusline(nvim):
    return nvim.exec_lua("return require('minime').statusline()")


def test_agent_policy_never_takes_focus_from_a_code_window(nvim):
    """Nobody typing, normal mode, a code window: the prompt shows, says so once and in the
    statusline, and `1`, `a`, `q` typed there do what they always do."""
    setup(nvim, focus="agent", idle=0)
    main = current_win(nvim)
    ask(nvim, request())
    assert shown(nvim)[0] == "bash: rm -rf build"
    assert current_win(nvim) == main
    assert statusline(nvim) == "minime · permission asked (:MiniMePermission)"
    feed(nvim, "1")  # a count
    feed(nvim, "ahello<Esc>")  # append
    feed(nvim, "qzq")  # record an (empty) macro
    assert line(nvim) == "hello" and current_win(nvim) == main
    assert answers(nvim) == [] and pending(nvim) == ["r1"]
    assert_rang_once(nvim)
    nvim.command("MiniMePermission")
    feed(nvim, "3")
    assert answers(nvim) == [["r1", "reject"]]
    assert current_win(nvim) == main and statusline(nvim) == ""


def test_the_default_is_the_agent_policy(nvim):
    nvim.exec_lua("require('minime').setup({ permission = { key_delay = 0, idle = 0 } })")
    main = current_win(nvim)
    ask(nvim, request())
    assert current_win(nvim) == main and pending(nvim) == ["r1"]
    # `true`, the old default, means the same.
    nvim.exec_lua("require('minime').setup({ permission = { focus = true, idle = 0 } })")
    assert nvim.exec_lua("return require('minime.ui.permission_focus').policy()") == "agent"


def test_agent_policy_takes_focus_in_the_conversation_float(nvim):
    setup(nvim, focus="agent", idle=0, key_delay=3)
    conversation = nvim.exec_lua(CONVERSATION, "/tmp/proj")
    ask(nvim, request())
    assert current_win(nvim) == prompt_win(nvim)
    # It took the focus by itself: the keys wait (a `q` meant to hide the conversation).
    feed(nvim, "q")
    assert answers(nvim) == [] and nvim.exec_lua(FOOTER_HL) == "Comment"
    # :MiniMePermission is coming on purpose: the keys work at once.
    nvim.command("MiniMePermission")
    assert nvim.exec_lua("return require('minime.ui.permission').live()") is True
    feed(nvim, "1")
    assert answers(nvim) == [["r1", "allow"]]
    assert current_win(nvim) == conversation


def test_agent_policy_takes_focus_when_the_user_comes_to_the_conversation(nvim):
    setup(nvim, focus="agent", idle=0.3)
    main = current_win(nvim)
    ask(nvim, request())
    assert current_win(nvim) == main
    conversation = nvim.exec_lua(CONVERSATION, "/tmp/proj")
    wait_for(lambda: current_win(nvim) == prompt_win(nvim), message="the prompt to take focus")
    feed(nvim, "1")
    assert answers(nvim) == [["r1", "allow"]]
    assert current_win(nvim) == conversation


def test_agent_policy_never_takes_focus_from_the_input_while_typing(nvim):
    setup(nvim, focus="agent", idle=0)
    nvim.exec_lua(CONVERSATION, "/tmp/proj")
    nvim.exec_lua("require('minime.ui.input').open({ on_submit = function() end })")
    nvim.input("fix the bug and")
    wait_for(lambda: line(nvim) == "fix the bug and", message="typed into the input")
    ask(nvim, request())
    nvim.input(" also add a test")
    wait_for(lambda: line(nvim) == "fix the bug and also add a test", message="typed on")
    assert nvim.api.get_mode()["mode"] == "i" and answers(nvim) == []
    assert nvim.exec_lua("return vim.b.minime") == "input"


# -- <Plug>(minime-permission) from insert mode goes back to insert mode, same place -----------


@pytest.mark.parametrize(
    ("typed", "moves", "then", "want"),
    [
        ("hello", "", " world", "hello world"),  # at the end of the line
        ("helloworld", "<Left><Left><Left><Left><Left>", " ", "hello world"),  # in the middle
        ("x", "<Home>", "a", "ax"),  # at its start
    ],
)
def test_plug_mapping_returns_to_insert_mode_at_the_same_place(nvim, typed, moves, then, want):
    setup(nvim, focus=False)
    nvim.command("imap <F2> <Plug>(minime-permission)")
    main = current_win(nvim)
    nvim.input("i" + typed + moves)
    wait_for(lambda: line(nvim) == typed, message="typed")
    ask(nvim, request())
    nvim.input("<F2>")
    wait_for(lambda: current_win(nvim) == prompt_win(nvim), message="the prompt focused")
    nvim.input("1")
    wait_for(lambda: answers(nvim), message="an answer")
    nvim.input(then)  # the next letters go on into the text
    wait_for(lambda: line(nvim) == want, message=f"{want!r} in the buffer")
    assert current_win(nvim) == main and nvim.api.get_mode()["mode"] == "i"
    assert answers(nvim) == [["r1", "allow"]]


def test_plug_mapping_from_insert_mode_through_two_prompts(nvim):
    """Answering the first, the second takes the focus (the user is answering); after it,
    insert mode goes on where it was."""
    setup(nvim, focus="agent")
    nvim.command("imap <F2> <Plug>(minime-permission)")
    nvim.input("ihello")
    wait_for(lambda: line(nvim) == "hello", message="typed")
    ask(nvim, request("r1", title="first"))
    ask(nvim, request("r2", title="second"))
    nvim.input("<F2>")
    wait_for(lambda: current_win(nvim) == prompt_win(nvim), message="the prompt focused")
    nvim.input("1")
    wait_for(lambda: shown(nvim) and shown(nvim)[0] == "second", message="the second prompt")
    wait_for(lambda: nvim.exec_lua("return require('minime.ui.permission').live()"), 5)
    nvim.input("3")
    wait_for(lambda: len(answers(nvim)) == 2, message="two answers")
    nvim.input("!")
    wait_for(lambda: line(nvim) == "hello!", message="typing goes on")
    assert answers(nvim) == [["r1", "allow"], ["r2", "reject"]]


def test_the_message_fits_one_screen_line(nvim):
    setup(nvim, focus=False)
    nvim.exec_lua("vim.o.columns = 80")
    ask(nvim, request(title="bash: " + "x" * 200))
    rung = [n for n in notes(nvim) if ":MiniMePermission" in n]
    assert len(rung) == 1
    assert nvim.exec_lua("return vim.api.nvim_strwidth(...)", rung[0]) <= 79
    assert rung[0].startswith("minime: permission asked: bash: xxx")
    assert rung[0].endswith("x… — :MiniMePermission to answer")
