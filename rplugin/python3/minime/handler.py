"""The ACP ``Client`` side the SDK calls into: permissions, updates, extension methods."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, NoReturn

from .fs import inside
from .model import PermissionOption, PermissionRequest
from .permissions import decide
from .tool_service import TOOLS_LIST_METHOD
from .updates import _tool_call

if TYPE_CHECKING:
    from .client import Client

log = logging.getLogger("minime")


class Handler:
    """Every agent request lands here; requests about sessions this client never opened are
    refused before anything is shown or run."""

    def __init__(self, owner: Client) -> None:
        self._owner = owner

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> Any:
        from acp import RequestError

        session = self._owner.sessions.get(session_id)
        if session is None:
            # Nothing to show it in, and nobody who asked for it: refused, never asked.
            log.warning("refused session/request_permission for unknown session %r", session_id)
            raise RequestError.invalid_params(
                {"details": f"unknown session {session_id!r}: this client never opened it"}
            )
        return await self._owner.transport.cancellable(
            self._ask_permission(session, options, tool_call)
        )

    async def _ask_permission(self, session: Any, options: list[Any], tool_call: Any) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        request = PermissionRequest(
            session_id=session.session_id,
            tool_call=session.permission_call(_tool_call(tool_call, kind="")),
            options=[
                PermissionOption(option_id=o.option_id, name=o.name, kind=o.kind) for o in options
            ],
        )
        task = asyncio.ensure_future(self._decide(session, request))
        session.pending_permissions.add(task)
        try:
            option_id = await task
        except asyncio.CancelledError:
            if not task.cancelled():
                task.cancel()  # this request was cancelled: the prompt goes too
                raise
            option_id = None  # the turn was cancelled while the prompt was open
        finally:
            session.pending_permissions.discard(task)
        if option_id is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option_id)
        )

    async def _decide(self, session: Any, request: PermissionRequest) -> str | None:
        # The SDK runs each message in a task of its own: an update sent just before the
        # request may be handled after it, before this task starts (claude's plan approval).
        request.tool_call = session.permission_call(request.tool_call)
        return await decide(self._owner.on_permission, request)

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
            text = await self._owner.transport.cancellable(
                fs.read_text(session_id, real, line, limit)
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
        await self._owner.transport.cancellable(fs.write_text(session_id, real, content))
        return WriteTextFileResponse()

    def _fs_target(self, method: str, session_id: str, path: str) -> tuple[Any, str]:
        """The handlers and the real path, or a JSON-RPC error saying why not."""
        fs = self._owner.fs
        if fs is None:
            from acp import RequestError

            raise RequestError.method_not_found(method)
        session = self._owner.sessions.get(session_id)
        if session is None:
            log.warning("refused %s for unknown session %r", method, session_id)
            self._refuse(f"unknown session {session_id!r}: this client never opened it")
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
        self._owner.route_update(session_id, update)

    async def ext_method(self, method: str, params: dict[str, Any]) -> Any:
        owner = self._owner
        if method == TOOLS_LIST_METHOD:
            return await owner.transport.cancellable(owner.list_tools(params))
        return await owner.transport.cancellable(owner.call_tool("_" + method, params))

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("ignored notification _%s", method)
