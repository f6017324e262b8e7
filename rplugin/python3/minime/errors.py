"""The library's exceptions."""

from __future__ import annotations


class Error(Exception):
    """Anything that went wrong talking to the agent, said in plain words."""


class Busy(Error):
    """A turn (or a reset) was asked for while another turn runs on the same session."""

    def __init__(self, message: str = "a turn is already running on this session") -> None:
        super().__init__(message)
