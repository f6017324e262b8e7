"""Plain-worded checks of what a program passes to ``start``/``connect``, before any spawn.

A wrong type deep inside (``os.fspath(123)``) would surface as a bare TypeError; the library
promises :class:`minime.Error` with a sentence instead.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .errors import Error


def _type(value: Any) -> str:
    return type(value).__name__


def _path(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str | os.PathLike):
        raise Error(f"{name} must be a path (str or os.PathLike), got {_type(value)}")


def _function(name: str, value: Any) -> None:
    if value is not None and not callable(value):
        raise Error(f"{name} must be a function, got {_type(value)}")


def _seconds(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise Error(f"{name} must be a positive number of seconds, got {value!r}")


def check_connect_arguments(
    *,
    config: Any,
    cwd: Any,
    mm: Any,
    tools: Any,
    discovery: Any,
    on_permission: Any,
    on_stderr: Any,
    command: Any,
    env: Any,
    ready_timeout: Any,
    cancel_timeout: Any,
) -> None:
    _path("config", config)
    _path("cwd", cwd)
    if mm is not None and not isinstance(mm, str):
        raise Error(f"mm must be a str (the agent binary), got {_type(mm)}")
    if not isinstance(discovery, str):
        raise Error(f'discovery must be "meta" or "request", got {discovery!r}')
    if not callable(tools) and (isinstance(tools, str | bytes | Mapping) or not _iterable(tools)):
        raise Error(f"tools must be a list of minime.Tool or a function, got {_type(tools)}")
    _function("on_permission", on_permission)
    _function("on_stderr", on_stderr)
    if command is not None and (
        isinstance(command, str | bytes)
        or not _iterable(command)
        or not all(isinstance(part, str) for part in command)
    ):
        raise Error("command must be a list of strings, e.g. ['mm', '-acp']")
    if env is not None and (
        not isinstance(env, Mapping)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
    ):
        raise Error("env must be a dict of str to str")
    _seconds("ready_timeout", ready_timeout)
    _seconds("cancel_timeout", cancel_timeout)


def _iterable(value: Any) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True
