"""At 80x24 with a UI attached (issue 17): the first `hello` of the demo raises no hit-enter
prompt (every message is one line that fits the command line; :MiniMeLog has it whole), and
the conversation float's title keeps its state (first). A real Neovim with a UI attached (the
test's pynvim session), the offline demo agent found as a user without mm finds it."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import nvim_harness
import pytest
from nvim_harness import REPO, wait_for

INIT = """
_G.notes, _G.done = {}, 0
local real = vim.notify
vim.notify = function(msg, level, o)
  table.insert(_G.notes, { msg, vim.fn.strdisplaywidth(msg), vim.v.echospace })
  return real(msg, level, o)
end
vim.api.nvim_create_autocmd('User', { pattern = 'MiniMeTurnDone', callback = function()
  _G.done = _G.done + 1
end })
require('minime').setup({ window = { layout = vim.g.layout } })
"""

# The float's title, or the panel's ('winbar', as " <text> " like the float's).
TITLE = """
local _, win = require('minime.ui.turn').shown()
if not win then return '' end
if vim.api.nvim_win_get_config(win).relative == '' then
  return ' ' .. vim.wo[win].winbar:gsub('^%%#MiniMeTitle#', ''):gsub('%%%%', '%%') .. ' '
end
local title = vim.api.nvim_win_get_config(win).title
return type(title) == 'table' and title[1][1] or (title or '')
"""


@pytest.mark.parametrize("layout", ["float", "split"])
def test_the_first_hello_at_80x24_is_no_hit_enter_prompt(tmp_path: Path, layout: str) -> None:
    project = tmp_path / "a-rather-long-project-directory-name" / "with-a-subdirectory"
    project.mkdir(parents=True)
    shutil.copy(REPO / "demo" / "agent.yaml", project / "agent.yaml")
    # No mm anywhere: asks go to the offline demo agent, as in ./scripts/demo.
    init = f"vim.g.layout = '{layout}'\n" + INIT
    with nvim_harness.start(init, env={"PATH": "/usr/bin:/bin", "MM_BIN": ""}) as nvim:
        nvim.command(f"cd {project}")
        nvim.api.ui_attach(80, 24, {"ext_linegrid": True})
        nvim.command("MiniMeAsk hello")
        prompts: list[str] = []
        titles: set[str] = set()
        deadline = time.monotonic() + 60
        while nvim.exec_lua("return _G.done") == 0:
            assert time.monotonic() < deadline, "the turn did not end"
            mode = nvim.api.get_mode()
            if mode["mode"] in ("r", "rm") or mode["blocking"]:
                prompts.append(mode["mode"])  # only fast calls answer during a prompt
                nvim.input("<CR>")
                continue
            titles.add(nvim.exec_lua(TITLE))
            win = nvim.exec_lua("return require('minime.ui.permission').win()")
            if win and nvim.exec_lua("return require('minime.ui.permission').live()"):
                nvim.exec_lua("vim.api.nvim_set_current_win(...)", win)
                nvim.input("1")
            time.sleep(0.02)  # a poll interval, not a synchronisation: the loop waits on done
        assert prompts == [], (prompts, nvim.exec_lua("return _G.notes"))
        notes = nvim.exec_lua("return _G.notes")
        assert notes, "the demo says it answers"
        for msg, width, space in notes:
            assert "\n" not in msg and width <= space, (msg, width, space)
        final = wait_for(lambda: nvim.exec_lua(TITLE), 5, message="the float's title")
        relative = nvim.exec_lua(
            "local _, w = require('minime.ui.turn').shown()"
            " return vim.api.nvim_win_get_config(w).relative"
        )
        assert (relative == "") == (layout == "split"), relative
        assert final.startswith(" done · "), final
        assert any(t.startswith(" running · ") for t in titles), titles
        # On the screen: the float's top border row (the panel's winbar) shows the state.
        top = nvim.exec_lua(
            "vim.cmd('redraw!') local t = {} for c = 1, vim.o.columns do"
            " t[#t + 1] = vim.fn.screenstring(1, c) end return table.concat(t)"
        )
        assert "done · " in top, top
        nvim.command("MiniMeLog")
        log = wait_for(
            lambda: (
                "\n".join(nvim.exec_lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
                if nvim.exec_lua("return vim.b.minime") == "log"
                else None
            ),
            10,
            message="the :MiniMeLog buffer",
        )
        assert "# messages" in log
        assert all(m.rstrip("…") in log for m, _, _ in notes)
