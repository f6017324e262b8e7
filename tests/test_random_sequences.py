"""Nothing the plugin does crashes Neovim: fixed sequences that crashed Neovim 0.11.4, and a
seeded random sequence of the plugin's commands, asks, the reply input, keys, tab and window
commands, wipes and resizes (tests/sequences.py), checked after each step: Neovim answers and
raised no internal error.

MINIME_SEED picks the random sequence (else a random seed); MINIME_STEPS its length. A failure
prints the seed, the failing step and the sequence shrunk to the steps that still fail.
bench/random_sequences.py runs thousands of steps.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from sequences import Failure, random_steps, run_steps, sequence_editor, shrink

# The first crash: the reply input opened and cancelled in the conversation float,
# then the float hidden from a new tab page (E315: ml_get: Invalid lnum: 1, then SIGSEGV).
REPLY_THEN_OTHER_TAB = [
    "ask+ /say hi",
    "float",
    "i",
    "<Esc>",
    ":tabnew",
    ":MiniMeToggle",
    ":tabnext 1",
]

# The second: the buffer of the last window of a tab page holding the plugin's float wiped
# from another tab page (SIGSEGV in winframe_remove), then the issue's own random sequence.
WIPE_FROM_OTHER_TAB = [
    "ask+ /say hi",
    ":tabnew",
    ":bwipeout! #",
    "<Esc>",
    ":tabclose",
    ":bwipeout! #",
    ":MiniMeReset",
    ":close",
    ":bwipeout! #",
    ":bwipeout! #",
    ":MiniMeReset",
    ":wincmd w",
    ":tabnew",
]


# Following the agent while windows and tab pages come and go, and with no room for a split.
FOLLOW_WINDOWS = [
    ":MiniMeFollow",
    "ask+ /locate a.txt:2",
    ":only",
    ":MiniMeAsk /locate a.txt:2",
    ":tabnew",
    "ask+ /locate a.txt:2",
    ":close",
    ":tabclose",
    ":set lines=8",
    ":split",
    ":split",
    "ask+ /locate a.txt:2",
    ":MiniMeFollow",
]

# The side panel (a real window) in two tab pages, the last window of one, its buffer wiped
# from the other, then :only and :tabclose around it, the float again in between.
PANEL_IN_TWO_TABS = [
    "layout split",
    "ask+ /say hi",
    "float",
    ":only",
    ":tabnew",
    ":MiniMeToggle",
    ":tabnext 1",
    ":bwipeout! minime://turn/*",
    ":tabnext",
    "ask+ /say again",
    "float",
    "q",
    ":MiniMeToggle",
    "layout float",
    ":MiniMeToggle",
    ":MiniMeToggle",
    ":tabclose",
    "layout split",
    ":MiniMeToggle",
    "i",
    "<Esc>",
    ":only",
    "q",
]


@pytest.mark.parametrize(
    "steps",
    [REPLY_THEN_OTHER_TAB, WIPE_FROM_OTHER_TAB, FOLLOW_WINDOWS, PANEL_IN_TWO_TABS],
    ids=["reply-then-tab", "wipe-in-tab", "follow-windows", "panel-in-two-tabs"],
)
def test_a_sequence_that_crashed_neovim_now_leaves_it_running(
    tmp_path: Path, steps: list[str]
) -> None:
    with sequence_editor(tmp_path) as ed:
        run_steps(ed, steps)
        assert ed.lua("return 1 + 1") == 2


def test_the_conversation_float_follows_the_user_to_another_tab_page(tmp_path: Path) -> None:
    """A float is never left in a tab page the user is not in: the conversation shows in the
    page entered (unfocused), none stays in the page left."""
    with sequence_editor(tmp_path) as ed:
        run_steps(ed, ["ask+ /say hi", "float", ":tabnew"])
        where = ed.lua(
            """
            local turn = require('minime.ui.turn')
            local _, win = turn.shown()
            local floats = {}
            for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
              for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
                if vim.api.nvim_win_get_config(w).relative ~= '' then
                  floats[#floats + 1] = vim.api.nvim_tabpage_get_number(tab)
                end
              end
            end
            return { win and vim.api.nvim_tabpage_get_number(vim.api.nvim_win_get_tabpage(win)),
                     vim.api.nvim_get_current_win() ~= win, floats }
            """
        )
        assert where == [2, True, [2]]


@pytest.mark.timeout(180)
def test_a_random_sequence_never_crashes_nor_raises_an_internal_error(tmp_path: Path) -> None:
    seed = int(os.environ.get("MINIME_SEED") or random.randrange(2**32))
    count = int(os.environ.get("MINIME_STEPS") or 300)
    steps = random_steps(random.Random(seed), count)
    try:
        with sequence_editor(tmp_path) as ed:
            run_steps(ed, steps, seed)
    except Failure as failure:
        prefix = steps[: failure.step_index + 1]
        print(f"MINIME_SEED={seed}: {failure}\nsequence: {prefix}", flush=True)
        counter = iter(range(10**6))

        def fresh() -> Path:
            path = tmp_path / f"shrink{next(counter)}"
            path.mkdir()
            return path

        shrunk = shrink(fresh, prefix, seed, seconds=40)
        pytest.fail(f"MINIME_SEED={seed}: {failure}\nshrunk sequence: {shrunk}\nfull: {prefix}")


def test_a_permission_prompt_follows_the_user_to_another_tab_page_unanswered(
    tmp_path: Path,
) -> None:
    """Leaving the tab page closes the prompt's float there, which is no rejection: it shows
    in the page entered, and its answer still reaches the agent."""
    with sequence_editor(tmp_path) as ed:
        ed.ask("/bash ls -la")
        first = ed.permission_win()
        ed.nvim.command("tabnew")
        win = ed.permission_win(other_than=first)
        assert ed.lua("return vim.api.nvim_win_is_valid(...)", first) is False
        assert ed.lua("return vim.api.nvim_win_get_tabpage(...)", win) == ed.lua(
            "return vim.api.nvim_get_current_tabpage()"
        )
        assert "bash: ls -la" in "\n".join(ed.float_lines(win))
        assert ed.done() == []  # not rejected
        ed.press(win, "1")
        ed.wait_done()
        assert "ran: ls -la" in ed.turn_text()


def test_the_log_with_no_room_for_its_window_says_so_plainly(tmp_path: Path) -> None:
    """E36 (no room for the log's split) was a traceback in the host's stderr."""
    with sequence_editor(tmp_path) as ed:
        run_steps(ed, ["ask+ /say hi", ":MiniMeToggle", ":set lines=8"])
        for _ in range(8):
            ed.lua("pcall(vim.cmd, 'split')")
        ed.nvim.command("MiniMeLog")
        ed.wait_note("no room for the log window")
        assert not [line for line in ed.lua("return require('minime.host').stderr") if line]
        assert ed.lua("return vim.fn.bufwinid('minime://log')") == -1
