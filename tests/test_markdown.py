"""Markdown in the turn float as the user reads it: highlighted and concealed block by block,
fences in their language, while a turn streams and after; thinking dimmed in 256 colours too.
A real headless Neovim; the plugin end to end with the fake mm where it matters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nvim_harness
import pytest
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor_with

KEY = "/tmp/minime-md"

# Extmarks of the markdown namespace at (row, col): their highlight groups and conceal texts.
MARKS_AT = """
local buf, row, col = ...
local ns = require('minime.ui.turn.markdown').ns
local out = { groups = {}, conceal = {} }
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
  local r, c, d = m[2], m[3], m[4]
  local er, ec = d.end_row or r, d.end_col or c
  local inside = (row > r or (row == r and col >= c)) and (row < er or (row == er and col < ec))
  if inside then
    if d.hl_group then out.groups[#out.groups + 1] = d.hl_group end
    if d.conceal then out.conceal[#out.conceal + 1] = d.conceal end
  end
end
return out
"""

ANSWER = "Some **bold** words.\n\n```lua\nlocal x = 1\n```\n\nThe end."


@pytest.fixture
def nvim() -> Iterator[Any]:
    with nvim_harness.start("") as n:
        yield n
        assert n.exec_lua("return require('minime.ui.turn').errors") == []
        assert n.exec_lua("return require('minime.ui.turn.markdown').errors") == []


def apply(nvim: Any, *events: dict[str, Any]) -> None:
    nvim.exec_lua("require('minime.ui.turn').apply(...)", KEY, list(events))


def buf_of(nvim: Any, key: str = KEY) -> int:
    return nvim.exec_lua("return require('minime.ui.turn').get(...).buf", key)


def row_of(nvim: Any, buf: int, line: str) -> int:
    lines = nvim.exec_lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)
    return lines.index(line)


def marks_at(nvim: Any, buf: int, row: int, col: int) -> dict[str, list[str]]:
    return nvim.exec_lua(MARKS_AT, buf, row, col)


def wait_marked(nvim: Any, buf: int, row: int, col: int, group: str) -> dict[str, list[str]]:
    return wait_for(
        lambda: (m := marks_at(nvim, buf, row, col)) and group in m["groups"] and m,
        10,
        message=f"for {group} at {row}:{col}",
    )


def test_a_finished_answer_reads_as_markdown_with_the_fence_in_its_language(nvim: Any) -> None:
    apply(nvim, {"kind": "begin", "prompt": "q", "cwd": KEY}, {"kind": "text", "text": ANSWER})
    apply(nvim, {"kind": "done", "stop_reason": "end_turn"})
    buf = buf_of(nvim)
    win = nvim.exec_lua("return require('minime.ui.turn').get(...).win", KEY)
    assert nvim.exec_lua("return vim.wo[...].conceallevel", win) == 2
    assert nvim.exec_lua("return vim.wo[...].concealcursor", win) == "nc"
    code = row_of(nvim, buf, "local x = 1")
    assert "@keyword.lua" in wait_marked(nvim, buf, code, 0, "@keyword.lua")["groups"]
    bold = row_of(nvim, buf, "Some **bold** words.")
    assert marks_at(nvim, buf, bold, 5)["conceal"] == [""], "the ** is hidden"
    assert "@markup.strong.markdown_inline" in marks_at(nvim, buf, bold, 8)["groups"]
    assert marks_at(nvim, buf, bold, 8)["conceal"] == [], "the word is not"
    fence = row_of(nvim, buf, "```lua")
    assert marks_at(nvim, buf, fence, 0)["conceal"] == [""], "the backticks are hidden"
    # What the user reads: the line as drawn, markers concealed.
    nvim.exec_lua("vim.api.nvim_set_current_win(...) vim.cmd('normal! gg') vim.cmd.redraw()", win)
    drawn = nvim.exec_lua(
        """
        local win, row = ...
        local pos = vim.fn.screenpos(win, row + 1, 1)
        local s = {}
        for c = pos.col, pos.col + 14 do s[#s + 1] = vim.fn.screenstring(pos.row, c) end
        return table.concat(s)
        """,
        win,
        bold,
    )
    assert drawn.startswith("Some bold words"), drawn


def test_complete_blocks_are_highlighted_while_the_turn_streams(nvim: Any) -> None:
    apply(nvim, {"kind": "begin", "prompt": "q", "cwd": KEY})
    apply(nvim, {"kind": "text", "text": "First **one**.\n\n```lua\nreturn 1\n``"})
    buf = buf_of(nvim)
    first = row_of(nvim, buf, "First **one**.")
    wait_marked(nvim, buf, first, 8, "@markup.strong.markdown_inline")
    code = row_of(nvim, buf, "return 1")
    assert marks_at(nvim, buf, code, 0)["groups"] == [], "the fence is not closed yet"
    apply(nvim, {"kind": "text", "text": "`\nstill **going"})
    wait_marked(nvim, buf, code, 0, "@keyword.return.lua")
    assert nvim.exec_lua("return require('minime.ui.turn').get(...).running", KEY)
    last = row_of(nvim, buf, "still **going")
    assert marks_at(nvim, buf, last, 0) == {"groups": [], "conceal": []}, "still growing"
    apply(nvim, {"kind": "text", "text": "**"}, {"kind": "done", "stop_reason": "end_turn"})
    wait_marked(nvim, buf, last, 8, "@markup.strong.markdown_inline")


def test_earlier_turns_stay_highlighted_and_a_reset_clears_them(nvim: Any) -> None:
    """The conversation keeps earlier turns (issue 10): their marks stay with them; a reset
    empties the conversation and its marks go."""
    apply(nvim, {"kind": "begin", "prompt": "q", "cwd": KEY}, {"kind": "text", "text": ANSWER})
    apply(nvim, {"kind": "done", "stop_reason": "end_turn"})
    buf = buf_of(nvim)
    wait_marked(nvim, buf, row_of(nvim, buf, "local x = 1"), 0, "@keyword.lua")
    apply(nvim, {"kind": "begin", "prompt": "again", "cwd": KEY}, {"kind": "text", "text": "x"})
    assert buf_of(nvim) == buf
    wait_marked(nvim, buf, row_of(nvim, buf, "local x = 1"), 0, "@keyword.lua")
    apply(nvim, {"kind": "reset"})
    buf = buf_of(nvim)
    ns = "require('minime.ui.turn.markdown').ns"
    assert nvim.exec_lua(f"return #vim.api.nvim_buf_get_extmarks(..., {ns}, 0, -1, {{}})", buf) == 0


# Each markdown parse kept in a weak table (what the collector has not freed yet). The probes
# poll slowly: their own garbage (a chunk each) must not be what runs the collector.
TRACK_PARSERS = """
_G.parsers, _G.parses = setmetatable({}, { __mode = 'k' }), 0
local get = vim.treesitter.get_string_parser
vim.treesitter.get_string_parser = function(...)
  local parser = get(...)
  _G.parsers[parser], _G.parses = true, _G.parses + 1
  return parser
end
function _G.live_parsers()
  local n = 0
  for _ in pairs(_G.parsers) do n = n + 1 end
  return n
end
"""


def test_a_long_answers_parse_is_given_back_while_the_editor_idles(nvim: Any) -> None:
    """A parse holds ~150 bytes of C memory per byte of its block (a 300-line paragraph: ~680
    KiB) that Lua's collector does not count: told only of a one-line block's 24 KiB, it left
    them for a later cycle, other allocations settled between, and a day of such answers grew
    Neovim 1.17-1.19x (bench/conversation_memory.py tool). Owed in proportion and paid in
    small steps while the editor idles, no collectgarbage() called: the parser goes."""
    nvim.exec_lua(TRACK_PARSERS)
    paragraph = "\n".join(f"output line {i} of a long answer" for i in range(300))
    text = paragraph + "\n\nSome **bold** words."
    apply(nvim, {"kind": "begin", "prompt": "q", "cwd": KEY}, {"kind": "text", "text": text})
    apply(nvim, {"kind": "done", "stop_reason": "end_turn"})
    buf = buf_of(nvim)
    ns = nvim.exec_lua("return require('minime.ui.turn.markdown').ns")
    wait_for(  # the API alone while waiting: no Lua runs but the plugin's
        lambda: nvim.api.buf_get_extmarks(buf, ns, 0, -1, {}), 10, interval=0.05
    )
    assert nvim.exec_lua("return _G.parses") >= 2, "the answer's blocks were parsed"
    wait_for(
        lambda: nvim.exec_lua("return _G.live_parsers()") == 0,
        5,
        interval=0.05,
        message="for the parses to be collected",
    )


def test_without_a_markdown_parser_the_answer_stays_plain_and_whole() -> None:
    no_parser = "vim.treesitter.language.add = function() return nil, 'no parser' end"
    with nvim_harness.start(no_parser) as nvim:
        apply(nvim, {"kind": "begin", "prompt": "q", "cwd": KEY}, {"kind": "text", "text": ANSWER})
        apply(nvim, {"kind": "done", "stop_reason": "end_turn"})
        buf = buf_of(nvim)
        lines = nvim.exec_lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)
        assert "\n".join(lines).endswith(ANSWER + "\n\n■ done (end_turn)")
        # What the batches scheduled has run once a callback scheduled after them has.
        nvim.exec_lua("vim.schedule(function() _G.flushed = true end)")
        wait_for(lambda: nvim.exec_lua("return _G.flushed"), 10, message="for the schedule")
        ns = "require('minime.ui.turn.markdown').ns"
        marks = nvim.exec_lua(f"return #vim.api.nvim_buf_get_extmarks(..., {ns}, 0, -1, {{}})", buf)
        assert marks == 0
        assert nvim.exec_lua("return require('minime.ui.turn').errors") == []
        assert nvim.exec_lua("return require('minime.ui.turn.markdown').errors") == []


def test_thinking_is_dimmed_in_a_256_colour_terminal() -> None:
    with nvim_harness.start("vim.o.termguicolors = false") as nvim:
        nvim.exec_lua("require('minime.ui.window')")
        hl = nvim.exec_lua("return vim.api.nvim_get_hl(0, { name = 'MiniMeThinking' })")
        normal = nvim.exec_lua("return vim.api.nvim_get_hl(0, { name = 'Normal' })")
        assert hl.get("ctermfg") is not None and hl.get("ctermfg") != normal.get("ctermfg")
        nvim.command("colorscheme default")
        hl = nvim.exec_lua("return vim.api.nvim_get_hl(0, { name = 'MiniMeThinking' })")
        assert hl.get("ctermfg") is not None, "kept across a colorscheme change"


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[Editor]:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path, trace=False)}
    with editor_with(tmp_path, opts) as ed:
        yield ed


def test_a_turn_from_the_agent_has_conceal_and_a_lua_fence(editor: Editor) -> None:
    done, _ = editor.turn(
        "/say Some **bold** words.\n/say ```lua\n/say local x = 1\n/say ```\n/say The end."
    )
    assert done["stop_reason"] == "end_turn"
    st = editor.lua("return require('minime.ui.turn').get(...)", editor.cwd)
    assert editor.lua("return vim.wo[...].conceallevel", st["win"]) == 2
    nvim, buf = editor.nvim, st["buf"]
    wait_marked(nvim, buf, row_of(nvim, buf, "local x = 1"), 0, "@keyword.lua")
    bold = row_of(nvim, buf, "Some **bold** words.")
    assert marks_at(nvim, buf, bold, 5)["conceal"] == [""]
