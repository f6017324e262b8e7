"""The C heap a day of turns leaves free goes back to the system once the editor idles after a
turn (minime.heap: glibc's malloc_trim through LuaJIT's FFI), and where there is no
malloc_trim (no FFI, musl) turns end as before and nothing is said. A real headless Neovim,
its VmRSS read from /proc as `top` shows it."""

from __future__ import annotations

from typing import Any

import nvim_harness
import pytest
from nvim_harness import wait_for

KEY = "/tmp/minime-heap"

# Leave ~6 MiB of free chunks inside malloc's heap, as churn does: 200 blocks of 32 KiB
# (below the mmap threshold: from the heap), written so that they are resident, freed between
# blocks kept live, so that free() can neither merge them nor give them back by shrinking the
# heap's top.
FRAGMENT = """
local ffi = require('ffi')
pcall(ffi.cdef, [[void *malloc(size_t); void free(void *); void *memset(void *, int, size_t);]])
local freed = {}
_G.kept = {}
for i = 1, 200 do
  freed[i] = ffi.C.malloc(32768)
  _G.kept[i] = ffi.C.malloc(32768)
  ffi.C.memset(freed[i], 1, 32768)
end
for i = 1, 200 do ffi.C.free(freed[i]) end
"""

TURN = [
    {"kind": "begin", "prompt": "q", "cwd": KEY},
    {"kind": "text", "text": "the answer"},
    {"kind": "done", "stop_reason": "end_turn"},
]


def rss_kib(nvim: Any) -> int:
    pid = nvim.exec_lua("return vim.fn.getpid()")
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def turn(nvim: Any) -> None:
    nvim.exec_lua("require('minime.ui.turn').apply(...)", KEY, TURN)


def test_the_heap_a_day_of_turns_left_free_goes_back_once_the_editor_idles() -> None:
    with nvim_harness.start("require('minime.heap').IDLE_MS = 50") as nvim:
        turn(nvim)  # the plugin's own first allocations are made, and their trim done
        trims = "return require('minime.heap').trims"
        wait_for(lambda: nvim.exec_lua(trims) == 1, 10, message="for the first trim")
        nvim.exec_lua(FRAGMENT)
        fragmented = rss_kib(nvim)
        turn(nvim)
        wait_for(
            lambda: rss_kib(nvim) < fragmented - 4096,
            10,
            interval=0.05,
            message=f"for Neovim's RSS to fall below {fragmented - 4096} KiB",
        )
        assert nvim.exec_lua("return require('minime.ui.turn').errors") == []


def test_turns_ending_back_to_back_still_trim_within_max_ms() -> None:
    """Queued asks end one after another with no pause between: the trim waits for none."""
    with nvim_harness.start(
        "local h = require('minime.heap') h.IDLE_MS, h.MAX_MS = 5000, 200"
    ) as nvim:
        trims = "return require('minime.heap').trims"
        wait_for(
            lambda: (turn(nvim), nvim.exec_lua(trims))[1] >= 1,  # a turn ends every ~20 ms
            3,
            interval=0.02,
            message="for a trim while turns keep ending",
        )


NO_FFI = """
package.loaded.ffi = nil
package.preload.ffi = function() error('module ffi not found') end
"""
# musl (Alpine): LuaJIT's FFI is there, malloc_trim is not.
NO_SYMBOL = """
local ffi = require('ffi')
package.loaded.ffi = setmetatable({}, { __index = function(_, k)
  if k == 'C' then
    return setmetatable({}, { __index = function(_, name)
      error('undefined symbol: ' .. name)
    end })
  end
  return ffi[k]
end })
"""


@pytest.mark.parametrize("init", [NO_FFI, NO_SYMBOL], ids=["no_ffi", "musl"])
def test_without_malloc_trim_turns_end_as_before_and_nothing_is_said(init: str) -> None:
    with nvim_harness.start(init + "\nrequire('minime.heap').IDLE_MS = 0") as nvim:
        nvim.exec_lua(
            "vim.api.nvim_create_autocmd('User', { pattern = 'MiniMeTurnDone',"
            " callback = function() _G.ends = (_G.ends or 0) + 1 end })"
        )
        turn(nvim)
        turn(nvim)
        wait_for(lambda: nvim.exec_lua("return _G.ends") == 2, 10, message="for both ends")
        # What the ends scheduled has run once a callback scheduled after them has.
        nvim.exec_lua("vim.defer_fn(function() _G.flushed = true end, 50)")
        wait_for(lambda: nvim.exec_lua("return _G.flushed"), 10, message="for the timer")
        assert nvim.exec_lua("return require('minime.heap').trims") == 0
        assert nvim.exec_lua("return require('minime.ui.turn').errors") == []
        assert nvim.api.get_vvar("errmsg") == ""
        assert (
            nvim.exec_lua("return vim.api.nvim_exec2('messages', { output = true }).output") == ""
        )
        buf = nvim.exec_lua("return require('minime.ui.turn').get(...).buf", KEY)
        lines = nvim.api.buf_get_lines(buf, 0, -1, False)
        assert lines.count("the answer") == 2
