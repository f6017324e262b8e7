"""Plain-worded checks of what a program passes to ``start``/``connect``, before any spawn,
and the command line they make of it.

A wrong type deep inside (``os.fspath(123)``) would surface as a bare TypeError; the library
promises :class:`minime.Error` with a sentence instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
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
    tools_via: Any = "client",
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
    if tools_via not in ("client", "mcp"):
        raise Error(f'tools_via must be "client" or "mcp", got {tools_via!r}')


def _iterable(value: Any) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True


def resolve_binary(mm: str | None) -> str:
    """``mm`` argument, else ``$MM_BIN``, else ``mm`` on PATH."""
    wanted = mm or os.environ.get("MM_BIN") or "mm"
    if os.sep in wanted:
        path = os.path.abspath(os.path.expanduser(wanted))
        if not os.path.isfile(path):
            raise Error(f"agent binary not found: {path}")
        if not os.access(path, os.X_OK):
            raise Error(f"agent binary is not executable: {path}")
        return path
    found = shutil.which(wanted)
    if found is None:
        raise Error(f"agent binary not found: {wanted!r} is not on PATH (set MM_BIN or pass mm=)")
    return found


def working_directory(cwd: str | os.PathLike[str] | None) -> str:
    """The absolute directory the agent runs in (default: this process's)."""
    workdir = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
    if not os.path.isdir(workdir):
        raise Error(f"working directory not found: {workdir}")
    return workdir


def agent_argv(
    config: str | os.PathLike[str] | None, mm: str | None, command: Sequence[str] | None
) -> list[str]:
    """``command`` with its binary resolved, else ``<mm> -acp -config <absolute agent file>``."""
    if command:
        command = list(command)
        return [resolve_binary(command[0]), *command[1:]]
    if config is None:
        raise Error("an agent file is required (config=...)")
    config_path = os.path.abspath(os.path.expanduser(os.fspath(config)))
    if not os.path.isfile(config_path):
        raise Error(f"agent file not found: {config_path}")
    return [resolve_binary(mm), "-acp", "-config", config_path]
