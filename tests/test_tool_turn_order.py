"""A client-tool call inside a turn: the editor answers the tool before it draws the updates
that announce it (mm sends the ``tool_call`` update, then the request): on Neovim's one main
loop, drawing first would hold the agent's answer back by the drawing."""

from __future__ import annotations

from pathlib import Path

from nvim_harness import REPO
from plugin_harness import agent_file, editor_with

# What reaches Neovim's main loop, in order: each editor tool's Lua call, and each batch drawn.
ORDER_LOG = """
_G.order = {}
local turn = require('minime.ui.turn')
local apply = turn.apply
turn.apply = function(key, events)
  local ids = {}
  for _, ev in ipairs(events) do
    if ev.kind == 'tool_call' then ids[#ids + 1] = ev.id end
  end
  table.insert(_G.order, { what = 'draw', ids = ids })
  return apply(key, events)
end
local tools = require('minime.tools')
local call = tools.call
tools.call = function(name, ...)
  table.insert(_G.order, { what = 'tool', name = name })
  return call(name, ...)
end
"""

# Alternating two tools: the fake mm's loop detector stops the same call repeated 6 times.
LINES = ["/tool open_buffers", '/tool read_buffer {"path": "a.py"}'] * 4
CALLS = len(LINES)


def test_tool_calls_in_a_row_are_answered_before_their_updates_are_drawn(tmp_path: Path) -> None:
    """mm sends, for each call, tool_call, in_progress, the request, then the completed update,
    and the next call right after the answer: the drawing waits for the burst to pause (the old
    code drew after every call, each drawing in front of the next call's request)."""
    (tmp_path / "a.py").write_text("x = 1\n")
    config = agent_file(tmp_path, trace=False, yolo=True)
    opts = {"mm": str(REPO / "demo" / "mm"), "config": config}
    with editor_with(tmp_path, opts, ORDER_LOG, timeout=30.0) as ed:
        ed.nvim.command("edit a.py")
        done, text = ed.turn("\n".join(LINES))
        assert done["stop_reason"] == "end_turn", done
        assert text.count("client_open_buffers -> ") + text.count("client_read_buffer -> ") == CALLS
        order = ed.lua("return _G.order")
    tool_at = [i for i, entry in enumerate(order) if entry["what"] == "tool"]
    assert len(tool_at) == CALLS, order
    for k in range(CALLS):
        call_id = f"call_{k + 1}"  # the fake mm numbers its calls from 1
        drawn_at = next(
            i for i, e in enumerate(order) if e["what"] == "draw" and call_id in e["ids"]
        )
        assert tool_at[k] < drawn_at, (call_id, order)
    # A load spike can make a gap between two calls long enough to draw in; not one per call.
    drawn_between = [e for e in order[tool_at[0] : tool_at[-1]] if e["what"] == "draw"]
    assert len(drawn_between) <= 2, order
