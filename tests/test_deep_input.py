"""A tool_call whose rawInput nests 500 deep: shown (the depth bounded), and the turn ends.

Rendering used to recurse without bound (RecursionError in the host's ask, the turn left
"running" for ever, MiniMeTurnDone never fired); Neovim's msgpack-RPC also drops the channel
beyond about 32 levels. Deeper parts now go to Lua as JSON text.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec
from conftest import FakeMM
from minime.model import Event, ToolCall
from minime.nvim.render import MAX_DEPTH, to_lua
from plugin_harness import editor


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"a": value}
    return value


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


def shown(event: Event) -> dict[str, Any]:
    """The table Lua receives for ``event``."""
    return msgspec.to_builtins(to_lua(event))


def test_to_lua_bounds_the_depth_and_keeps_the_rest_as_json_text() -> None:
    call = ToolCall(id="c1", title="deep", kind="other", status="pending", input=nested(500))
    item = shown(Event(kind="tool_call", call=call))
    assert item["title"] == "deep"
    assert depth_of(item) <= MAX_DEPTH + 1
    cut = item["input"]
    for _ in range(MAX_DEPTH - 1):
        cut = cut["a"]
    assert cut == json.dumps(nested(500 - MAX_DEPTH + 1), separators=(",", ":"))
    deeper = ToolCall(id="c3", title="deeper", kind="other", status="pending", input=nested(5000))
    item = shown(Event(kind="tool_call", call=deeper))  # too deep even for json.dumps
    assert item["title"] == "deeper" and depth_of(item) <= MAX_DEPTH + 1
    shallow = ToolCall(id="c2", title="t", kind="other", status="pending", input=nested(3))
    assert shown(Event(kind="tool_call", call=shallow))["input"] == nested(3)


def test_the_library_gets_the_deep_input_whole(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent(mm.config(yolo=True, trace=False)) as agent:
            calls = [e async for e in agent.stream("/deep-input 500") if e.kind == "tool_call"]
            assert calls and calls[0].call is not None
            assert calls[0].call.input == nested(500)

    asyncio.run(main())


def test_a_500_deep_tool_input_ends_the_turn_and_the_float_shows_the_call(tmp_path: Path) -> None:
    with editor(tmp_path) as ed:
        done, text = ed.turn("/deep-input 500")
        assert done["stop_reason"] == "end_turn", done
        assert "deep: input" in text
        assert "deep -> done" in text
        assert ed.turn_errors() == []
        done, text = ed.turn("/say still fine")
        assert done["stop_reason"] == "end_turn"
        assert "still fine" in text
    json.dumps(done)  # the MiniMeTurnDone data crossed msgpack whole
