"""Random sequences of what a user does with the plugin, in a real headless Neovim.

A *step* is a short text a user could type (``:MiniMeAsk /say hi``, ``:tabnew``, ``i``,
``<Esc>``, ``:bwipeout! #``, ``:set columns=70``…); ``run_steps`` runs steps one by one in an
``Editor`` (tests/plugin_harness.py) and after each one asks whether Neovim lives (the process
answers an eval) and raised no internal error: ``v:errmsg``, ``:messages``, the notifications,
the turn float's and the permission float's error lists and the Python host's stderr may hold
nothing but the plain errors a user's own mistake gives (``E444: Cannot close last window``).
After each step the screen is redrawn (``:redraw``), as a terminal would: Neovim crashed in a
redraw after a window it still pointed to was freed.

``random_steps(rng, n)`` draws a sequence; ``shrink`` removes steps from a failing one while it
still fails. Used by tests/test_random_sequences.py and bench/random_sequences.py.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pynvim
from nvim_harness import wait_for
from plugin_harness import Editor, agent_file, editor

# Errors of Neovim's own that a user's step may rightly get (closing the last window, wiping a
# buffer that is gone, no alternate file, no room): not the plugin's.
USER_ERRORS = {
    "E11",  # invalid in the command-line window
    "E21",  # cannot make changes, 'modifiable' is off (typing in the conversation)
    "E23",  # no alternate file
    "E36",  # not enough room
    "E37",  # no write since last change
    "E86",  # buffer does not exist
    "E89",  # no write since last change for buffer
    "E162",  # no write since last change for buffer
    "E194",  # no alternate file name to substitute for '#'
    "E444",  # cannot close last window
    "E445",  # other window contains changes
    "E516",  # no buffers were deleted
    "E517",  # no buffers were wiped out
    "E784",  # cannot close last tab page
    "E814",  # cannot close window, only autocmd window would remain
    "E5601",  # cannot close window, only floating window would remain
}
E_NUMBER = re.compile(r"\bE(\d+):")
INTERNAL = re.compile(r"stack traceback|Error executing|internal error|\.lua:\d+:|Traceback")


def bad_errors(text: str) -> list[str]:
    """The lines of ``text`` that show an internal error (any E-number not a user's own,
    a Lua or Python traceback)."""
    bad = []
    for line in text.splitlines():
        numbers = {"E" + n for n in E_NUMBER.findall(line)}
        if INTERNAL.search(line) or numbers - USER_ERRORS:
            bad.append(line)
    return bad


# Scripts of the fake mm an ask may run: text, a slow stream (still running at the next step),
# a permission prompt (/bash), a tool call, thinking, a plan and a call naming a location.
ASKS = [
    "/say hi",
    "/say **bold** and `code`",
    "/slow 6",
    "/bash ls",
    "/think hmm",
    "/plan",
    "/tool open_buffers",
    "/chunks 40 3",
    "/locate a.txt:2",  # a location: with follow on, the follow window shows it
    "/spend 4 0.15",  # a growing cost: the thread's budget (1.00) passes 80%, then its end
]

# The steps a sequence is drawn from (with their weights). `ask+` waits for the turn's end.
COMMANDS: list[tuple[str, int]] = [
    *((f":MiniMeAsk {a}", 2) for a in ASKS),
    *((f"ask+ {a}", 1) for a in ASKS[:3]),
    (":MiniMeAsk", 2),  # the input float, centred or over the conversation
    (":MiniMeToggle", 5),
    (":MiniMeShow", 3),
    (":MiniMeReset", 3),
    (":MiniMeCancel", 2),
    (":MiniMeStop", 1),
    (":MiniMeLog", 1),
    (":MiniMePermission", 2),
    (":MiniMeFollow", 2),
    # The loop (issue 31): the budget raised or said, a fix with or without errors kept, a
    # comment kept on a hunk (there is none: said), `f` in the conversation or elsewhere.
    (":MiniMeBudget +1", 2),
    (":MiniMeBudget", 1),
    (":MiniMeFix", 2),
    (":MiniMeComment! kept", 1),
    ("f", 1),
    # Threads: a new one (current at once), the overview, a move in it and a switch (<CR> on
    # a line drawn at run time), a close (`x`) there.
    (":MiniMeNew", 3),
    (":MiniMeNew worktree", 1),  # a git worktree and a tab page of its own
    (":MiniMeThreads", 2),
    ("thread <CR>", 3),
    ("thread x", 1),
    ("j", 1),
    ("float", 5),  # go into the conversation's window (as <C-w>w would, or a click)
    # The layout the next window opens with (a second setup() naming it): the side panel,
    # a real window that stays in the tab pages left, or the floats.
    ("layout split", 3),
    ("layout float", 2),
    ("layout center", 1),
    ("i", 4),
    ("<Esc>", 5),
    ("<CR>", 2),
    ("q", 3),
    ("1", 1),
    ("type hello", 2),
    (":tabnew", 4),
    (":tabclose", 3),
    (":tabnext", 3),
    (":tabnext 1", 2),
    (":only", 2),
    (":close", 3),
    (":vsplit", 2),
    (":split", 2),
    (":wincmd w", 4),
    (":wincmd p", 2),
    (":bwipeout! #", 3),
    ("bwipeout!", 4),  # of a buffer drawn at run time: any, the plugin's own too
    (":resize 5", 1),
    (":vertical resize 30", 1),
    (":set columns=60", 1),
    (":set columns=140", 1),
    (":set lines=12", 1),
    (":set lines=40", 1),
]


def random_steps(rng: random.Random, n: int) -> list[str]:
    names = [c for c, _ in COMMANDS]
    weights = [w for _, w in COMMANDS]
    return rng.choices(names, weights, k=n)


@dataclass
class Failure(Exception):
    step_index: int
    step: str
    what: str
    crashed: bool = False

    def __str__(self) -> str:
        kind = "Neovim crashed" if self.crashed else "internal error"
        return f"{kind} at step {self.step_index} ({self.step!r}): {self.what}"


# The state a step's check reads at once (one request): errmsg, messages, the plugin's errors.
CHECK = """
local turn = package.loaded['minime.ui.turn']
local perm = package.loaded['minime.ui.permission']
local host = package.loaded['minime.host']
local window = package.loaded['minime.ui.window']
local out = {
  window = window and window.errors or {},
  errmsg = vim.v.errmsg,
  messages = vim.fn.execute('messages'),
  turn = turn and turn.errors or {},
  resyncs = turn and turn.resyncs and #turn.resyncs or 0,
  perm = perm and perm.errors or {},
  stderr = host and host.stderr or {},
  notes = {},
}
-- A float of the plugin in a tab page the user is not in: Neovim 0.11.4 crashes on it later.
out.elsewhere = {}
local here = vim.api.nvim_get_current_tabpage()
for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
  for _, w in ipairs(tab ~= here and vim.api.nvim_tabpage_list_wins(tab) or {}) do
    local b = vim.api.nvim_win_get_buf(w)
    if vim.api.nvim_win_get_config(w).relative ~= '' and vim.b[b].minime then
      table.insert(out.elsewhere, ('%s float %d in tab page %d'):format(
        vim.b[b].minime, w, vim.api.nvim_tabpage_get_number(tab)))
    end
  end
