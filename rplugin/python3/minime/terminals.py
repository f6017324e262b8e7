"""The client terminal (ACP ``terminal/create``, ``output``, ``wait_for_exit``, ``kill``,
``release``): commands the agent asks the client to run, as asyncio subprocesses.

Asyncio subprocesses on the library's own loop, not Neovim jobs: the requests arrive on that
loop, so nothing crosses to the editor's main loop to start, read or wait for a command, and
the process tree rules of the agents (proctree.py) apply unchanged — each command runs in a
session of its own with a tag of its own in its environment (and the agent's, and that of the
editor's host), so whatever it starts, in whatever session, re-parented or not, is found and
ended with it.

A command runs in its session's cwd or a directory inside it (after resolving symlinks and
``..``; anything else is refused), with the caller's environment plus the given ``env``. Its
output (stdout and stderr, as one stream) is kept up to ``outputByteLimit`` bytes (at most
MAX_OUTPUT_LIMIT, whatever the agent names), cut from the start at a UTF-8 character boundary.
Every terminal is ended on ``release``, when its session is forgotten, when the client closes,
and when the agent dies; a released terminal's output stays readable for what shows it
(``Terminals.shown``), never for the agent's requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import secrets
import signal
from collections.abc import Callable, Sequence
from typing import Any

from . import proctree

log = logging.getLogger("minime")

# Kept when the agent names no outputByteLimit: a command that prints without end must not
# fill the editor's memory.
DEFAULT_OUTPUT_LIMIT = 1 << 20
# The most a terminal keeps, whatever outputByteLimit says (an agent asked for 1e12): 4 MiB is
# more text than the largest model context holds (1M tokens, about 4 MB), so nothing a model
# could read is lost, and a terminal costs at most twice that while it runs (Terminal._keep).
MAX_OUTPUT_LIMIT = 4 << 20
# What a released terminal keeps for the tool line that shows it (ACP: the client may go on
# showing its output), and how many released terminals a client keeps: the editor shows the
# last 2,000 lines of a tool's output.
RELEASED_OUTPUT = 64 * 1024
RELEASED_KEPT = 32
READ_CHUNK = 65536
TERM_GRACE = 1.0  # between SIGTERM and SIGKILL of a killed command's tree
TAG_VARIABLE = "MINIME_TERMINAL"

OutputCallback = Callable[[str, str], None]  # (session_id, terminal_id): its output grew


def tail_start(data: bytes | bytearray, limit: int) -> int:
    """Where the last ``limit`` bytes of ``data`` or fewer start at a UTF-8 character boundary
    (never inside a multi-byte character)."""
    if len(data) <= limit:
        return 0
    start = len(data) - limit
    # Skip continuation bytes (10xxxxxx): at most 3 in valid UTF-8.
    for _ in range(3):
        if start < len(data) and data[start] & 0xC0 == 0x80:
            start += 1
    return start


def utf8_tail(data: bytes | bytearray, limit: int) -> bytes:
    """The last ``limit`` bytes of ``data`` or fewer, from a UTF-8 character boundary."""
    return bytes(data[tail_start(data, limit) :])


def output_limit(asked: int | None) -> int:
    """The bytes a terminal keeps when the agent asks for ``asked`` (None: the default)."""
    if asked is None:
        return DEFAULT_OUTPUT_LIMIT
    return max(0, min(asked, MAX_OUTPUT_LIMIT))


def inside_dir(root: str, path: str) -> str:
    """The real path of directory ``path`` when it is ``root`` or lies in it; ValueError
    (saying why) otherwise. A relative ``path`` is taken from ``root``."""
    if "\0" in path:
        raise ValueError("cwd contains a NUL byte")
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(root, path))
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise ValueError(f"cwd {path!r} is outside the session's working directory")
    if not os.path.isdir(real):
        raise ValueError(f"cwd {path!r} is not a directory")
    return real


class Terminal:
    """One command: its process, its kept output and how it ended."""

    def __init__(
        self,
        terminal_id: str,
        session_id: str,
        process: asyncio.subprocess.Process,
        tag: str,
        limit: int,
        on_output: Callable[[], None],
    ) -> None:
        self.id = terminal_id
        self.session_id = session_id
        self.process = process
        self.tag = tag
        seen = proctree.read_proc(process.pid)  # our unreaped child: its pid is still its own
        self.start_time = seen.start if seen is not None else None
        self.limit = limit
        self._kept = bytearray()  # the output's end: up to twice the limit (see _keep)
        self._dropped = False  # the start of the output is gone
        self._read_all = False
        self._on_output = on_output
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while chunk := await stream.read(READ_CHUNK):
            self._keep(chunk)
            self._on_output()
        self._read_all = True
        await self.process.wait()
        self._on_output()  # how it ended is news too

    def _keep(self, chunk: bytes) -> None:
        """Append in O(len(chunk)): the start goes only once the kept bytes reach twice the
        limit, so each byte is moved at most once (copying the whole output at each read made
        60 MB cost 18.7 s of CPU)."""
        self._kept += chunk
        if len(self._kept) > 2 * self.limit:
            del self._kept[: tail_start(self._kept, self.limit)]
            self._dropped = True

    def release(self) -> None:
        """Keep only what a released terminal still shows (RELEASED_OUTPUT bytes)."""
        self.limit = min(self.limit, RELEASED_OUTPUT)
        if len(self._kept) > self.limit:
            del self._kept[: tail_start(self._kept, self.limit)]
            self._dropped = True

    @property
    def output(self) -> bytes:
        """The output kept: its last ``limit`` bytes (whole characters)."""
        return utf8_tail(self._kept, self.limit)

    @property
    def truncated(self) -> bool:
        """Whether the start of the output was cut (ACP's ``truncated``)."""
        return self._dropped or len(self._kept) > self.limit

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace")

    def tail(self, limit: int) -> str:
        """The last ``limit`` bytes of the output or fewer (whole characters), as text: what a
        live view shows, without decoding a megabyte at each read."""
        return utf8_tail(self._kept, min(limit, self.limit)).decode("utf-8", "replace")

    def exit_status(self) -> dict[str, Any] | None:
        """``{exitCode, signal}`` once it has exited (and its output is all read), else None."""
        code = self.process.returncode
        if code is None or not self._read_all:
            return None
        if code < 0:
            with contextlib.suppress(ValueError):
                return {"exitCode": None, "signal": signal.Signals(-code).name}
            return {"exitCode": None, "signal": str(-code)}
        return {"exitCode": code, "signal": None}

    async def wait(self) -> dict[str, Any]:
        await self.process.wait()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(self._reader)
        status = self.exit_status()
        assert status is not None
        return status

    def ended_text(self) -> str | None:
        """How it ended, in words (``exit status 3``, ``killed by SIGTERM``); None if running."""
        status = self.exit_status()
        if status is None:
            return None
        if status["signal"] is not None:
            return f"killed by {status['signal']}"
        return f"exit status {status['exitCode']}"

    def tree(self) -> dict[int, proctree.Proc]:
        return proctree.snapshot({self.process.pid: self.start_time}, self.tag)

    async def kill(self) -> None:
        """SIGTERM its whole tree at once, SIGKILL what is left after TERM_GRACE."""
        tree = self.tree()
        if not tree:
            return
        proctree.terminate_all(tree)
        deadline = asyncio.get_running_loop().time() + TERM_GRACE
        while proctree.alive(tree) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)
        proctree.kill_now(tree)

    def kill_now(self) -> None:
        proctree.kill_now(self.tree())


