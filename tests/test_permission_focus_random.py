"""A seeded random test of the permission focus rule (ui/permission_focus.lua, the default
policy "agent"): wherever the user is in a code window (normal, insert, replace, visual,
or command-line mode, one of several windows or tabs) when a prompt arrives,
the habit keys they then type (`a`, `1`–`4`, `<CR>`, `<Esc>`, …) never answer it, and it never
takes the focus from there, however long they pause. When they go to the conversation float it
takes the focus; :MiniMePermission reaches it from anywhere. The seed is printed on failure
(MINIME_SEED=<seed> replays it).
"""

from __future__ import annotations

import os
import random
import time

import nvim_harness
import pytest
from helpers.permission_ui import CONVERSATION, INIT, answers, ask, pending, request
from nvim_harness import wait_for

SEED = int(os.environ.get("MINIME_SEED", random.randrange(1 << 30)))
ROUNDS = int(os.environ.get("MINIME_ROUNDS", "16"))

# A key that says every key typed before it was handled: it counts in _G.seen, in any mode.
SENTINEL = """
_G.seen = 0
vim.keymap.set({ 'n', 'i', 'v', 'o', 'c', 's' }, '<F12>', function() _G.seen = _G.seen + 1 end)
"""

# What the user types by habit, in normal mode and while typing text.
NORMAL_KEYS = ["a", "1", "2", "3", "4", "<CR>", "<Esc>", "j", "k", "x", "u", "i", "o", "w", "b"]
TEXT_KEYS = ["a", "1", "q", "2", " ", "3", "<CR>", "4", "x", "<BS>", "<Esc>", "a", "i"]

# How the user is in a code window when the prompt arrives: keys that get there from normal mode.
STATES = {
    "normal": "",
    "insert": "A",
    "replace": "R",
    "visual": "v",
    "command-line": ":",
}


@pytest.fixture
def nvim():
    with nvim_harness.start(INIT + SENTINEL) as n:
        n.exec_lua(
            "require('minime').setup({ permission = { focus = 'agent', key_delay = 0.2,"
            " idle = ... } })",
            0.1,
        )
        n.exec_lua(
            "vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.fn.map(vim.fn.range(1, 50),"
            " '\"code \" .. v:val'))"
        )
        yield n


def settle(nvim, why, keys=""):
    """Type `keys`, then wait until they have been handled (a pending count or operator holds
    every non-fast request, so the count is read before they are typed). A key that waits for
    another (`q`, a visual `a`/`i`) takes the sentinel for it: then an <Esc>, as the user would,
    and the sentinel again."""
    before = nvim.exec_lua("return _G.seen")
    nvim.input(keys + "<F12>")
    for _ in range(3):
        try:
            wait_for(lambda: nvim.exec_lua("return _G.seen") > before, 1.0, message=why)
            return
        except AssertionError:
            nvim.input("<Esc><F12>")
    wait_for(lambda: nvim.exec_lua("return _G.seen") > before, message=f"{why} (seed {SEED})")


def where(nvim):
    return nvim.exec_lua(
        "return { vim.api.nvim_get_current_win(), vim.b.minime or '',"
        " vim.api.nvim_get_mode().mode }"
    )


def prompt_win(nvim):
    return nvim.exec_lua("return require('minime.ui.permission').win()")


def to_code_window(nvim, rng):
    """Normal mode in some code window: this one, a new split, or another tab."""
    settle(nvim, "normal mode", "<Esc><Esc>")
    nvim.exec_lua(
        "for _, w in ipairs(vim.api.nvim_list_wins()) do"
        " if vim.b[vim.api.nvim_win_get_buf(w)].minime == nil then"
        " vim.api.nvim_set_current_win(w) return end end"
    )
    move = rng.choice(["stay", "stay", "split", "tab", "wincmd"])
    if move == "split" and len(nvim.api.list_wins()) < 6:
        nvim.command("split")
    elif move == "tab" and len(nvim.api.list_tabpages()) < 3:
        nvim.command("tabnew | call setline(1, ['other tab'])")
    elif move == "wincmd":
        nvim.command("wincmd w")
    if nvim.exec_lua("return vim.b.minime") is not None:
        nvim.command("wincmd p")
    nvim.exec_lua(
        "vim.api.nvim_win_set_cursor(0, { math.min(..., vim.fn.line('$')), 0 })", rng.randint(1, 3)
    )


def test_a_prompt_is_never_answered_by_keys_typed_in_a_code_window(nvim):
    rng = random.Random(SEED)
    for n in range(ROUNDS):
        rid = f"r{n}"
        to_code_window(nvim, rng)
        state = rng.choice(list(STATES))
        settle(nvim, f"round {n}: {state}", STATES[state])
        _, kind, mode = where(nvim)
        assert kind == "", f"round {n}: not in a code window (seed {SEED})"
        ask(nvim, request(rid, title=f"bash: rm -rf build{n}"))
        keys = rng.sample(TEXT_KEYS if state != "normal" else NORMAL_KEYS, rng.randint(1, 8))
        for key in keys:
            settle(nvim, f"round {n}: {key!r} of {keys}", key)
            if rng.random() < 0.3:  # a pause, longer than `idle`, then on
                deadline = time.monotonic() + 0.3
                while time.monotonic() < deadline:
                    assert where(nvim)[1] != "permission", (
                        f"round {n}: the prompt took the focus from a code window in {state} "
                        f"mode after {keys} (seed {SEED})"
                    )
        settle(nvim, f"round {n}: keys {keys}")
        context = f"round {n}: prompt in {state} mode ({mode}), keys {keys} (seed {SEED})"
        assert len(answers(nvim)) == n, f"answered by a habit: {context}"
        assert pending(nvim) == [rid], context
        assert where(nvim)[1] != "permission", f"focus taken: {context}"
        # Then the user answers it on purpose: from the conversation float it comes by itself;
        # :MiniMePermission reaches it from anywhere.
        settle(nvim, "normal mode", "<Esc><Esc>")  # done with what they typed
        if rng.random() < 0.5:
            nvim.exec_lua(CONVERSATION, "/tmp/proj")
            wait_for(
                lambda: where(nvim)[1] == "permission",
                message=f"the prompt taking the focus from the conversation: {context}",
            )
            wait_for(lambda: nvim.exec_lua("return require('minime.ui.permission').live()"))
        else:
            nvim.command("MiniMePermission")
            assert where(nvim)[0] == prompt_win(nvim), context
        nvim.input(rng.choice(["1", "3", "a", "q"]))
        wait_for(lambda a=n + 1: len(answers(nvim)) == a, message=f"the answer: {context}")
        assert answers(nvim)[-1][0] == rid, context
    assert pending(nvim) == []
