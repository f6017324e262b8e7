"""Client tools served to the agent: list requests (scoped by the client) and the calls."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

from . import tools as tools_mod
from .model import ToolRequest
from .scopes import Scopes
from .threads import as_failure
from .tools import Tool, ToolSource

log = logging.getLogger("minime")

TOOLS_LIST_METHOD = "org.mini-me/tools/list"  # the SDK strips the leading "_"


class ToolService:
    """The tools of each session (discovery ``request``) or of all (``meta``), and their calls.

    The cwd a call runs in always comes from ``scopes`` (what the client sent), never from the
    agent's list request.
    """

    def __init__(self, source: ToolSource, discovery: str, scopes: Scopes) -> None:
        self.discovery = discovery
        self._source = source
        self._scopes = scopes
        self._static: dict[str, Tool] = {}
        self._per_session: dict[str, dict[str, Tool]] = {}

    def set_static(self, tools: Iterable[Tool]) -> None:
        self._static = {tool.wire_method: tool for tool in tools_mod.validate(tools)}

    @property
    def static(self) -> list[Tool]:
        return list(self._static.values())

    def forget(self, session_ids: Iterable[str]) -> None:
        for session_id in session_ids:
            self._per_session.pop(session_id, None)

    async def answer_list(self, params: Any) -> dict[str, Any]:
        """Answer a list request only for a session this client is opening, in its own cwd."""
        from acp import RequestError

        if self.discovery != "request":
            log.warning("refused %s: discovery is meta", TOOLS_LIST_METHOD)
            raise RequestError.method_not_found("_" + TOOLS_LIST_METHOD)
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        asked = params.get("cwd") if isinstance(params, dict) else None
        if not isinstance(session_id, str) or not isinstance(asked, str):
            raise RequestError.invalid_params({"details": "sessionId and cwd must be strings"})
        cwd = self._scopes.bind_for_list(session_id, asked)
        if cwd is None:
            known = self._scopes.cwds.get(session_id)
            why = (
                f"session {session_id!r} was opened in {known!r}, not {asked!r}"
                if known is not None
                else f"no session {session_id!r} is being opened in {asked!r}"
            )
            log.warning("refused %s: %s", TOOLS_LIST_METHOD, why)
            raise RequestError.invalid_params({"details": f"refused: {why}"})
        checked = await self._ask_source(session_id, cwd)
        if self._scopes.cwds.get(session_id) == cwd:  # still bound once the source answered
            self._per_session[session_id] = {tool.wire_method: tool for tool in checked}
        return {"tools": tools_mod.descriptions(checked)}

    async def _ask_source(self, session_id: str, cwd: str) -> list[Tool]:
        """The source's tools for this session, each entry checked on its own (mm's rule): a
        bad entry is skipped and logged, the rest kept. A source that fails is logged and
        answered as an error, which mm reports on its stderr; the session opens without tools.
        """
        from acp import RequestError

        source = self._source
        try:
            found = source(session_id, cwd) if callable(source) else source
            if asyncio.iscoroutine(found):
                found = await found
            if isinstance(found, str | bytes | dict) or not isinstance(found, Iterable | None):
                raise TypeError(f"it returned {type(found).__name__}, not a list of minime.Tool")
            entries = list(found or [])
        except asyncio.CancelledError:
            raise
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # the program goes on
            failure = str(as_failure(exc)) or type(exc).__name__
            log.warning("tool source failed for session %r: %s", session_id, failure)
            raise RequestError.internal_error(
                {"details": f"the tool source failed: {failure}"}
            ) from None
        return tools_mod.keep_valid(entries, f"tools for session {session_id!r}")

    async def call(
        self, method: str, params: dict[str, Any], is_open: Callable[[str], bool]
    ) -> dict[str, Any]:
        """One tool call; a session the client never opened gets a failed call, nothing run."""
        from acp import RequestError

        session_id, arguments = tools_mod.split_params(params)
        known = session_id is not None and (is_open(session_id) or session_id in self._per_session)
        table = self._per_session.get(session_id or "", self._static)
        tool = table.get(method) if known else self._any_tool(method)
        if tool is None:
            raise RequestError.method_not_found(method)
        if not known:
            return tools_mod.text_result(
                f"unknown session {session_id!r}: this client never opened it", is_error=True
            )
        request = ToolRequest(
            session_id=session_id or "",
            arguments=arguments,
            cwd=self._scopes.cwds.get(session_id or ""),
        )
        return await tools_mod.run(tool, request)

    def _any_tool(self, method: str) -> Tool | None:
        if method in self._static:
            return self._static[method]
        for table in self._per_session.values():
            if method in table:
                return table[method]
        return None