class Terminals:
    """The terminals of one client, keyed on their ids. ``on_output(session_id, terminal_id)``
    is called (on the client's loop) each time a terminal's output grows."""

    def __init__(self, on_output: OutputCallback | None = None) -> None:
        self.on_output = on_output
        self.on_grew: OutputCallback | None = None  # the client's: the turn shows it live
        self.agent_tag = ""  # MINIME_AGENT=… of the client's agent: its tree includes these
        self._terminals: dict[str, Terminal] = {}
        self._released: dict[str, Terminal] = {}  # the last RELEASED_KEPT, oldest first
        self._ids = itertools.count(1)

    def get(self, terminal_id: str) -> Terminal | None:
        """A live terminal (the agent's requests reach only these)."""
        return self._terminals.get(terminal_id)

    def shown(self, terminal_id: str) -> Terminal | None:
        """A terminal whose output is shown: a live one, or one of the last released."""
        return self._terminals.get(terminal_id) or self._released.get(terminal_id)

    def of_session(self, session_id: str) -> list[Terminal]:
        return [t for t in self._terminals.values() if t.session_id == session_id]

    async def create(
        self,
        session_id: str,
        session_cwd: str,
        command: str,
        args: Sequence[str] | None,
        env: Sequence[tuple[str, str]],
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> Terminal:
        """Start ``command`` (ValueError: a cwd outside the session's, OSError: it cannot be
        started). A command with no ``args`` that holds a space is a shell line (``sh -c``):
        agents send ``"ls -la"`` as well as ``"ls", ["-la"]``."""
        workdir = inside_dir(session_cwd, cwd if cwd else session_cwd)
        argv = [command, *(args or [])]
        if not args and any(c.isspace() for c in command):
            argv = ["/bin/sh", "-c", command]
        token = f"{os.getpid()}-{secrets.token_hex(8)}"
        tag = f"{TAG_VARIABLE}={token}"
        environ = dict(os.environ)
        environ.update(dict(env))
        # The tags that find our processes' trees (the editor's MINIME_EDITOR among them) are
        # not the agent's to change: a command that escaped them would outlive the editor.
        environ.update({k: v for k, v in os.environ.items() if k.startswith("MINIME_")})
        environ[TAG_VARIABLE] = token
        if self.agent_tag:
            name, _, value = self.agent_tag.partition("=")
            environ[name] = value
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=workdir,
            env=environ,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own session and process group: never ours
        )
        proctree.waited.add(process.pid)  # asyncio reaps it, not reap_adopted
        terminal_id = f"term-{next(self._ids)}"
        terminal = Terminal(
            terminal_id,
            session_id,
            process,
            tag,
            output_limit(output_byte_limit),
            lambda: self._grew(session_id, terminal_id),
        )
        self._terminals[terminal_id] = terminal
        log.info("terminal %s: %s (in %s)", terminal_id, argv, workdir)
        process_wait = asyncio.ensure_future(process.wait())
        process_wait.add_done_callback(lambda _: proctree.waited.discard(process.pid))
        return terminal

    def _grew(self, session_id: str, terminal_id: str) -> None:
        for hook in (self.on_grew, self.on_output):
            if hook is None:
                continue
            try:
                hook(session_id, terminal_id)
            except Exception:
                log.exception("a terminal output hook failed")

    async def release(self, terminal_id: str) -> None:
        """Kill it (if it runs) and forget it: its id is invalid from now on; the end of its
        output stays for what shows it (``shown``)."""
        terminal = self._terminals.pop(terminal_id, None)
        if terminal is not None:
            await terminal.kill()
            terminal.release()
            self._released[terminal_id] = terminal
            while len(self._released) > RELEASED_KEPT:
                del self._released[next(iter(self._released))]

    async def end_session(self, session_id: str) -> None:
        await asyncio.gather(*(self.release(t.id) for t in self.of_session(session_id)))
        gone = [t for t, kept in self._released.items() if kept.session_id == session_id]
        for terminal_id in gone:
            del self._released[terminal_id]

    async def close(self) -> None:
        await asyncio.gather(*(self.release(t) for t in list(self._terminals)))

    def kill_now(self) -> None:
        """SIGKILL every terminal's tree: for a program that is ending and cannot wait."""
        for terminal in self._terminals.values():
            terminal.kill_now()
