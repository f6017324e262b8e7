"""A long tool result, as mm reports it (issue 34): mm cuts every result to the agent file's
``maxOutput`` and sends it whole in the call's completed ``tool_call_update``. With a large
``maxOutput`` that is hundreds of KB a call, and whatever crosses to Neovim is split and drawn
on the main loop that answers the next tool call. The host sends only what the float shows
(its first 2,000 lines, each line past 12,000 bytes clipped) and the count of the lines left
out; the float shows what it always did."""

from __future__ import annotations

from pathlib import Path

from nvim_harness import REPO
from plugin_harness import agent_file, editor_with

# Every batch the float draws: the longest output it carried (characters and lines).
WIRE_LOG = """
_G.crossed = { chars = 0, lines = 0 }
local turn = require('minime.ui.turn')
local apply = turn.apply
turn.apply = function(key, events)
  for _, ev in ipairs(events) do
    if ev.kind == 'tool_result' and type(ev.output) == 'string' then
      local _, newlines = ev.output:gsub('\\n', '')
      _G.crossed.chars = math.max(_G.crossed.chars, #ev.output)
      _G.crossed.lines = math.max(_G.crossed.lines, newlines + 1)
    end
  end
  return apply(key, events)
end
"""

# Two tools of the user's: 5,000 short lines, and one line of 300,000 characters.
TOOLS = """{
  { name = 'many', handler = function()
      local t = {} for i = 1, 5000 do t[i] = 'line ' .. i end return table.concat(t, '\\n')
    end },
  { name = 'wide', handler = function() return string.rep('w', 300000) .. '!' end },
}"""

BODY = "    "  # a tool's output lines, indented under its line


def test_a_long_result_crosses_cut_to_what_the_float_shows(tmp_path: Path) -> None:
    config = agent_file(tmp_path, trace=False, yolo=True, maxOutput=400000)
    opts = f"{{ mm = [==[{REPO / 'demo' / 'mm'}]==], config = [==[{config}]==], tools = {TOOLS} }}"
    with editor_with(tmp_path, opts, WIRE_LOG, timeout=30.0) as ed:
        done, _ = ed.turn("/tool many\n/tool wide")
        assert done["stop_reason"] == "end_turn", done
        crossed = ed.lua("return _G.crossed")
        shown = ed.conversation_lines()
    # What crossed: 2,000 lines at most, a line at most one character past 12,000 bytes
    # (the old code sent all 5,000 lines, and the 300,001 characters).
    assert crossed["lines"] <= 2000, crossed
    assert crossed["chars"] <= 300_000 // 5, crossed
    # What the user sees, as before: the first 2,000 lines, then how many more there were.
    head = shown.index(BODY + "line 1")
    assert shown[head : head + 2000] == [BODY + f"line {i}" for i in range(1, 2001)]
    assert shown[head + 2000] == BODY + "… 3000 more lines"
    # The one wide line: clipped at 12,000 bytes with "…".
    wide = next(line for line in shown if line.startswith(BODY + "www"))
    assert wide == BODY + "w" * 12000 + "…"


def test_the_host_cuts_to_the_bounds_the_float_draws() -> None:
    """The host's cut (nvim/render.py) and the float's (ui/turn/tools.lua, text.lua) are one
    bound stated twice, in two languages: kept equal here."""
    import re

    from minime.nvim import render

    tools = (REPO / "lua/minime/ui/turn/tools.lua").read_text()
    text = (REPO / "lua/minime/ui/turn/text.lua").read_text()
    lines = re.search(r"^local MAX_OUTPUT_LINES = (\d+)$", tools, re.M)
    clip = re.search(r"^local CLIP_BYTES = (\d+)$", text, re.M)
    assert lines and clip
    assert (int(lines[1]), int(clip[1])) == (render.SHOWN_LINES, render.SHOWN_LINE_BYTES)
