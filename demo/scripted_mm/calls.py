"""Tool calls as mm makes them: reported to the editor, permission asked, client tools called.

Every result, failed or not, is cut to ``maxOutput`` and counted by the loop detector: the
same call with the same answer ``LOOP_LIMIT`` times in a row stops the turn with mm's error.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

from . import wire
from .client_tools import SESSION_META, ClientTool, error_text, render_result, truncate
from .config import Config

if TYPE_CHECKING:
    from .agent import Turn

PERMISSION_OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    {"optionId": "never", "name": "Never", "kind": "reject_always"},
]
LOOP_LIMIT = 6


class LoopDetected(wire.GoError):
    """The model repeats itself: mm ends the turn with this plain error."""


class ToolCalls:
    """The half of the agent that runs tools; ``wire`` is set once the connection exists."""

    wire: wire.Connection

    def __init__(self, config: Config) -> None:
        self.config = config
        self.call_ids = itertools.count(1)

    async def update(self, session_id: str, update: dict[str, Any]) -> None:
        raise NotImplementedError

    async def say(self, turn: Turn, text: str, kind: str = "agent_message_chunk") -> None:
        raise NotImplementedError

    def new_call(
        self, title: str, kind: str, status: str = "pending", **fields: Any
    ) -> dict[str, Any]:
        """A tool call's first ``tool_call`` (a fresh id): its title, kind, status, and any
        other field (``rawInput``, ``locations``, ``content``)."""
        call_id = f"call_{next(self.call_ids)}"
        return {"toolCallId": call_id, "title": title, "kind": kind, "status": status, **fields}

    async def report_call(self, turn: Turn, call: dict[str, Any]) -> None:
        await self.update(turn.session.id, {"sessionUpdate": "tool_call", **call})

    async def report_end(self, turn: Turn, call_id: str, read: str, failed: bool) -> None:
        await self.update(
            turn.session.id,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "failed" if failed else "completed",
                "rawOutput": {"output": read},
                "content": [{"type": "content", "content": {"type": "text", "text": read}}],
            },
        )

    def never_asks(self, turn: Turn) -> bool:
        """Whether the session's mode allows every call without asking (the demo's ``yolo``)."""
        return False

    def count(self, turn: Turn, name: str, args: Any, read: str) -> None:
        """The loop detector: the same call with the same answer, again and again."""
        key = (name, json.dumps(args, sort_keys=True, default=str), read)
        turn.repeats = turn.repeats + 1 if turn.last_call == key else 1
        turn.last_call = key
        if turn.repeats >= LOOP_LIMIT:
            raise LoopDetected(f"the model repeated the same {name} call {turn.repeats} times")

    async def allowed(self, turn: Turn, key: str, call: dict[str, Any]) -> bool:
        """mm's permission request; allow_always / never are remembered per tool."""
        session = turn.session
        if key in session.remembered:
            return session.remembered[key]
        if self.never_asks(turn):
            return True
        params = {"sessionId": session.id, "toolCall": call, "options": PERMISSION_OPTIONS}
        try:
            answer = await self.wire.request("session/request_permission", params)
        except wire.RpcError:
            return False
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        option = None
        if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
            option = outcome.get("optionId")
        if option in ("allow_always", "never"):
            session.remembered[key] = option == "allow_always"
        return option in ("allow", "allow_always")

    async def invoke(self, method: str, params: dict[str, Any]) -> tuple[str, bool]:
        """A request to the client, and what the model reads of its answer."""
        try:
            result = await self.wire.request(method, params, self.config.timeout)
        except wire.RpcError as exc:
            return error_text(exc), True
        return render_result(result)

    async def call_tool(
        self, turn: Turn, tool: ClientTool, args: Any, session_id: str | None = None
    ) -> str:
        call_id = f"call_{next(self.call_ids)}"
        call = {
            "toolCallId": call_id,
            "title": f"client: {tool.name}",
            "kind": "other",
            "status": "pending",
            "rawInput": args,
        }
        await self.report_call(turn, call)
        present = args if isinstance(args, dict) else {}
        missing = [name for name in tool.required if name not in present]
        if missing:
            read = f"[client tool error: missing required parameters: {', '.join(missing)}]"
            failed = True
        elif self.config.ask_client_tools and not await self.allowed(turn, tool.model_name, call):
            read, failed = f"[{tool.model_name} rejected by user]", True
        else:
            running = {"toolCallId": call_id, "status": "in_progress"}
            await self.update(turn.session.id, {"sessionUpdate": "tool_call_update", **running})
            params = {**present, "_meta": {SESSION_META: session_id or turn.session.id}}
            read, failed = await self.invoke(tool.method, params)
        read = truncate(read, self.config.max_output)
        await self.report_end(turn, call_id, read, failed)
        return read

    async def bash(self, turn: Turn, command: str, permission_first: bool = False) -> bool:
        """The built-in bash (never run). Returns whether it was allowed."""
        call = self.new_call(f"bash: {command}", "execute", rawInput={"command": command})
        call_id = call["toolCallId"]
        if not permission_first:
            await self.report_call(turn, call)
        ok = self.config.yolo or await self.allowed(turn, "bash", call)
        if permission_first:
            await self.report_call(turn, {**call, "status": "in_progress"})
        read = truncate(
            f"ran: {command}" if ok else "[bash rejected by user]", self.config.max_output
        )
        await self.report_end(turn, call_id, read, not ok)
        self.count(turn, "bash", {"command": command}, read)
        await self.say(turn, f"bash -> {read}")
        return ok
