"""The ACP file system (``fs/read_text_file``, ``fs/write_text_file``) lent to the agent.

Given handlers, the client advertises ``clientCapabilities.fs`` and routes the agent's requests
to them — but only for sessions this client opened, and only for absolute paths inside the
session's cwd after resolving symlinks and ``..`` (a symlink that leads out is refused, never
followed). The handlers then see the resolved path.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import Any

from .errors import Error

Reader = Callable[[str, str, int | None, int | None], Any]
Writer = Callable[[str, str, str], Any]


class FileSystem:
    """The two handlers: read(session_id, path, line, limit) -> str, write(session_id, path,
    content) -> None; each may be sync or async."""

    def __init__(self, read: Reader, write: Writer) -> None:
        self.read = read
        self.write = write

    async def read_text(
        self, session_id: str, path: str, line: int | None, limit: int | None
    ) -> str:
        text = await _maybe_await(self.read(session_id, path, line, limit))
        if not isinstance(text, str):
            raise Error(f"the fs read handler returned {type(text).__name__}, not str")
        return text

    async def write_text(self, session_id: str, path: str, content: str) -> None:
        await _maybe_await(self.write(session_id, path, content))


def file_system(fs: Any) -> FileSystem | None:
    """``fs=`` as given to connect: None, a pair of callables, or an object with ``read`` and
    ``write`` (or ``read_text_file`` / ``write_text_file``)."""
    if fs is None:
        return None
    if isinstance(fs, tuple | list) and len(fs) == 2 and all(callable(f) for f in fs):
        return FileSystem(fs[0], fs[1])
    for read_name, write_name in (("read", "write"), ("read_text_file", "write_text_file")):
        read, write = getattr(fs, read_name, None), getattr(fs, write_name, None)
        if callable(read) and callable(write):
            return FileSystem(read, write)
    raise Error(
        "fs must be (read, write) callables or an object with read and write methods, "
        f"got {type(fs).__name__}"
    )


def inside(cwd: str, path: str) -> str:
    """The real path of ``path`` when it lies in ``cwd`` (not ``cwd`` itself, a directory);
    ValueError (saying why) otherwise."""
    if not isinstance(path, str) or not os.path.isabs(path):
        raise ValueError(f"path must be absolute, got {path!r}")
    if "\0" in path:
        raise ValueError("path contains a NUL byte")
    root = os.path.realpath(cwd)
    real = os.path.realpath(path)
    if real == root:
        raise ValueError(f"path {path!r} is the session's working directory, not a file in it")
    if not real.startswith(root.rstrip(os.sep) + os.sep):
        raise ValueError(f"path {path!r} is outside the session's working directory")
    return real


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
