"""One Neovim, and its Python host, for a whole test module, reset before each test.

Most of an end-to-end test's start is the Python host's (1-2 s on a loaded 2-core machine;
Neovim's own is 40 ms), paid again by every test that starts its own Neovim. A module whose
tests only need a clean editor uses a ``SharedNvim`` in place of ``plugin_harness.editor_with``::

    SHARED = SharedNvim(before=PICK, each="_G.offers, _G.pick = {}, {}")  # closed with the
    # module by tests/conftest.py's shared_nvim fixture (it looks for the name SHARED)

    ... with SHARED.editor_with(tmp_path, opts, timeout=20.0) as ed: ...

Each test's editor starts from: no agent running (the last test's stopped, its processes gone),
one tab, one window, one empty buffer, the global and window options as at start, normal mode,
empty ``_G.notes`` / ``_G.done`` / turn errors, ``each`` run, setup() with the test's options,
cwd the test's. ``before`` (Lua run before setup() in plugin_harness.init) runs once, at start:
it may wrap functions, which must not be wrapped twice; ``each`` resets what it records. A
test whose editor needs a fresh process (no host yet, its start-up, its death, its environment,
the host's whole log) passes ``fresh=True`` or keeps ``plugin_harness.editor_with``. If the
reset fails (the last test wedged Neovim), a new Neovim is started.

Check a module's reset with its tests in other orders: ``MINIME_TEST_REVERSE=1`` or
``MINIME_TEST_SHUFFLE=<seed>`` (tests/conftest.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from conftest import process_gone
from nvim_harness import start, wait_for
from plugin_harness import Editor, editor_with, init, lua_table

# Every global option and the window-local ones of the first window, as at start.
SNAPSHOT = """
local global, window = {}, {}
for name, info in pairs(vim.api.nvim_get_all_options_info()) do
  if info.scope == 'global' or info.global_local then
    global[name] = vim.api.nvim_get_option_value(name, { scope = 'global' })
  end
  if info.scope == 'win' then
    window[name] = vim.api.nvim_get_option_value(name, { win = 0 })
  end
end
_G.shared_options = { global = global, window = window }
"""

# :MiniMeStop, if the host runs: the agents' pids (the host's record of them) and how many
# notifications came before; the host says "minime: agent stopped" (with several threads,
# "minime: stopped N threads' agents") once it has stopped them.
STOP = """
local host = package.loaded['minime.host']
if not host or not host.chan then return vim.NIL end
require('minime').stop()
return { pids = vim.tbl_keys(host.agents), notes = #_G.notes }
"""

STOPPED = """
for i = ... + 1, #_G.notes do
  local msg = _G.notes[i].msg
  if vim.startswith(msg, 'minime: agent stopped')
    or msg:find("^minime: stopped %d+ threads' agents") then
    return true
  end
end
return false
"""

RESET = """
local api = vim.api
local host = package.loaded['minime.host']
if host then host.agents = {} end  -- their processes are gone (waited for): as if never started
for _, win in ipairs(api.nvim_list_wins()) do
  if api.nvim_win_get_config(win).relative ~= '' then pcall(api.nvim_win_close, win, true) end
end
vim.cmd('silent! tabonly! | silent! only! | silent! %bwipeout!')
local saved = _G.shared_options
for name, value in pairs(saved.global) do
  if not vim.deep_equal(api.nvim_get_option_value(name, { scope = 'global' }), value) then
    pcall(api.nvim_set_option_value, name, value, { scope = 'global' })
  end
end
for name, value in pairs(saved.window) do
  if not vim.deep_equal(api.nvim_get_option_value(name, { win = 0 }), value) then
    pcall(api.nvim_set_option_value, name, value, { win = 0 })
  end
end
vim.fn.setqflist({}, 'f')
vim.fn.histdel(':')
_G.notes, _G.done = {}, {}
local turn = package.loaded['minime.ui.turn']
if turn then
  for i = #turn.errors, 1, -1 do table.remove(turn.errors, i) end
end
"""


class SharedNvim:
    """One Neovim for a module's tests: ``with`` it for the module; ``editor_with`` per test."""

    def __init__(self, before: str = "", each: str = "") -> None:
        self.before = before
        self.each = each
        self.nvim: Any = None
        self._stopped = False  # the agents stopped since the last test's editor
        self._stack: contextlib.ExitStack | None = None

    def __enter__(self) -> SharedNvim:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._close()

    def _close(self) -> None:
        if self._stack is not None:
            self._stack.close()
        self._stack, self.nvim = None, None

    def _start(self) -> Any:
        self._stack = contextlib.ExitStack()
        # setup() now only to load what init() loads; each test's editor runs it again.
        self.nvim = self._stack.enter_context(start(init("nil", self.before)))
        self.nvim.exec_lua(SNAPSHOT)
        return self.nvim

    def _stop_agents(self) -> None:
        """:MiniMeStop, and wait until the host has done it: a stop it read later would end
        the next test's agent."""
        stop = self.nvim.exec_lua(STOP)
        if stop is None:
            return
        wait_for(
            lambda: self.nvim.exec_lua(STOPPED, stop["notes"]),
            10,
            message="for the host to stop the agents",
        )
        for pid in stop["pids"]:
            wait_for(lambda pid=pid: process_gone(int(pid)), 10, message="for the agent to end")
        self._stopped = True

    def _reset(self, cwd: Path, opts: Any) -> Any:
        nvim = self.nvim or self._start()
        try:
            if not self._stopped:
                self._stop_agents()
            self._stopped = False
            nvim.input("<C-\\><C-N>")
            wait_for(lambda: nvim.api.get_mode()["mode"] == "n", 5, message="for normal mode")
            nvim.exec_lua(RESET)
        except Exception:  # the last test left it unusable: a new one
            self._close()
            nvim = self._start()
        if self.each:
            nvim.exec_lua(self.each)
        options = opts if isinstance(opts, str) else lua_table(opts)
        nvim.exec_lua(f"require('minime').setup({options})")
        nvim.chdir(str(cwd))  # not :cd, which reads a space or % in the path
        return nvim

    @contextlib.contextmanager
    def editor_with(
        self, cwd: Path, opts: Any, before: str = "", *, fresh: bool = False, **kw: Any
    ) -> Iterator[Editor]:
        """What plugin_harness.editor_with gives, in the shared Neovim reset for this test;
        ``fresh`` (implied by a ``before`` of the test's own, which nothing undoes): in a
        Neovim of its own (a test of what starts, or does not)."""
        if fresh or before:
            own = "\n".join((self.before, self.each, before))
            with editor_with(cwd, opts, own, **kw) as ed:
                yield ed
            return
        nvim = self._reset(cwd, opts)
        try:
            yield Editor(nvim, cwd, **kw)
        finally:
            # The agents end with their test (its directory goes), or the next test gets a
            # new Neovim.
            try:
                self._stop_agents()
            except Exception:
                self._close()
