"""The agent's ``terminal/*`` requests, answered from the client's :class:`Terminals`: only for
sessions this client opened, only for that session's own terminals, and only when the client
lends terminals at all (else ``method not found``, as for a method never advertised)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, NoReturn

from .sdk_log import first_line

if TYPE_CHECKING:
    from .sink import Sink
    from .terminals import Terminal, Terminals

log = logging.getLogger("minime")


def _refuse(details: str) -> NoReturn:
    from acp import RequestError

    raise RequestError.invalid_params({"details": details})


class TerminalRequests:
    """Mixed into the Handler: ``self._sink`` is where it hands requests."""

    _sink: Sink

    def _terminals(self, method: str, session_id: str) -> tuple[Terminals, Any]:
        terminals = self._sink.terminals
        if terminals is None:
            from acp import RequestError

            raise RequestError.method_not_found(method)
        return terminals, self.known_session(method, session_id)

    def known_session(self, method: str, session_id: str) -> Any:
        """The client's session ``session_id``, or a refusal (one it never opened)."""
        session = self._sink.session(session_id)
        if session is None:
            log.warning("refused %s for unknown session %r", method, session_id)
            _refuse(f"unknown session {session_id!r}: this client never opened it")
        return session

    def _terminal(self, method: str, session_id: str, terminal_id: str) -> Terminal:
        terminals, _ = self._terminals(method, session_id)
        terminal = terminals.get(terminal_id)
        if terminal is None or terminal.session_id != session_id:
            _refuse(f"unknown terminal {terminal_id!r} (never created, or released)")
        return terminal

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **_: Any,
    ) -> Any:
        from acp.schema import CreateTerminalResponse

        terminals, session = self._terminals("terminal/create", session_id)
        if not command:
            _refuse("command is empty")
        pairs = [(v.name, v.value) for v in env or []]
        try:
            terminal = await terminals.create(
                session_id, session.cwd, command, args, pairs, cwd, output_byte_limit
            )
        except ValueError as exc:
            log.warning("refused terminal/create: %s", exc)
            _refuse(str(exc))
        except OSError as exc:
            log.warning("terminal/create: cannot start %r: %s", command, first_line(exc))
            _refuse(f"cannot start {command!r}: {exc.strerror or exc}")
        return CreateTerminalResponse(terminal_id=terminal.id)

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        from acp.schema import TerminalExitStatus, TerminalOutputResponse

        terminal = self._terminal("terminal/output", session_id, terminal_id)
        status = terminal.exit_status()
        return TerminalOutputResponse(
            output=terminal.text,
            truncated=terminal.truncated,
            exit_status=None if status is None else TerminalExitStatus(**_snake(status)),
        )

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        from acp.schema import WaitForTerminalExitResponse

        terminal = self._terminal("terminal/wait_for_exit", session_id, terminal_id)
        status = await self._sink.cancellable(terminal.wait())
        return WaitForTerminalExitResponse(**_snake(status))

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        from acp.schema import KillTerminalResponse

        terminal = self._terminal("terminal/kill", session_id, terminal_id)
        await terminal.kill()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        from acp.schema import ReleaseTerminalResponse

        terminals, _ = self._terminals("terminal/release", session_id)
        self._terminal("terminal/release", session_id, terminal_id)
        await terminals.release(terminal_id)
        return ReleaseTerminalResponse()


def _snake(status: dict[str, Any]) -> dict[str, Any]:
    return {"exit_code": status["exitCode"], "signal": status["signal"]}
