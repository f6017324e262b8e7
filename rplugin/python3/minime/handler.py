"""The ACP ``Client`` side the SDK calls into: permissions, updates, extension methods."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from .fs import FileSystem, inside
from .model import PermissionOption, PermissionRequest
from .permissions import PermissionCallback, decide
from .sdk_log import first_line
from .sink import Sink
from .terminal_requests import TerminalRequests
from .tool_service import TOOLS_LIST_METHOD
from .updates import tool_call_of

if TYPE_CHECKING:
    from .elicitations import ElicitationCallback

log = logging.getLogger("minime")
T = TypeVar("T")


async def _handled(method: str, work: Awaitable[T]) -> T:
    """An fs handler's failure as the agent's JSON-RPC error (its words as ``details``), said in
    one line on the ``minime`` logger (its traceback at debug), not the SDK's root-logger
    traceback. A missing file and a refusal (RequestError) pass as they are."""
    from acp import RequestError

    try:
        return await work
    except (FileNotFoundError, RequestError):
        raise
    except Exception as exc:
        log.warning("%s: the handler failed: %s", method, first_line(exc))
        log.debug("%s: the handler failed", method, exc_info=True)
        raise RequestError.internal_error({"details": str(exc)}) from None


class Handler(TerminalRequests):
    """Every agent request lands here; requests about sessions this client never opened are
    refused before anything is shown or run."""

    def __init__(
        self,
        sink: Sink,
        *,
        on_permission: PermissionCallback | None,
        on_elicitation: ElicitationCallback | None,
        fs: FileSystem | None,
    ) -> None:
        self._sink = sink
        self._on_permission = on_permission
        self._on_elicitation = on_elicitation
        self._fs = fs

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> Any:
        from acp import RequestError

        session = self._sink.session(session_id)
        if session is None:
            # Nothing to show it in, and nobody who asked for it: refused, never asked.
            log.warning("refused session/request_permission for unknown session %r", session_id)
            raise RequestError.invalid_params(
                {"details": f"unknown session {session_id!r}: this client never opened it"}
            )
        return await self._sink.cancellable(self._ask_permission(session, options, tool_call))

    async def _ask_permission(self, session: Any, options: list[Any], tool_call: Any) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        request = PermissionRequest(
            session_id=session.session_id,
            tool_call=session.permission_call(tool_call_of(tool_call)),
            options=[
                PermissionOption(option_id=o.option_id, name=o.name, kind=o.kind) for o in options
            ],
        )
        task = asyncio.ensure_future(self._decide(session, request))
        try:
            with session.asking(task):
                option_id = await task
        except asyncio.CancelledError:
            if not task.cancelled():
                task.cancel()  # this request was cancelled: the prompt goes too
                raise
            option_id = None  # the turn was cancelled while the prompt was open
        if option_id is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option_id)
        )

    async def _decide(self, session: Any, request: PermissionRequest) -> str | None:
        # The SDK runs each message in a task of its own: an update sent just before the
        # request may be handled after it, before this task starts (claude's plan approval).
        request.tool_call = session.permission_call(request.tool_call)
        return await decide(self._on_permission, request)

    async def create_elicitation(self, message: str, mode: Any, **_: Any) -> Any:
        """A form question (elicitation/create) for one of this client's sessions; URL mode and
        request-scoped forms (no session to show them in) are refused, as is any for a session
        this client never opened, before anything is shown."""
        from .elicitations import ElicitationRequest

        session_id = getattr(mode, "session_id", None)
        schema = getattr(mode, "requested_schema", None)
        session = self._sink.session(session_id)
        if schema is None:
            self._refuse("only form elicitations are supported (no url mode)")
        if session is None:
            log.warning("refused elicitation/create for unknown session %r", session_id)
            self._refuse(f"unknown session {session_id!r}: this client never opened it")
        request = ElicitationRequest(
            session_id=session.session_id,
            message=message,
            schema=schema.model_dump(mode="json", by_alias=True, exclude_none=True),
            tool_call_id=getattr(mode, "tool_call_id", None),
        )
        return await self._sink.cancellable(self._elicit(session, request))

    async def _elicit(self, session: Any, request: Any) -> Any:
        from acp.schema import CancelElicitationResponse

        from .elicitations import ask

        task = asyncio.ensure_future(ask(self._on_elicitation, request))
        try:
            with session.asking(task):  # the turn's cancel withdraws it too
                return await task
        except asyncio.CancelledError:
            request.cancelled.set()
            if not task.cancelled():
                task.cancel()  # this request was cancelled: the question goes too
                raise
            return CancelElicitationResponse(action="cancel")  # the turn was cancelled

    async def complete_elicitation(self, elicitation_id: str, **_: Any) -> None:
        """elicitation/complete names a URL-mode elicitation, which this client does not offer."""
        log.info("elicitation/complete for %r: no such elicitation here", elicitation_id)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_: Any,
    ) -> Any:
        from acp.schema import ReadTextFileResponse

        fs, real = self._fs_target("fs/read_text_file", session_id, path)
        for name, value in (("line", line), ("limit", limit)):
            if value is not None and value < (1 if name == "line" else 0):
                self._refuse(f"{name} must be {'>= 1' if name == 'line' else '>= 0'}, got {value}")
        try:
            text = await self._sink.cancellable(
                _handled("fs/read_text_file", fs.read_text(session_id, real, line, limit))
            )
        except FileNotFoundError as exc:
            # ACP's "Resource not found": agents tell it from a refusal (qwen-code reads it as
            # ENOENT, so its tools say the file does not exist).
            from acp import RequestError

            details = exc.strerror or "no such file"
            raise RequestError(
                -32002, "Resource not found", {"uri": path, "details": details}
            ) from None
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> Any:
        from acp.schema import WriteTextFileResponse

        fs, real = self._fs_target("fs/write_text_file", session_id, path)
        await self._sink.cancellable(
            _handled("fs/write_text_file", fs.write_text(session_id, real, content))
        )
        return WriteTextFileResponse()

    def _fs_target(self, method: str, session_id: str, path: str) -> tuple[Any, str]:
        """The handlers and the real path, or a JSON-RPC error saying why not."""
        fs = self._fs
        if fs is None:
            from acp import RequestError

            raise RequestError.method_not_found(method)
        session = self.known_session(method, session_id)
        try:
            return fs, inside(session.cwd, path)
        except ValueError as exc:
            log.warning("refused %s: %s", method, exc)
            self._refuse(str(exc))

    @staticmethod
    def _refuse(details: str) -> NoReturn:
        from acp import RequestError

        raise RequestError.invalid_params({"details": details})

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        # No await before this: the SDK runs each notification in its own task, and only
        # handling it synchronously keeps the chunks in order.
        self._sink.update(session_id, update)

    async def ext_method(self, method: str, params: dict[str, Any]) -> Any:
        sink = self._sink
        if method == TOOLS_LIST_METHOD:
            return await sink.cancellable(sink.list_tools(params))
        return await sink.cancellable(sink.call_tool("_" + method, params))

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("ignored notification _%s", method)
