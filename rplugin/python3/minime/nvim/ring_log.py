"""The plugin's own log, kept in memory for :MiniMeLog."""

from __future__ import annotations

import collections
import logging
import time

LOG_LINES = 2000


class RingLog(logging.Handler):
    def __init__(self, lines: collections.deque[str]) -> None:
        super().__init__(logging.INFO)
        self._lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            message += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
        self._lines.append(f"{stamp} {record.levelname.lower()}: {message}")
