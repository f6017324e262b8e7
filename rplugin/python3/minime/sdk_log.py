"""The SDK's error records, on the library's logger, in one line.

The ACP SDK logs a message it could not handle (an update that fails its schema, a handler's
exception) with ``logging.exception`` on the root logger: for a program that configured no
logging, Python prints that whole traceback on stderr, once per hostile line an agent sends.
:func:`install` puts a filter on the root logger that takes the records logged there from the
SDK's own files (nothing else: records of other loggers never pass a logger's filters) and
says each on the ``minime`` logger instead: a warning of one line, its traceback at debug.
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger("minime")


def first_line(exc: BaseException | None) -> str:
    """An exception as one line: its type and the first line of what it says."""
    if exc is None:
        return ""
    said = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {said[0]}" if said else type(exc).__name__


class SdkRecords(logging.Filter):
    """Root-logger records from the files under ``directory`` (the SDK's): said again on the
    ``minime`` logger, and dropped from the root logger."""

    def __init__(self, directory: str) -> None:
        super().__init__()
        self.directory = directory.rstrip(os.sep) + os.sep

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.pathname.startswith(self.directory):
            return True
        exc = record.exc_info[1] if record.exc_info else None
        why = first_line(exc)
        message = record.getMessage()
        log.log(
            min(record.levelno, logging.WARNING),
            "agent connection: %s%s",
            message.splitlines()[0] if message else "",
            f": {why}" if why else "",
        )
        if record.exc_info:
            log.debug("agent connection: %s", message, exc_info=record.exc_info)
        return False


def install() -> None:
    """Once per process: the SDK's root-logger records go to the ``minime`` logger."""
    import acp

    root = logging.getLogger()
    if any(isinstance(f, SdkRecords) for f in root.filters):
        return
    root.addFilter(SdkRecords(os.path.dirname(os.path.abspath(acp.__file__))))
