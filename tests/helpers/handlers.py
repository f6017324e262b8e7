"""Tool handlers for the library tests."""

from __future__ import annotations

from typing import Any

import minime


class Recorder:
    """A handler that answers ``reply`` (or raises it) and remembers every request."""

    def __init__(self, reply: Any = "ok") -> None:
        self.reply = reply
        self.requests: list[minime.ToolRequest] = []

    def __call__(self, request: minime.ToolRequest) -> Any:
        self.requests.append(request)
        if isinstance(self.reply, BaseException):
            raise self.reply
        return self.reply
