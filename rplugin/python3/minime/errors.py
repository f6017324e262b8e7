"""The library's exceptions, and an agent's JSON-RPC error said in its own words."""

from __future__ import annotations

import json
from typing import Any


class Error(Exception):
    """Anything that went wrong talking to the agent, said in plain words."""


class Busy(Error):
    """A turn (or a reset) was asked for while another turn runs on the same session."""

    def __init__(self, message: str = "a turn is already running on this session") -> None:
        super().__init__(message)


AUTH_REQUIRED = -32000  # ACP's "Authentication required"


class AuthRequired(Error):
    """The agent needs a login first (ACP's auth-required error); ``methods`` are its
    ``authMethods`` from ``initialize`` (each ``{id, name, description?, type?, args?, env?}``)."""

    def __init__(self, message: str, methods: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.methods = methods


def method_names(methods: list[dict[str, Any]]) -> str:
    """How messages list login methods: ``Name (id), …``."""
    return ", ".join(f"{m.get('name') or m.get('id')} ({m.get('id')})" for m in methods)


def describe(exc: BaseException) -> str:
    """An agent's JSON-RPC error in its own words: message (code): what its data says."""
    code = getattr(exc, "code", None)
    message = str(exc) or type(exc).__name__
    text = f"{message} ({code})" if code is not None else message
    detail = data_text(getattr(exc, "data", None))
    return f"{text}: {detail}" if detail else text


def data_text(data: Any) -> str:
    """``data.error`` (Go SDK), ``data.details`` (Python SDK), a string, else compact JSON."""
    if data is None or data == {} or data == "":
        return ""
    if isinstance(data, str):
        return data
    if isinstance(data, dict):
        for key in ("error", "details", "message"):
            if isinstance(data.get(key), str) and data[key]:
                return data[key]
    try:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)[:2000]
    except (TypeError, ValueError):
        return repr(data)[:2000]