end
for _, n in ipairs(_G.notes) do
  if n.level == vim.log.levels.ERROR or n.level == vim.log.levels.WARN then
    table.insert(out.notes, n.msg)
  end
end
vim.v.errmsg = ''
vim.cmd('messages clear')
if turn then turn.errors, turn.resyncs = {}, turn.resyncs and {} end
if perm then perm.errors = {} end
if window then window.errors = {} end
_G.notes = {}
return out
"""

# A buffer a `bwipeout!` step wipes: drawn among all of them, listed or not.
BUFFERS = "return vim.api.nvim_list_bufs()"

FLOAT = """
local turn = require('minime.ui.turn')
local _, win = turn.shown()
if win and vim.api.nvim_win_is_valid(win) then vim.api.nvim_set_current_win(win) end
"""

# Seconds a step (and its check) may take before Neovim counts as frozen.
STEP_TIMEOUT = float(os.environ.get("MINIME_STEP_TIMEOUT", "20"))

IDLE = "return require('minime.ui.turn').running_count() == 0"


@dataclass
class Runner:
    """Runs steps in one Neovim and checks it after each."""

    ed: Editor
    rng: random.Random = field(default_factory=random.Random)
    done: list[str] = field(default_factory=list)
    resyncs: int = 0  # batches that found the conversation's end moved (turn.resyncs)
    resynced_at: list[int] = field(default_factory=list)  # after which steps

    def lua(self, code: str, *args: Any) -> Any:
        return self.ed.lua(code, *args)

    def ex(self, command: str) -> str:
        """Run an Ex command as typed; its error, if any, as text."""
        try:
            self.ed.nvim.command(command)
        except pynvim.NvimError as e:
            return str(e)
        return ""

    def keys(self, keys: str) -> None:
        """Type ``keys``; a count or an operator left pending (Neovim answers no request then)
        gets an <Esc>, as the user's next key would end it."""
        self.ed.nvim.input(keys)
        if self.ed.nvim.api.get_mode()["blocking"]:
            self.ed.nvim.input("<Esc>")

    def step(self, step: str) -> str:
        """Do one step; returns the error of an Ex command of Neovim's own (a user error)."""
        if step.startswith("ask+ "):
            count = len(self.ed.done()) + 1
            err = self.ex("MiniMeAsk " + step[5:])
            if not err:
                with contextlib.suppress(AssertionError):
                    # A reply refused (a turn ran) or a permission prompt waiting: no end here.
                    wait_for(lambda: len(self.ed.done()) >= count, 3, message="turn end")
            return err
        if step == "float":
            self.lua(FLOAT)
            return ""
        if step.startswith("layout "):
            self.lua("require('minime.config').options.window.layout = ...", step[7:])
            return ""
        if step == "bwipeout!":
            bufs = self.lua(BUFFERS)
            return self.ex(f"bwipeout! {self.rng.choice(bufs)}")
        if step == "type hello":
            self.keys("hello")
            return ""
        if step.startswith("thread "):
            # In the overview, on a line drawn now: switch to that thread, or close it.
            err = self.ex("MiniMeThreads")
            if err:
                return "plugin: " + err
            # One call: the list may redraw between two (a thread's state changed).
            pick = self.rng.random()
            self.lua(
                "local n = vim.api.nvim_buf_line_count(0)"
                " vim.api.nvim_win_set_cursor(0, { math.min(n, 1 + math.floor(... * n)), 0 })",
                pick,
            )
            self.keys(step[7:])
            return ""
        if step.startswith(":"):
            err = self.ex(step[1:])
            if err and step.startswith(":MiniMe"):
                return "plugin: " + err
            return err
        self.keys(step)
        return ""

    def check(self, index: int, step: str, user_error: str) -> None:
        try:
            self.ed.nvim.command("redraw")
            state = self.lua(CHECK)
        except (OSError, EOFError) as e:
            raise Failure(index, step, f"{type(e).__name__}: {e}", crashed=True) from None
        if state["resyncs"]:  # self-healed, not shown: counted (where), not failed
            self.resyncs += state["resyncs"]
            self.resynced_at.append(index)
        problems: list[str] = []
        if user_error.startswith("plugin: ") or bad_errors(user_error):
            problems.append(f"command: {user_error}")
        for line in bad_errors(state["errmsg"]):
            problems.append(f"v:errmsg: {line}")
        for line in bad_errors(state["messages"]):
            problems.append(f":messages: {line}")
        problems += [f"turn float: {e}" for e in state["turn"]]
        problems += [f"permission float: {e}" for e in state["perm"]]
        problems += [f"tab page hooks: {e}" for e in state["window"]]
        problems += [f"left behind: {e}" for e in state["elsewhere"]]
        problems += [f"host stderr: {line}" for line in bad_errors("\n".join(state["stderr"]))]
        for note in state["notes"]:
            problems += [f"notification: {line}" for line in bad_errors(note)]
        if problems:
            raise Failure(index, step, "; ".join(problems))

    def run(self, steps: list[str]) -> None:
        pid = self.lua("return vim.fn.getpid()")
        hung: list[int] = []

        def kill() -> None:
            hung.append(1)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

        for index, step in enumerate(steps):
            watchdog = threading.Timer(STEP_TIMEOUT, kill)
            watchdog.start()
            try:
                self.one(index, step)
            except Failure as f:
                if hung:
                    f.what = f"no answer within {STEP_TIMEOUT} s (frozen): {f.what}"
                raise
            finally:
                watchdog.cancel()

    def one(self, index: int, step: str) -> None:
        self.done.append(step)
        if os.environ.get("SEQ_TRACE"):
            print(index, step, flush=True)
        try:
            err = self.step(step)
        except (OSError, EOFError) as e:
            raise Failure(index, step, f"{type(e).__name__}: {e}", crashed=True) from None
        except Exception as e:  # an API error from a step is a finding
            err = f"plugin: {e}"
        self.check(index, step, err)

    def quiet(self) -> None:
        """Let running turns end (or cancel them), so the next sequence starts alike."""
        with contextlib.suppress(AssertionError):
            wait_for(lambda: self.lua(IDLE), 5, message="turns to end")


