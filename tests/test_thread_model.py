"""The host's thread (nvim/thread.py, thread_registry.py) without Neovim: its state as its
conversation's events and its pending asks make it, and what Lua is told (once per change, not
per chunk). What a restart reopens is Lua's (lua/minime/thread_store.lua, test_threads_saved.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from minime.nvim import events
from minime.nvim.thread import PendingAsk
from minime.nvim.thread_registry import Threads


class Bridge:
    """What the registry sends Lua, recorded (the real one goes through pynvim)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def rpc(self, name: str, *args: Any) -> None:
        self.sent.append((name, list(msgspec.to_builtins(args))))


def states(bridge: Bridge) -> list[str]:
    return [args[0].get("state", "idle") for name, args in bridge.sent if name == "thread_update"]


def test_a_threads_state_follows_its_turns_and_asks_and_is_told_once_per_change() -> None:
    async def main() -> None:
        bridge = Bridge()
        threads = Threads(bridge)  # type: ignore[arg-type]
        thread = threads.get("t1-a", "/")
        assert threads.get("t1-a", "/elsewhere") is thread, "made once, by its id"
        thread.saw(events.Begin(prompt="refactor\n  the parser", cwd="/"))
        for _ in range(1000):  # a stream: nothing for Lua
            thread.saw(events.Text("chunk"))
        await asyncio.sleep(0)
        assert states(bridge) == ["running"]
        assert bridge.sent[-1][1][0]["title"] == "refactor the parser"
        thread.asks[1] = PendingAsk("question", None)
        thread.changed()
        await asyncio.sleep(0)
        assert states(bridge)[-1] == "waiting"
        assert bridge.sent[-1][1][0]["waiting"] == "question"
        del thread.asks[1]
        thread.saw(events.Done(stop_reason="stopped"))
        await asyncio.sleep(0)
        assert states(bridge) == ["running", "waiting", "cancelled"]
        thread.saw(events.Begin(prompt="again", cwd="/"))
        thread.saw(events.Done(stop_reason="error", error="boom"))
        await asyncio.sleep(0)
        assert states(bridge)[-1] == "error", "one turn of the loop: only the last state"
        thread.rename("  my   name ")
        await asyncio.sleep(0)
        assert bridge.sent[-1][1][0]["title"] == "my name"
        threads.forget(thread)
        assert bridge.sent[-1] == ("thread_update", [{"id": "t1-a", "cwd": "/", "closed": True}])
        assert threads.find("t1-a") is None

    asyncio.run(main())
