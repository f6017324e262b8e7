"""The agent process: spawned in its own session, stderr always drained, ended with its whole
process tree (proctree.py: whatever it started, in whatever session or group, re-parented or
not)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import secrets
import signal
from collections.abc import Callable, Sequence
from typing import ClassVar

from . import proctree

log = logging.getLogger("minime")

STDOUT_LIMIT = 1 << 20
# The kernel buffer of the agent's stdout (Linux; 64 KB by default). An agent that writes
# faster than we read runs ahead by at most this much: with 64 KB (~370 chunk updates) the last
# chunk of a 10,000-chunk stream reached the editor 37-142 ms after the agent wrote it (2 busy
# cores), with 16 KB 17-44 ms; the stream took no longer.
STDOUT_PIPE_BYTES = 16384
STDERR_RING_LINES = 200
STDERR_LINE_MAX = 4096
# How long the agent's tree has between SIGTERM and SIGKILL once the agent itself had its
# ``grace`` (its tool commands get no stdin to close: this is their only notice).
TERM_GRACE = 1.0
# How often the exit status is read once the pidfd says the agent exited, and without one.
EXIT_POLL = 0.01
EXIT_POLL_BLIND = 0.25


def _shrink_stdout_pipe(process: asyncio.subprocess.Process) -> None:
    """Set the agent's stdout pipe to STDOUT_PIPE_BYTES where the system allows (best effort)."""
    try:
        import fcntl

        set_size = fcntl.F_SETPIPE_SZ  # Linux only
        # The public SubprocessTransport.get_pipe_transport, through Process's transport.
        pipe = process._transport.get_pipe_transport(1)  # type: ignore[attr-defined]
        fcntl.fcntl(pipe.get_extra_info("pipe").fileno(), set_size, STDOUT_PIPE_BYTES)
    except (ImportError, AttributeError, OSError) as exc:
        log.debug("agent stdout pipe left at its default size: %s", exc)


