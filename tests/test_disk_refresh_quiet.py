"""The disk refresh after a tool result waits while the agent keeps calling the editor's tools
(each refresh `:checktime`s every buffer under the cwd on the main loop, ~40 ms at 1,000
buffers, in front of the next call's answer), and runs once the calls pause."""

from __future__ import annotations

import os
import time
from pathlib import Path

from nvim_harness import start, wait_for

# Editor tool calls every 20 ms (as a burst from the agent does), until _G.calling is false.
CALLS = """
local tools, cwd = require('minime.tools'), ...
_G.calling = true
local timer = vim.uv.new_timer()
timer:start(0, 20, vim.schedule_wrap(function()
  if not _G.calling then timer:stop() timer:close() return end
  tools.call('open_buffers', {}, cwd)
end))
"""


def test_the_refresh_waits_for_a_pause_in_the_tool_calls(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old\n")
    with start() as nvim:
        nvim.command(f"cd {tmp_path}")
        nvim.command("edit a.txt")
        refresh = "require('minime.editor.disk_refresh')"
        nvim.exec_lua(f"{refresh}.DELAY_MS = 10 {refresh}.QUIET_MS = 100")
        nvim.exec_lua(CALLS, str(tmp_path))
        time.sleep(0.05)  # the calls have begun
        path.write_text("changed by the agent\n")
        later = path.stat().st_mtime + 2  # past Vim's one-second stamp of the file
        os.utime(path, (later, later))
        nvim.exec_lua(f"{refresh}.soon(...)", str(tmp_path))
        # An observation window: while the calls go on, the buffer is left alone.
        time.sleep(0.6)
        assert nvim.current.buffer[:] == ["old"]
        nvim.exec_lua("_G.calling = false")
        wait_for(lambda: nvim.current.buffer[:] == ["changed by the agent"], 5)


# Counts the turns of the main loop (a callback rescheduling itself) while _G.ticking, and the
# turn at which each buffer was reloaded.
TICKS = """
_G.ticks, _G.ticking, _G.reloaded_at = 0, true, {}
local function tick()
  _G.ticks = _G.ticks + 1
  if _G.ticking then vim.schedule(tick) end
end
vim.schedule(tick)
vim.api.nvim_create_autocmd('FileChangedShellPost', { callback = function()
  table.insert(_G.reloaded_at, _G.ticks)
end })
"""


def test_a_refresh_of_many_buffers_lets_the_main_loop_run_between_slices(tmp_path: Path) -> None:
    """A tool call coming while the refresh runs waits for one slice of buffers, not for all:
    other work of the main loop runs between the slices."""
    paths = [tmp_path / f"f{i:03d}.txt" for i in range(200)]
    for path in paths:
        path.write_text("old\n")
    with start() as nvim:
        nvim.command(f"cd {tmp_path}")
        refresh = "require('minime.editor.disk_refresh')"
        nvim.exec_lua(f"{refresh}.DELAY_MS = 10 {refresh}.SLICE = 50")
        for path in paths:
            nvim.command(f"badd {path}")
        nvim.exec_lua("for _, b in ipairs(vim.api.nvim_list_bufs()) do vim.fn.bufload(b) end")
        for path in paths:
            path.write_text("changed by the agent\n")
            later = path.stat().st_mtime + 2  # past Vim's one-second stamp of the file
            os.utime(path, (later, later))
        nvim.exec_lua(TICKS)
        nvim.exec_lua(f"{refresh}.soon(...)", str(tmp_path))
        wait_for(lambda: len(nvim.exec_lua("return _G.reloaded_at")) == len(paths), 10)
        nvim.exec_lua("_G.ticking = false")
        at = nvim.exec_lua("return _G.reloaded_at")
        assert len(set(at)) >= 4, f"the 200 buffers were reloaded in {len(set(at))} turns: {at}"
        assert nvim.exec_lua("return vim.fn.getbufline(vim.fn.bufnr(...), 1)", str(paths[-1])) == [
            "changed by the agent"
        ]
