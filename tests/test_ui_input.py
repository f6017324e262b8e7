"""The input float (lua/minime/ui/input.lua) in a real headless Neovim."""

from __future__ import annotations

import nvim_harness
import pytest
from nvim_harness import wait_for

# Test hook: `prompt(opts)` opens the input; results land in _G.got.
INIT = """
_G.got = {}
_G.prompt = function(opts)
  opts = opts or {}
  opts.on_submit = function(text) table.insert(_G.got, { 'submit', text }) end
  opts.on_cancel = function(text) table.insert(_G.got, { 'cancel', text }) end
  return require('minime.ui.input').open(opts)
end
"""


@pytest.fixture
def nvim():
    with nvim_harness.start(INIT) as n:
        yield n


def got(nvim):
    return nvim.exec_lua("return _G.got")


def mode(nvim):
    return nvim.api.get_mode()["mode"]


def open_input(nvim, **opts):
    main = nvim.exec_lua("return vim.api.nvim_get_current_win()")
    win = nvim.exec_lua("return prompt(...)", opts)
    wait_for(lambda: mode(nvim) == "i", message="insert mode")
    return main, win


def test_enter_in_insert_mode_submits(nvim):
    main, win = open_input(nvim, prompt_title="Ask minime")
    info = nvim.exec_lua(
        """
        local win = ...
        local cfg = vim.api.nvim_win_get_config(win)
        return { vim.api.nvim_get_current_win() == win, cfg.relative, cfg.height,
                 cfg.title[1][1], vim.b[vim.api.nvim_win_get_buf(win)].minime }
        """,
        win,
    )
    assert info == [True, "editor", 1, " Ask minime ", "input"]
    nvim.input("explain this<CR>")
    wait_for(lambda: got(nvim), message="a result")
    assert got(nvim) == [["submit", "explain this"]]
    assert nvim.exec_lua("return vim.api.nvim_win_is_valid(...)", win) is False
    assert nvim.exec_lua("return vim.api.nvim_get_current_win()") == main
    wait_for(lambda: mode(nvim) == "n", message="normal mode")


def test_enter_in_normal_mode_submits(nvim):
    open_input(nvim, default="hello")
    nvim.command("stopinsert")
    wait_for(lambda: mode(nvim) == "n", message="normal mode")
    nvim.input("<CR>")
    wait_for(lambda: got(nvim), message="a result")
    assert got(nvim) == [["submit", "hello"]]


def test_esc_in_insert_mode_goes_to_normal_mode_a_second_esc_closes_with_the_text(nvim):
    _, win = open_input(nvim)
    nvim.input("half typed<Esc>")
    wait_for(lambda: mode(nvim) == "n", message="normal mode")
    assert nvim.exec_lua("return vim.api.nvim_win_is_valid(...)", win) is True
    assert got(nvim) == []
    nvim.input("0dwAtext<Esc>")  # normal mode edits the prompt: the float is still there
    wait_for(lambda: mode(nvim) == "n", message="normal mode again")
    nvim.input("<Esc>")
    wait_for(lambda: got(nvim), message="a result")
    assert got(nvim) == [["cancel", "typedtext"]]
    assert nvim.exec_lua("return vim.api.nvim_win_is_valid(...)", win) is False


@pytest.mark.parametrize("key", ["q", "<C-c>"])
def test_q_or_ctrl_c_in_normal_mode_closes_with_the_text(nvim, key):
    open_input(nvim, default="a draft")
    nvim.command("stopinsert")
    wait_for(lambda: mode(nvim) == "n", message="normal mode")
    nvim.input(key)
    wait_for(lambda: got(nvim), message="a result")
    assert got(nvim) == [["cancel", "a draft"]]


def test_leaving_the_float_keeps_it_closing_it_cancels_once(nvim):
    main, win = open_input(nvim)
    nvim.input("draft")
    wait_for(
        lambda: nvim.exec_lua("return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]") == "draft"
    )
    nvim.exec_lua("vim.api.nvim_set_current_win(...)", main)
    assert nvim.exec_lua("return vim.api.nvim_win_is_valid(...)", win) is True
    assert got(nvim) == []
    nvim.exec_lua("vim.api.nvim_win_close(..., true)", win)
    wait_for(lambda: got(nvim), message="a result")
    assert got(nvim) == [["cancel", "draft"]]


def test_default_text_is_submitted_as_is(nvim):
    open_input(nvim, default="pre-filled")
    nvim.input(" more<CR>")
    wait_for(lambda: got(nvim), message="a result")
    assert got(nvim) == [["submit", "pre-filled more"]]


def test_a_long_line_grows_the_float_row_by_row_then_it_scrolls(nvim):
    """N2 (issue 32): a one-line prompt longer than the float is wide wraps, and the float grows
    with its rows (it stayed one row high: the text was invisible while typed); past 8 rows
    it scrolls, the cursor's row in view."""
    _, win = open_input(nvim)
    width = nvim.exec_lua("return vim.api.nvim_win_get_width(...)", win)
    nvim.input("x" * (2 * width + 5))
    wait_for(lambda: nvim.exec_lua("return vim.api.nvim_win_get_height(...)", win) == 3)
    assert nvim.exec_lua("return vim.fn.line('w0', ...)", win) == 1
    nvim.input("<C-j>".join(["y" * width] * 9))
    buf = nvim.exec_lua("return vim.api.nvim_win_get_buf(...)", win)
    wait_for(lambda: nvim.exec_lua("return vim.api.nvim_buf_line_count(...)", buf) == 9)
    wait_for(lambda: nvim.exec_lua("return vim.api.nvim_win_get_height(...)", win) == 8)
    seen = nvim.exec_lua(
        "local win = ... vim.cmd('redraw') local c = vim.api.nvim_win_get_cursor(win)"
        " return vim.fn.screenpos(win, c[1], math.max(c[2], 1)).row",
        win,
    )
    assert seen > 0  # the row being typed is on screen
