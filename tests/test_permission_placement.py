"""The permission float never covers the cursor or the line being typed (ui/placement.lua).

In a real headless Neovim (80x24, and 120x40): a tall prompt arrives with the cursor at random
rows and columns (seeded; the seed is printed on failure), in normal and insert mode, and while
the user types on; the cursor's screen cell and its line's rows are never inside the float, and
the screen shows the line's text there.
"""

from __future__ import annotations

import os
import random

import nvim_harness
import pytest
from helpers.permission_ui import INIT, ask
from helpers.permission_ui import request as prompt_request
from nvim_harness import wait_for

SEED = int(os.environ.get("MINIME_SEED", random.randrange(1 << 30)))

# The float's outer box (border included), 0-based rows and columns: {top, left, bottom, right}.
FLOAT_BOX = """
local win = require('minime.ui.permission').win()
if not win then return vim.NIL end
local pos = vim.fn.win_screenpos(win)
local cfg = vim.api.nvim_win_get_config(win)
return { pos[1] - 1, pos[2] - 1, pos[1] - 1 + cfg.height + 1, pos[2] - 1 + cfg.width + 1 }
"""

# The cursor's screen cell, 0-based, and the rows of its line, in the current (code) window.
CURSOR = """
vim.cmd('redraw')
local lnum, col = vim.fn.line('.'), vim.fn.col('.')
local len = #vim.api.nvim_get_current_line()
local here = vim.fn.screenpos(0, lnum, math.max(1, math.min(col, len)))
local first = vim.fn.screenpos(0, lnum, 1)
local last = vim.fn.screenpos(0, lnum, math.max(1, len))
local row, column = here.row - 1, here.col - 1
if col > len and len > 0 then column = here.col end -- insert mode after the last character
return { row, column, first.row - 1, last.row - 1 }
"""

# The text the screen shows on a row (0-based).
ROW_TEXT = """
local row = ... + 1
local t = {}
for c = 1, vim.o.columns do t[#t + 1] = vim.fn.screenstring(row, c) end
return table.concat(t)
"""


# The editor's size and the conversation's layout: none shown, or the side panel open beside
# the code (the code window narrower, the prompt still clear of its cursor).
@pytest.fixture(
    params=[(80, 24, None), (120, 40, None), (80, 24, "split"), (120, 40, "split")],
    ids=["80x24", "120x40", "80x24-panel", "120x40-panel"],
)
def nvim(request):
    columns, lines, layout = request.param
    with nvim_harness.start(INIT) as n:
        n.exec_lua("vim.o.columns, vim.o.lines = ...", columns, lines)
        n.exec_lua(
            "require('minime').setup({ permission = { focus = false },"
            " window = { layout = ... } })",
            layout or "float",
        )
        n.exec_lua(
            "vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.fn.map(vim.fn.range(1, 300),"
            " '\"code line \" .. v:val'))"
        )
        if layout:
            n.exec_lua(
                "require('minime.ui.turn').apply('/tmp/p', { { kind = 'begin', prompt = 'go',"
                " cwd = '/tmp/p' }, { kind = 'text', text = 'working' } })"
            )
            assert n.exec_lua("return #vim.api.nvim_tabpage_list_wins(0)") == 2
            assert n.exec_lua("return vim.api.nvim_win_get_width(0)") < columns - 20
        yield n


def tall_request(id_):
    """A request whose float would fill most of the screen (a long script in its input)."""
    script = "\n".join(f"echo step {i}" for i in range(60))
    return prompt_request(
        id_, title="bash: ./deploy.sh", input={"command": "./deploy.sh", "script": script}
    )


def assert_clear(nvim, what):
    box = nvim.exec_lua(FLOAT_BOX)
    assert box, f"{what}: no float"
    top, left, bottom, right = box
    row, col, first, last = nvim.exec_lua(CURSOR)
    inside = top <= row <= bottom and left <= col <= right
    assert not inside, f"{what}: cursor cell ({row}, {col}) inside the float {box} (seed {SEED})"
    overlap = not (last < top or first > bottom)
    assert not overlap, (
        f"{what}: its line's rows {first}-{last} under the float {box} (seed {SEED})"
    )
    text = nvim.exec_lua(ROW_TEXT, first)
    start = nvim.exec_lua("return vim.api.nvim_get_current_line()")[:20]
    assert start in text, f"{what}: row {first} shows {text!r} (seed {SEED})"


def place_cursor(nvim, screen_row, col):
    """The cursor on a line shown at `screen_row` of the code window, column `col`."""
    height = nvim.exec_lua("return vim.api.nvim_win_get_height(0)")
    screen_row = min(screen_row, height - 1)
    nvim.exec_lua(
        "local top, row, col = ... ; vim.cmd('normal! ' .. top .. 'Gzt')"
        " vim.api.nvim_win_set_cursor(0, { top + row, col })",
        100,
        screen_row,
        col,
    )


def test_the_float_misses_the_cursor_at_random_places(nvim):
    rng = random.Random(SEED)
    lines = nvim.exec_lua("return vim.o.lines")
    for i in range(12):
        row, col = rng.randrange(0, lines - 2), rng.randrange(0, 12)
        place_cursor(nvim, row, col)
        ask(nvim, tall_request(f"r{i}"))
        assert_clear(nvim, f"prompt {i}, cursor at screen row {row}, col {col}")
        nvim.exec_lua("require('minime.ui.permission').close(...)", f"r{i}")


def test_an_insert_mode_line_typed_on_stays_visible(nvim):
    """The reproduction: a line typed in insert mode past column 44 while the prompt shows."""
    rng = random.Random(SEED)
    lines = nvim.exec_lua("return vim.o.lines")
    row = rng.randrange(lines // 3, 2 * lines // 3)  # where a centred float would be
    place_cursor(nvim, row, 0)
    nvim.input("o")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "i", message="insert mode")
    ask(nvim, tall_request("r1"))
    assert_clear(nvim, "prompt shown")
    typed = ""
    for word in ["local", "total", "=", "compute(items,", "options)", "--", "sum", "of", "all"]:
        typed += word + " "
        nvim.input(word + " ")
        wait_for(
            lambda t=typed: nvim.exec_lua("return vim.api.nvim_get_current_line()") == t,
            message=f"{typed!r} typed",
        )
        assert_clear(nvim, f"typing at column {len(typed)}")
    # Down to the lines below, then up: the float moves out of the way each time.
    for key in ["<Down>"] * 6 + ["<Up>"] * 12:
        want = nvim.exec_lua("return vim.fn.line('.')") + (1 if key == "<Down>" else -1)
        nvim.input(key)
        wait_for(lambda w=want: nvim.exec_lua("return vim.fn.line('.')") == w, message=key)
        assert_clear(nvim, f"after {key}")
    assert nvim.exec_lua("return require('minime.ui.permission').pending()") == ["r1"]