class AgentProcess:
    """A running agent. ``last_stderr_line`` feeds error messages; ``stderr_lines`` the log.

    ``tag`` (``MINIME_AGENT=<token>``) is in its environment and so in that of everything it
    starts: how its tree is found once parents have died (proctree.py)."""

    running: ClassVar[set[AgentProcess]] = set()  # not yet stopped: pids that are no orphans
    # Spawns in flight: their child exists before it is in ``running``. Meanwhile no child of
    # ours is taken for an adopted orphan: a stop in that moment (:MiniMeStop, then an ask at
    # once) SIGTERMed the agent being started as one.
    spawning: ClassVar[int] = 0

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        on_stderr: Callable[[str], None] | None,
        tag: str = "",
    ) -> None:
        self.process = process
        self.pid = process.pid
        self.tag = tag
        # Read while it is our unreaped child: its pid cannot be another process's yet.
        seen = proctree.read_proc(self.pid)
        self.start_time = seen.start if seen is not None else None
        AgentProcess.running.add(self)
        self.stderr_lines: collections.deque[str] = collections.deque(maxlen=STDERR_RING_LINES)
        self.stderr_count = 0  # lines written so far (the ring keeps the last ones)
        self._on_stderr = on_stderr
        self._drain = asyncio.get_running_loop().create_task(self._drain_stderr())
        self._exit_seen: asyncio.Task[None] | None = None

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: str,
        env: dict[str, str] | None = None,
        on_stderr: Callable[[str], None] | None = None,
    ) -> AgentProcess:
        token = f"{os.getpid()}-{secrets.token_hex(8)}"
        env = {**(os.environ if env is None else env), proctree.TAG_VARIABLE: token}
        cls.spawning += 1
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                env=env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own session and process group: never ours
                limit=STDOUT_LIMIT,
            )
            _shrink_stdout_pipe(process)
            proctree.reap_adopted(keep={a.pid for a in cls.running} | {process.pid})
            return cls(process, on_stderr, f"{proctree.TAG_VARIABLE}={token}")
        finally:
            cls.spawning -= 1

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def last_stderr_line(self) -> str:
        return self.stderr_line_since(0)

    def stderr_line_since(self, count: int) -> str:
        """The last non-blank stderr line written after the first ``count`` lines ("": none)."""
        newer = self.stderr_count - count
        for line in reversed(list(self.stderr_lines)[-newer:] if newer > 0 else []):
            if line.strip():
                return line
        return ""

    def exit_text(self) -> str:
        """``exit status N`` (or the signal), as the Go twin says it."""
        code = self.process.returncode
        if code is None:
            return "still running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by signal {signal.Signals(-code).name}"
        return f"exit status {code}"

    async def _drain_stderr(self) -> None:
        """Read stderr in chunks (never readline: one huge line must not stall the pipe)."""
        stream = self.process.stderr
        assert stream is not None
        pending = b""
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            if len(pending) > STDERR_LINE_MAX:
                lines.append(pending)
                pending = b""
            for raw in lines:
                self._emit(raw)
        if pending:
            self._emit(pending)

    def _emit(self, raw: bytes) -> None:
        line = raw[:STDERR_LINE_MAX].decode("utf-8", "replace").rstrip("\r")
        self.stderr_lines.append(line)
        self.stderr_count += 1
        if self._on_stderr is not None:
            try:
                self._on_stderr(line)
            except (Exception, SystemExit, KeyboardInterrupt):  # its failure, not the program's end
                log.exception("on_stderr failed")

    async def wait(self, timeout: float | None = None) -> int | None:
        """The exit status once it has exited (stderr fully read), or None after ``timeout``."""
        if self._exit_seen is None:
            self._exit_seen = asyncio.get_running_loop().create_task(self._exited())
        try:
            await asyncio.wait_for(asyncio.shield(self._exit_seen), timeout)
        except TimeoutError:
            return None
        if not self._drain.done():  # a stop() before may have cancelled it
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._drain), 1.0)
        return self.process.returncode

    async def _exited(self) -> None:
        """Until the agent has exited. asyncio's ``Process.wait`` also waits for its pipes to
        close, which a child of the agent may hold open for ever (a server it started with
        its stdout): the exit is seen on a pidfd (Linux), else by its status read in turn."""
        closed = asyncio.ensure_future(self.process.wait())
        loop = asyncio.get_running_loop()
        pidfd = None
        with contextlib.suppress(AttributeError, OSError):
            pidfd = os.pidfd_open(self.pid)
        poll = EXIT_POLL_BLIND
        try:
            if pidfd is not None:
                ended = asyncio.Event()
                loop.add_reader(pidfd, ended.set)
                seen = asyncio.ensure_future(ended.wait())
                await asyncio.wait({closed, seen}, return_when=asyncio.FIRST_COMPLETED)
                seen.cancel()
                poll = EXIT_POLL  # exited: the loop's child watcher tells its status soon
            while self.process.returncode is None and not closed.done():
                await asyncio.wait({closed}, timeout=poll)
        finally:
            if pidfd is not None:
                loop.remove_reader(pidfd)
                os.close(pidfd)
            if not closed.done():
                closed.cancel()

    def tree(self) -> dict[int, proctree.Proc]:
        """Its process tree now; once no other agent runs, with the orphans we adopted."""
        roots: dict[int, int | None] = {self.pid: self.start_time}
        others = any(a is not self and a.returncode is None for a in AgentProcess.running)
        if not others and not AgentProcess.spawning:
            adopted = proctree.adopted(keep={a.pid for a in AgentProcess.running})
            roots.update({p.pid: p.start for p in adopted.values()})
        return proctree.snapshot(roots, self.tag)

    def kill_group(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def kill_tree(self) -> None:
        """SIGKILL the whole tree at once: for a program that is ending and cannot wait."""
        tree = self.tree()
        self.kill_group(signal.SIGKILL)
        proctree.kill_now(tree)

    async def stop(self, grace: float = 5.0) -> None:
        """Close stdin and give it ``grace`` seconds; then SIGTERM its whole tree, as seen
        before anything ended and after, TERM_GRACE more, and SIGKILL what is left."""
        tree = self.tree()  # before its children can re-parent away
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            with contextlib.suppress(Exception):
                stdin.close()
        if self.process.returncode is None:
            await self.wait(grace)
        tree.update(self.tree())
        proctree.terminate_all(tree)
        self.kill_group(signal.SIGTERM)  # any member born since the snapshot
        await _until_gone(tree, TERM_GRACE)
        self.kill_group(signal.SIGKILL)
        proctree.kill_now(tree)
        await _until_gone(tree, 1.0)  # SIGKILL is not instant: collect the zombies after
        await self.wait(grace)
        if not self._drain.done():
            self._drain.cancel()
        AgentProcess.running.discard(self)
        if not AgentProcess.spawning:  # a child being spawned is no zombie of an orphan
            proctree.reap_adopted(keep={a.pid for a in AgentProcess.running})


async def _until_gone(tree: dict[int, proctree.Proc], timeout: float) -> None:
    """Wait until every member of ``tree`` has exited, or ``timeout`` (polls /proc)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while proctree.alive(tree) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
