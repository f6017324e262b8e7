"""A real terminal UI on a test's Neovim: ``nvim --server ADDR --remote-ui`` on a pseudo-terminal,
every byte it writes to the terminal kept. What reaches a user's terminal emulator is exactly
these bytes: a title or a footer Neovim passes on as it is shows up here raw.

Usage::

    with start(init, args=("--listen", address)) as nvim, PtyUI(address) as ui:
        ...
        ui.sync(nvim)          # the screen as it is now has been written
        assert b"\\x1b]0;" not in ui.bytes()
"""

from __future__ import annotations

import fcntl
import itertools
import os
import pty
import signal
import struct
import subprocess
import termios
import threading
from types import TracebackType

from nvim_harness import nvim_binary, wait_for


class PtyUI:
    """The terminal UI of the Neovim listening at ``address``, ``rows`` × ``cols``."""

    def __init__(self, address: str, rows: int = 40, cols: int = 140) -> None:
        self.address, self.rows, self.cols = address, rows, cols
        self._data = bytearray()
        self._lock = threading.Lock()
        self._marks = itertools.count(1)
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._master = -1

    def __enter__(self) -> PtyUI:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", self.rows, self.cols, 0, 0))
        env = {k: v for k, v in os.environ.items() if k != "NVIM"}
        env["TERM"] = "xterm-256color"
        self._proc = subprocess.Popen(
            [nvim_binary(), "--server", self.address, "--remote-ui"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,  # its own group: ended with it
        )
        os.close(slave)
        self._master = master
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:  # the UI is gone (EIO)
                return
            if not chunk:
                return
            with self._lock:
                self._data += chunk

    def bytes(self) -> bytes:
        """Everything the UI has written to the terminal so far."""
        with self._lock:
            return bytes(self._data)

    def sync(self, nvim: object, timeout: float = 20.0) -> None:
        """Redraw, then wait until the terminal has received the screen: a mark echoed after the
        redraw arrives after everything drawn before it."""
        wait_for(lambda: nvim.api.list_uis(), timeout, message="for the UI to attach")  # type: ignore[attr-defined]
        mark = f"ptysync{next(self._marks)}"
        nvim.command("redraw!")  # type: ignore[attr-defined]
        nvim.api.echo([[mark]], False, {})  # type: ignore[attr-defined]
        nvim.command("redraw")  # type: ignore[attr-defined]
        wait_for(lambda: mark.encode() in self.bytes(), timeout, message=f"for {mark} on the pty")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        if self._master >= 0:
            os.close(self._master)
        if self._reader is not None:
            self._reader.join(10)
