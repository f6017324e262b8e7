"""The `:UpdateRemotePlugins` route: the same Host behind Neovim's shared python3 host.

Only one function is registered; the user commands are defined by the Lua layer in both
routes, so they are never defined twice.
"""

from __future__ import annotations

from typing import Any

import pynvim

from .host import Host


@pynvim.plugin
class MiniMePlugin:
    def __init__(self, nvim: Any) -> None:
        self.nvim = nvim
        self.host: Host | None = None

    @pynvim.function("MiniMeNotify", sync=False)
    def notify(self, args: list[Any]) -> None:
        if self.host is None:
            self.host = Host(self.nvim)
        if args:
            self.host.dispatch(args[0], args[1] if len(args) > 1 else {})

    @pynvim.shutdown_hook
    def shutdown(self) -> None:
        if self.host is not None:
            self.host.shutdown()