@contextlib.contextmanager
def sequence_editor(directory: Path) -> Iterator[Editor]:
    """A Neovim with the plugin on the fake mm (permission prompts ask: no rule allows), in a
    git repository (a worktree thread can be made)."""
    (directory / "a.txt").write_text("one\ntwo\n")
    git = ["git", "-c", "user.email=t@e", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "a.txt"], ["commit", "-qm", "a"]):
        subprocess.run([*git, *args], cwd=directory, check=True, capture_output=True)
    config = agent_file(directory, trace=False)
    with editor(directory, config=config, budget={"cost": 1}) as ed:
        ed.nvim.command("edit a.txt")
        yield ed


def run_steps(ed: Editor, steps: list[str], seed: int = 0) -> Runner:
    """Run ``steps`` in ``ed``; raises Failure at the first crash or internal error."""
    runner = Runner(ed, random.Random(seed))
    runner.run(steps)
    return runner


def fails(directory: Path, steps: list[str], seed: int) -> Failure | None:
    """Whether ``steps`` fail in a fresh Neovim (the Failure, or None)."""
    with sequence_editor(directory) as ed:
        try:
            run_steps(ed, steps, seed)
        except Failure as f:
            return f
    return None


def shrink(
    directory: Callable[[], Path], steps: list[str], seed: int, seconds: float = 40.0
) -> list[str]:
    """A shorter sequence that still fails (each step dropped in turn while it keeps failing,
    each trial in a fresh Neovim), within ``seconds``."""
    deadline = time.monotonic() + seconds
    current = list(steps)
    i = len(current) - 2  # the failing step stays
    while i >= 0 and time.monotonic() < deadline:
        trial = current[:i] + current[i + 1 :]
        if fails(directory(), trial, seed):
            current = trial
        i -= 1
    return current
