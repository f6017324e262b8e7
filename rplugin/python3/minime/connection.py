"""The agent process, its transport and the SDK connection — and the one error policy.

Every request the library makes of the agent goes through :meth:`Connection.request` (or
:meth:`Connection.until_ready` while it starts), so "did the agent die, say no, or not answer?"
is decided here alone:

- it died (exited, or its pipes broke): ``<label> exited: exit status N (last stderr line: …)``,
  the same error every session's turn ends with (the line: one it wrote since the last request,
  if any: an older one — its banner, a session's tool list — says nothing of the death); it is
  logged too, so that the log says how the agent ended;
- it refused: ``<what> failed: <its JSON-RPC error in its own words>`` (ACP's auth-required
  error, while a session opens: :class:`~minime.errors.AuthRequired`);
- it did not answer in time: ``<binary> did not answer <what> within N s``.

A request in flight when the agent dies ends with its death even when no answer can come any
more (a child of the agent holding its stdout open keeps the pipe from ending).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from . import sdk_log
from .errors import AUTH_REQUIRED, AuthRequired, Error, describe, method_names
from .process import AgentProcess
from .transport import LineTransport

T = TypeVar("T")
log = logging.getLogger("minime")
# How long a broken connection waits for the agent's exit status before it stops the agent.
EXIT_WAIT = 2.0


class Connection:
    """One agent process and the ACP connection on its stdio. Build it, then :meth:`open`."""

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str,
        env: dict[str, str] | None,
        on_stderr: Callable[[str], None] | None,
        ready_timeout: float,
        on_death: Callable[[Error], None],
    ) -> None:
        self.argv = argv
        self.ready_timeout = ready_timeout
        self.process: AgentProcess | None = None
        self.transport: LineTransport | None = None
        self.death: Error | None = None
        # How messages name the agent: initialize's agentInfo, else the caller's label of its
        # definition (the editor's ``qwen-code``), else its binary.
        self.agent_info: dict[str, Any] = {}
        self.definition_label: str | None = None
        self.auth_methods: list[dict[str, Any]] = []  # initialize's authMethods, as sent
        self._cwd = cwd
        self._env = env
        self._on_stderr = on_stderr
        self._on_death = on_death
        self._rpc: Any = None  # the SDK's ClientSideConnection
        self._closing = False
        self._waiting: set[asyncio.Task[Any]] = set()  # tasks awaiting a request
        self._interrupted: set[asyncio.Task[Any]] = set()  # ...that its end cancelled
        self._watch: asyncio.Task[None] | None = None
        self._ended: asyncio.Task[None] | None = None
        # The agent's stderr lines written before the last request: what its death leaves out.
        self._stderr_mark = 0

    @property
    def binary(self) -> str:
        return self.argv[0]

    @property
    def label(self) -> str:
        """The agent in messages about its process: its definition's label (``qwen-code``),
        else its binary (``mm``), never the interpreter that runs it alone (``python``)."""
        return self.definition_label or os.path.basename(self.binary)

    @property
    def agent_name(self) -> str:
        info = self.agent_info
        return str(info.get("title") or info.get("name") or self.definition_label or self.label)

    @property
    def alive(self) -> bool:
        return self.death is None and not self._closing

    @property
    def rpc(self) -> Any:
        """The SDK's connection: call it only through :meth:`request`."""
        return self._rpc

    async def open(self, handler: Any, on_load_answered: Callable[[Any], None]) -> None:
        """Spawn the agent and connect ``handler`` (the SDK's ``Client`` side) to it."""
        try:
            self.process = await AgentProcess.spawn(
                self.argv, cwd=self._cwd, env=self._env, on_stderr=self._on_stderr
            )
        except OSError as exc:
            raise Error(f"cannot start {self.binary}: {exc.strerror or exc}") from None
        # Imported only now: `import acp` costs about a second (pydantic models) and the
        # agent is already starting in parallel.
        import acp

        process = self.process.process
        assert process.stdout is not None and process.stdin is not None
        self.transport = LineTransport(process.stdout, process.stdin, on_end=self._output_ended)
        self.transport.on_load_answered = on_load_answered
        sdk_log.install()  # its tracebacks of hostile messages: one line on our logger
        # The SDK (0.12.1) serves elicitation/create only with the unstable protocol on; ACP
        # stabilised elicitation, and this client defines no other unstable method.
        self._rpc = acp.connect_to_agent(handler, self.transport, use_unstable_protocol=True)
        self._watch = asyncio.get_running_loop().create_task(self._watch_exit())

    # -- the error policy -------------------------------------------------------------------

    def check_alive(self) -> None:
        if self.death is not None:
            raise self.death
        if self._closing:
            raise Error("the agent connection is closed")

    async def request(self, what: str, work: Awaitable[T]) -> T:
        """``work`` (a request of the agent), or the error that says why it has no answer.

        Awaited in the caller's own task, with no hop of its own: a turn's answer and the
        updates the agent sends after it keep their order. The agent's death (or the close)
        interrupts the task, and the request ends with it."""
        if not self.alive:
            if inspect.iscoroutine(work):
                work.close()  # never sent
            self.check_alive()
        task = asyncio.current_task()
        assert task is not None
        if self.process is not None:
            self._stderr_mark = self.process.stderr_count
        self._waiting.add(task)
        try:
            return await work
        except asyncio.CancelledError:
            if task not in self._interrupted:
                raise
            task.uncancel()
            raise self._gone_error() from None
        except Error:
            raise
        except Exception as exc:
            failed = exc
        finally:
            self._waiting.discard(task)
            self._interrupted.discard(task)
        raise await self.failure(what, failed) from None

    def _interrupt(self) -> None:
        """No answer is coming: every request in flight ends now."""
        for task in list(self._waiting):
            if task not in self._interrupted:
                self._interrupted.add(task)
                task.cancel()

    async def failure(self, what: str, exc: BaseException) -> Error:
        """Why a request failed: the agent's death (a broken pipe is one), else its refusal."""
        if self.death is not None or self._closing:
            return self._gone_error()
        if isinstance(exc, ConnectionError):
            return await self._broken()
        # No stderr hint: the agent is alive and answered in its own words; its last stderr
        # line is whatever it last logged (mm: "[acp] session … client tools …"), unrelated.
        return Error(f"{what} failed: {describe(exc)}")

    async def cancel(self, session_id: str) -> None:
        """``session/cancel`` (a notification: nothing to wait for, nothing to report)."""
        if self.alive:
            with contextlib.suppress(Exception):
                await self._rpc.cancel(session_id=session_id)

    async def until_ready(self, what: str, work: Any, ready_by: float | None = None) -> Any:
        """Run a start-up step within ``ready_timeout`` (or until the loop time ``ready_by``,
        the one bound of a whole start), failing fast if the agent exits."""
        assert self.process is not None
        timeout = self.ready_timeout
        if ready_by is not None:
            timeout = max(0.0, ready_by - asyncio.get_running_loop().time())
        step = asyncio.ensure_future(work)
        exited = asyncio.ensure_future(self.process.wait())
        try:
            done, _ = await asyncio.wait(
                {step, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            step.cancel()
            raise
        finally:
            exited.cancel()
        if step in done:
            try:
                return step.result()
            except Error:
                raise
            except Exception as exc:
                if getattr(exc, "code", None) == AUTH_REQUIRED:
                    raise self._auth_required(what, exc) from None
                # A closed connection usually means the agent is exiting: let its status speak.
                if await self.process.wait(2.0 if isinstance(exc, ConnectionError) else 0) is None:
                    raise Error(f"{what} failed: {describe(exc)}{self.stderr_hint()}") from None
        step.cancel()
        if self.process.returncode is not None or exited in done:
            await self.process.wait(2.0)
            raise Error(
                f"{self.binary} exited before it was ready ({what}): "
                f"{self.process.exit_text()}{self.stderr_hint()}"
            )
        since = " of its start" if ready_by is not None and what != "initialize" else ""
        raise Error(
            f"{self.binary} did not answer {what} within {self.ready_timeout:g} s{since}"
            f"{self.stderr_hint()}"
        )

    def stderr_hint(self) -> str:
        line = self.process.last_stderr_line if self.process else ""
        return f" (last stderr line: {line})" if line else ""

    def _gone_error(self) -> Error:
        return self.death or Error("the agent connection was closed")

    def _auth_required(self, what: str, exc: BaseException) -> AuthRequired:
        methods = self.auth_methods
        how = f"its login methods: {method_names(methods)}" if methods else "it names no method"
        return AuthRequired(
            f"{self.agent_name} needs a login ({what}: {describe(exc)}); {how}", methods
        )

    async def _broken(self) -> Error:
        """The pipes broke: the agent is exiting (its status tells how) or cannot be talked to
        any more, and is stopped."""
        assert self.process is not None
        if self.process.returncode is None:
            await self.process.wait(EXIT_WAIT)
        if self.death is None and not self._closing:
            if self.process.returncode is not None:
                self._die(self._exited())
            else:
                still = "closed its input while still running; it was stopped"
                self._die(Error(f"{self.label} {still}"))
                await self.process.stop(0)
        return self._gone_error()

    # -- its end -----------------------------------------------------------------------------

    def _exited(self) -> Error:
        assert self.process is not None
        line = self.process.stderr_line_since(self._stderr_mark)
        hint = f" (last stderr line: {line})" if line else ""
        return Error(f"{self.label} exited: {self.process.exit_text()}{hint}")

    async def _watch_exit(self) -> None:
        assert self.process is not None
        await self.process.wait()
        if not self._closing and self.death is None:
            self._die(self._exited())

    def _die(self, error: Error) -> None:
        log.warning("%s", error)  # the log says how the agent ended, whoever reads it
        self.death = error
        self._on_death(error)
        self._interrupt()

    def _output_ended(self) -> None:
        if not self._closing and self._ended is None:
            self._ended = asyncio.get_running_loop().create_task(self._stop_mute_agent())

    async def _stop_mute_agent(self) -> None:
        """The agent's stdout ended: whether or not it still runs, it can answer nothing more."""
        assert self.process is not None
        if await self.process.wait(1.0) is not None or self._closing or self.death is not None:
            return  # it exited: _watch_exit tells how
        self._die(Error(f"{self.label} closed its output while still running; it was stopped"))
        await self.process.stop(0)

    async def close(self, grace: float) -> None:
        """Close stdin, wait up to ``grace`` s, then kill the agent's whole tree."""
        self._closing = True
        self._interrupt()
        if self.process is not None:
            await self.process.stop(grace)
        if self._rpc is not None:
            with contextlib.suppress(Exception):
                await self._rpc.close()
        for task in (self._watch, self._ended):
            if task is not None:
                task.cancel()
