"""A rescue for a test that may freeze Neovim (a read of a FIFO): after a bound, the FIFO is
opened for writing and closed, so the blocked reader gets EOF and the test can fail instead of
hanging. Used by test_editor_tools_attacks.py and test_review_attacks.py."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any


class Watchdog:
    """After `seconds`, runs `rescue` (it unblocks a frozen Neovim) and remembers it had to."""

    def __init__(self, seconds: float, rescue: Any) -> None:
        self.fired = False
        self._stop = threading.Event()

        def watch() -> None:
            if not self._stop.wait(seconds):
                self.fired = True
                rescue()

        self._thread = threading.Thread(target=watch, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def unblock_fifo(pipe: Path) -> None:
    """Open the FIFO `pipe` for writing and close it: a reader blocked on it gets EOF."""
    with contextlib.suppress(OSError):  # ENXIO: no reader, so nothing is blocked
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
