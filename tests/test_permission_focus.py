"""A permission prompt never answers itself with the user's typing (lua/minime/ui/permission.lua,
its focus policy in permission_focus.lua).

In a real headless Neovim: the float takes focus only when nobody is typing (mode, blocking
state, last key), keys do nothing for `key_delay` seconds after it took focus, and
:MiniMePermission / <Plug>(minime-permission) go to the oldest prompt.
"""

from __future__ import annotations

import nvim_harness
import pytest
from helpers.permission_ui import INIT, answers, ask, pending, request, shown
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
