"""The thread bridge (rplugin/python3/minime/nvim/bridge.py) with a real Neovim: Lua run on
pynvim's thread for the ACP loop, its answers and errors back, nothing of pynvim's
``async_call`` cost on the way (it formats the caller's stack at every call: 50-190 µs on the
path of every editor tool call and every flush; issue 34)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pynvim.api.nvim
import pytest
from minime.nvim.bridge import NvimBridge
from nvim_harness import start


def test_lua_runs_on_pynvims_thread_and_answers_the_acp_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stacks: list[Any] = []
    real = pynvim.api.nvim.format_stack
    monkeypatch.setattr(pynvim.api.nvim, "format_stack", lambda *a: stacks.append(a) or real(*a))
    walked: list[Any] = []
    real_walk = pynvim.api.nvim.walk
    monkeypatch.setattr(pynvim.api.nvim, "walk", lambda *a: walked.append(a) or real_walk(*a))
    results: dict[str, Any] = {}
    with start() as nvim:
        bridge = NvimBridge(nvim)

        async def acp_loop() -> None:
            walked_before = len(walked)
            results["sum"] = await bridge.lua_call("return 1 + ...", 41)
            nested = {"lines": ["é", "\u2028", ""], "n": [1, 2.5, True, None], "d": {"k": "v"}}
            results["nested"] = await bridge.lua_call("return ...", nested)
            bridge.lua("vim.g.minime_bridge = ...", "fired")
            results["fired"] = await bridge.lua_call("return vim.g.minime_bridge")
            try:
                await bridge.lua_call("error('boom')")
            except Exception as exc:  # the tool call's error
                results["error"] = str(exc)
            results["stacks formatted"] = len(stacks)
            results["walked"] = len(walked) - walked_before

        def acp_thread() -> None:
            try:
                asyncio.run(acp_loop())
            finally:
                nvim.async_call(nvim.stop_loop)

        def on_pynvim_thread() -> None:
            threading.Thread(target=acp_thread).start()

        nvim.run_loop(None, None, on_pynvim_thread)
    assert results["sum"] == 42
    # Plain data both ways, as it went (Lua's nil in a list ends it: vim.NIL keeps the place).
    assert results["nested"] == {"lines": ["é", "\u2028", ""], "n": [1, 2.5, True, None],
                                 "d": {"k": "v"}}  # fmt: skip
    # Nothing walked item by item in Python (pynvim's Nvim.request does, for Remote objects).
    assert results["walked"] == 0
    assert results["fired"] == "fired"
    assert "boom" in results["error"]
    assert results["stacks formatted"] == 0
