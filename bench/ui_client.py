#!/usr/bin/env python3
"""A UI for the benchmarks: attaches to a Neovim socket, draws nothing, stamps every flush.

    python bench/ui_client.py SOCKET OUT

Runs in its own process (a UI in the bench's process would hold its GIL while decoding redraw
batches and slow the probes for reasons of its own). ``nvim_ui_attach(120, 40,
ext_linegrid=True)`` makes Neovim redraw as it does for a terminal: the float's text laid out,
highlighted, sent. Each ``flush`` (a screen update complete) appends ``time.monotonic_ns()``
(CLOCK_MONOTONIC, the clock of ``vim.uv.hrtime()``) to OUT, one per line; messages
(``ext_messages``) go to OUT.messages. Stops when Neovim goes or stdin closes.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import pynvim


def main() -> None:
    socket, out = sys.argv[1], sys.argv[2]
    nvim = pynvim.attach("socket", path=socket)
    stamps = open(out, "w", buffering=1, encoding="ascii")  # noqa: SIM115 (lives as long as we do)

    messages = open(out + ".messages", "w", buffering=1, encoding="utf-8")  # noqa: SIM115

    def on_notification(name: str, args: list[Any]) -> None:
        if name != "redraw":
            return
        for batch in args:
            if batch and batch[0] == "flush":
                stamps.write(f"{time.monotonic_ns()}\n")
            elif batch and batch[0] == "msg_show":
                for _kind, content, *_ in batch[1:]:
                    messages.write("".join(str(chunk[1]) for chunk in content) + "\n")

    def on_stdin_closed() -> None:
        sys.stdin.read()
        nvim.async_call(nvim.stop_loop)

    threading.Thread(target=on_stdin_closed, daemon=True).start()
    # ext_messages: messages come as events, as with noice.nvim; a message taller than
    # 'cmdheight' cannot stop Neovim at a hit-enter prompt no one answers.
    nvim.ui_attach(120, 40, ext_linegrid=True, ext_messages=True, rgb=True)
    stamps.write("attached\n")
    try:
        nvim.run_loop(None, on_notification)
    finally:
        stamps.close()
        messages.close()


if __name__ == "__main__":
    main()
