"""`notify = { os = true }` (:h minime-notify-os): the bytes a terminal receives.

Neovim runs with its real TUI on a pseudo-terminal (the test reads the master side: every byte
the terminal would get) and a socket the test drives it through; the fake mm is the agent. The
terminal's own focus reports (`ESC [ O`, `ESC [ I`) are written to the pty, as a terminal
sends them. Asserted: an OSC 777 notification when a thread off screen ends its turn or starts
waiting for permission while Neovim has no focus, none with the focus, the agent's control
characters never inside it, and tmux's DCS passthrough around it under $TMUX.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import tempfile
import termios
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynvim
from nvim_harness import PIN_FLOAT, REPO, nvim_binary, wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, init

OSC = re.compile(rb"\x1b\]777;notify;minime;(.*?)\x1b\\", re.S)
TMUX_OSC = re.compile(rb"\x1bPtmux;\x1b\x1b\]777;notify;minime;(.*?)\x1b\x1b\\\x1b\\", re.S)


class Terminal:
    """What the pty's master side received, read by a thread as it comes."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.data = bytearray()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self.data.extend(chunk)

    def received(self) -> bytes:
        with self._lock:
            return bytes(self.data)

    def send(self, keys: bytes) -> None:
        os.write(self.master, keys)


@contextlib.contextmanager
def tui(cwd: Path, opts: dict[str, Any], env: dict[str, str]) -> Iterator[tuple[Editor, Terminal]]:
    """Neovim with its TUI on a pty (120x40), set up with ``opts``; an Editor over its socket."""
    with tempfile.TemporaryDirectory(prefix="minime-tui-") as tmp:
        child = dict(os.environ)
        child.pop("NVIM", None)
        child.pop("TMUX", None)
        for name in ("config", "data", "state", "cache"):
            child[f"XDG_{name.upper()}_HOME"] = os.path.join(tmp, name)
            os.makedirs(child[f"XDG_{name.upper()}_HOME"])
        child.update({"TERM": "xterm-256color", **env})
        init_lua = Path(tmp, "init.lua")
        init_lua.write_text(
            f"vim.opt.runtimepath:prepend([==[{REPO}]==])\n{PIN_FLOAT}\n{init(opts)}\n"
        )
        sock = os.path.join(tmp, "nvim.sock")
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        argv = [nvim_binary(), "-u", str(init_lua), "-i", "NONE", "--listen", sock]
        proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=child,
            start_new_session=True,
        )  # fmt: skip
        os.close(slave)
        terminal = Terminal(master)
        try:
            wait_for(lambda: os.path.exists(sock), 20, message="for Neovim's socket")
            nvim = pynvim.attach("socket", path=sock)
            yield Editor(nvim, cwd, timeout=30.0), terminal
            with contextlib.suppress(Exception):
                nvim.command("qa!")
            with contextlib.suppress(Exception):
                nvim.close()
        finally:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            os.close(master)


def focus(ed: Editor, terminal: Terminal, focused: bool) -> None:
    """The terminal reports the focus gained or lost; Neovim has taken it in."""
    terminal.send(b"\x1b[I" if focused else b"\x1b[O")
    wait_for(
        lambda: ed.lua("return require('minime.ui.os_notify').focused") == focused,
        10,
        message="for Neovim to take in the focus report",
    )


def mark(ed: Editor, terminal: Terminal, text: str) -> None:
    """The test's own notification, through the same channel, once it reached the terminal:
    what the plugin sent before it has arrived."""
    ed.lua("vim.api.nvim_chan_send(2, ...)", f"\x1b]777;notify;minime;{text}\x1b\\")
    wait_for(lambda: text.encode() in terminal.received(), 10, message=f"for the mark {text}")


def printable(payload: bytes) -> bool:
    """No C0 control, DEL or C1 control (as UTF-8) in ``payload``."""
    return not re.search(rb"[\x00-\x1f\x7f]|\xc2[\x80-\x9f]", payload)


# An ask whose text (the thread's title) carries a terminal's controls: OSC 2 (title), BEL,
# CSI as one C1 character, and the string terminator.
HOSTILE = "/say hi \x1b]2;evil\x07 \u009b31m \x1b\\ end"


def test_an_off_screen_thread_notifies_only_without_the_focus(tmp_path: Path) -> None:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path), "notify": {"os": True}}
    with tui(tmp_path, opts, {}) as (ed, terminal):
        first = ed.lua("return require('minime.actions').thread_of()")
        ed.nvim.command("MiniMeNew")  # the second thread's conversation is the one shown
        focus(ed, terminal, False)
        ed.lua("local text, id = ... require('minime').ask(text, nil, id)", HOSTILE, first)
        ed.wait_done(1)
        (payload,) = wait_for(lambda: OSC.findall(terminal.received()), 10, message="the OSC")
        assert printable(payload), payload
        text = payload.decode()
        assert text.startswith("mm · /say hi ^[]2;evil^G") and "turn finished" in text, text

        # Waiting for permission, off screen, no focus: a second one; its end a third.
        ed.lua("local id = ... require('minime').ask('/bash echo hi', nil, id)", first)
        wait_for(lambda: len(OSC.findall(terminal.received())) == 2, 10, message="the second")
        assert OSC.findall(terminal.received())[1].endswith(b": waiting for permission")
        ed.answer_permission("1")
        ed.wait_done(2)
        wait_for(lambda: len(OSC.findall(terminal.received())) == 3, 10, message="the third")
        # With the focus: the line is said, no notification.
        focus(ed, terminal, True)
        ed.lua("local id = ... require('minime').ask('/say again', nil, id)", first)
        ed.wait_done(3)
        mark(ed, terminal, "after turn 3")
        # The thread on screen: none either, without the focus.
        focus(ed, terminal, False)
        ed.lua("local id = ... require('minime.ui.turn').open(id)", first)
        ed.lua("local id = ... require('minime').ask('/say shown', nil, id)", first)
        ed.wait_done(4)
        mark(ed, terminal, "after turn 4")
        assert OSC.findall(terminal.received())[3:] == [b"after turn 3", b"after turn 4"]


def test_inside_tmux_the_notification_is_passed_through(tmp_path: Path) -> None:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path), "notify": {"os": "osc777"}}
    with tui(tmp_path, opts, {"TMUX": "/tmp/tmux-0/default,1,0"}) as (ed, terminal):
        first = ed.lua("return require('minime.actions').thread_of()")
        ed.nvim.command("MiniMeNew")
        focus(ed, terminal, False)
        ed.lua("local text, id = ... require('minime').ask(text, nil, id)", HOSTILE, first)
        ed.wait_done(1)
        (payload,) = wait_for(lambda: TMUX_OSC.findall(terminal.received()), 10, message="OSC")
        assert printable(payload) and b"turn finished" in payload, payload
