"""The host's batching of streamed events into Lua calls (rplugin/python3/minime/nvim/render.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from minime.nvim.render import FLUSH_SECONDS, Renderer


def text(s: str) -> dict[str, Any]:
    return {"kind": "text", "text": s}


def test_flushes_at_the_next_turn_then_at_most_once_per_frame_and_at_once_on_done() -> None:
    async def main() -> list[tuple[float, str, list[dict[str, Any]]]]:
        loop = asyncio.get_running_loop()
        sent: list[tuple[float, str, list[dict[str, Any]]]] = []
        r = Renderer(lambda key, batch: sent.append((loop.time(), key, batch)))
        t0 = loop.time()
        r.push("k", text("a"))
        await asyncio.sleep(0)  # one turn of the loop: a lone chunk goes out now
        assert [s[2] for s in sent] == [[text("a")]]
        for s in ("b", "c", "d"):  # a burst right after: one call, a frame after the first
            r.push("k", text(s))
        r.push("k", {"kind": "notice", "text": "n"})
        r.push("k", text("e"))
        await asyncio.sleep(FLUSH_SECONDS * 2)
        notice = {"kind": "notice", "text": "n"}
        assert [s[2] for s in sent[1:]] == [[text("bcd"), notice, text("e")]]
        assert sent[1][0] - t0 >= FLUSH_SECONDS * 0.9
        r.push("k", text("f"))  # within a frame of the last flush: waits...
        r.push("k", {"kind": "done", "stop_reason": "end_turn"})  # ...unless the turn ends
        await asyncio.sleep(0)
        assert sent[2][2] == [text("f"), {"kind": "done", "stop_reason": "end_turn"}]
        return sent

    sent = asyncio.run(main())
    assert len(sent) == 3
    assert {key for _, key, _ in sent} == {"k"}
