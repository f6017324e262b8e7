"""The agent side of ``mm -acp``: initialize, sessions, turns, each handler as mm's answers it.

A method mm lacks is ``Method not found``; params that mm's SDK would not decode or validate
are ``Invalid params``; every failure of mm's own (an unknown session, the model failing, the
loop detector) is a plain Go error, so it travels as ``Internal error`` with ``data.error``.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, ClassVar

from . import wire
from .calls import ToolCalls
from .client_tools import (
    LIST_METHOD,
    META_TOOLS,
    NOT_A_LIST,
    ClientTool,
    model_name,
    validate_tools,
)
from .config import Config, log
from .script import COMMANDS, Command, commands_update
from .showcase import AUTH_METHODS, Showcase
from .tour import is_plain, read_history, tour_script, without_history


def new_session_id() -> str:
    """Like mm's: ``20261110-224507-1f3a9c2e``."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(4)


@dataclass
class Session:
    id: str
    cwd: str
    tools: list[ClientTool]
    remembered: dict[str, bool] = field(default_factory=dict)  # allow_always / never, by tool
    turn: asyncio.Task[str] | None = None
    cancel_requested: bool = False
    deaf: bool = False
    tour_step: int = 0  # the last step of the tour shown (tour.py)
    asks: int = 0  # the prompts it was sent: an ask's number, as the editor counts them
    edits_ask: int = 0  # the ask that made the tour's edits (0: none)

    def find_tool(self, name: str) -> ClientTool | None:
        for tool in self.tools:
            if name in (tool.name, tool.model_name) or model_name(name) == tool.model_name:
                return tool
        return None


@dataclass
class Turn:
    session: Session
    answer: list[str] = field(default_factory=list)
    fresh_line: bool = False  # the current command has not said anything yet
    last_call: tuple[str, str, str] | None = None  # the loop detector's memory
    repeats: int = 0


def _params(method: str, params: Any, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """Decode and validate as the Go SDK does before mm's handler sees anything."""
    if not isinstance(params, dict):
        kind = "array" if isinstance(params, list) else type(params).__name__
        raise wire.invalid_params(f"json: cannot unmarshal {kind} into Go value of type {method}")
    for name in required:
        if params.get(name) in (None, ""):
            raise wire.invalid_params(f"{name} is required")
    return params


class ScriptedMM(ToolCalls):
    """mm with a script for a model: the prompt's lines are commands (see ``script``)."""

    commands: ClassVar[dict[str, Command]] = COMMANDS
    title, version = "mini-me (scripted)", "0.0.0-scripted"

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.sessions: dict[str, Session] = {}
        self.meta_tools: list[ClientTool] = []
        self.advertised = False
        self.client_capabilities: dict[str, Any] = {}
        # The demo's sessions beyond mm's bare shape (modes, titles, a list): the demo only.
        self.showcase = Showcase() if config.fake.get("demo") else None
        self._background: set[asyncio.Future[None]] = set()

    # --- dispatch (AgentSideConnection.handleWithExtensions)

    async def handle(self, method: str, params: Any) -> Any:
        handlers = {
            "initialize": (self.initialize, ()),
            "authenticate": (self.authenticate, ()),
            "session/new": (self.new_session, ("cwd", "mcpServers")),
            "session/load": (self.load_session, ("cwd", "mcpServers")),
            "session/resume": (self.resume_session, ("cwd",)),
            "session/list": (self.list_sessions, ()),
            "session/close": (self.close_session, ()),
            "session/prompt": (self.prompt, ("prompt",)),
        }
        if self.showcase is not None:
            handlers["session/set_mode"] = (self.set_mode, ("sessionId", "modeId"))
            handlers["session/set_config_option"] = (self.set_option, ("sessionId", "configId"))
        if method not in handlers:
            raise wire.method_not_found(method)
        handler, required = handlers[method]
        try:
            return await handler(_params(method, params, required))
        except (wire.RpcError, wire.GoError, asyncio.CancelledError):
            raise
        except Exception:
            log(traceback.format_exc().rstrip())  # a bug of this agent: said, then answered
            raise

    async def notified(self, method: str, params: Any) -> None:
        if method == "session/cancel":
            await self.cancel(_params(method, params))
        else:
            raise wire.method_not_found(method)

    def before_serving(self) -> int | None:
        """An exit status to end with before speaking at all; None to serve."""
        return None

    async def closed(self, why: str) -> None:
        """The client closed its side (or sent a line over 10 MiB): mm's SDK logs it, mm exits."""
        if why != "peer connection closed":
            wire.slog_info("connection closed", cause=why)

    # --- connection and sessions

    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        capabilities = params.get("clientCapabilities") or {}
        if isinstance(capabilities, dict):
            self.client_capabilities = capabilities
        meta = capabilities.get("_meta") if isinstance(capabilities, dict) else None
        self._learn_meta_tools((meta or {}).get(META_TOOLS) if isinstance(meta, dict) else None)
        version = params.get("protocolVersion", 1)
        showcase = self.showcase
        return {
            "protocolVersion": min(int(version) if isinstance(version, int) else 1, 1),
            # It lists the stored sessions it loads: said, as ACP asks of an agent (mm's spec
            # does not say whether mm does; the plugin asks only an agent that says so).
            "agentCapabilities": showcase.capabilities()
            if showcase
            else {"loadSession": True, "sessionCapabilities": {"list": {}}},
            "agentInfo": {"name": "mm", "title": self.title, "version": self.version},
            "authMethods": AUTH_METHODS if showcase else [],
        }

    def lends(self, capability: str, detail: str | None = None) -> bool:
        """Whether the client advertised ``capability`` (and its ``detail``) at initialize."""
        value = self.client_capabilities.get(capability)
        if detail is not None:
            value = value.get(detail) if isinstance(value, dict) else None
        return value is not None and value is not False  # `"form": {}` is advertised

    async def authenticate(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _learn_meta_tools(self, value: Any) -> None:
        self.advertised = value is not None and value is not False
        if not self.config.enabled or not self.advertised or self.config.discovery != "meta":
            return
        if not isinstance(value, list):
            log(f"[acp] client tools: {NOT_A_LIST}")
            return
        self.meta_tools = self._validated(value)
        log(f"[acp] client tools (meta): {', '.join(t.model_name for t in self.meta_tools)}")

    def _validated(self, entries: list[Any]) -> list[ClientTool]:
        tools, lines = validate_tools(entries)
        for line in lines:
            log(line)
        return tools

    async def _session_tools(self, session_id: str, cwd: str) -> list[ClientTool]:
        if not self.config.enabled or not self.advertised:
            return []
        if self.config.discovery == "meta":
            return self.meta_tools
        params = {"sessionId": session_id, "cwd": cwd}
        try:
            result = await self.wire.request(LIST_METHOD, params, self.config.timeout)
        except wire.RpcError as exc:
            log(f"[acp] client tools: {LIST_METHOD} failed: {exc}")
            return []
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            log(f"[acp] client tools: {LIST_METHOD} answered no tools array")
            return []
        tools = self._validated(result["tools"])
        names = ", ".join(t.model_name for t in tools)
        log(f"[acp] session {session_id} client tools (request): {names}")
        return tools

    async def _open(self, session_id: str, cwd: str) -> dict[str, Any]:
        """The session's tools learnt; what its answer carries besides mm's bare shape."""
        tools = await self._session_tools(session_id, cwd)
        self.sessions[session_id] = Session(session_id, cwd, tools)
        await self.advertise_commands(session_id)
        return self.showcase.opened(session_id, cwd) if self.showcase else {}

    async def advertise_commands(self, session_id: str) -> None:
        """The script's commands as ACP slash commands, sent just after the session's answer:
        the task runs once the answer is written (``wire._serve`` writes it in the same step
        as the handler returns)."""
        task = asyncio.ensure_future(self.update(session_id, commands_update()))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = new_session_id()
        return {"sessionId": session_id, **await self._open(session_id, params["cwd"])}

    def _stored(self, session_id: Any) -> dict[str, Any]:
        for stored in self.config.fake.get("load_sessions") or []:
            if stored.get("sessionId") == session_id:
                return stored
        raise wire.GoError(f"session {session_id} not found")

    async def list_sessions(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = params.get("cwd")
        if self.showcase is not None:
            return {"sessions": self.showcase.listed(cwd)}
        keys = ("sessionId", "cwd", "title", "updatedAt")
        sessions = [
            {k: s[k] for k in keys if k in s}
            for s in self.config.fake.get("load_sessions") or []
            if cwd is None or s.get("cwd") == cwd
        ]
        return {"sessions": sessions}

    async def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = params.get("sessionId")
        kinds = {"user": "user_message_chunk", "agent": "agent_message_chunk"}
        for role, text in self._history(session_id):
            kind = kinds.get(role, "agent_thought_chunk")
            content = {"type": "text", "text": text}
            await self.update(session_id, {"sessionUpdate": kind, "content": content})
        return await self._open(session_id, params["cwd"])

    def _history(self, session_id: Any) -> list[tuple[str, str]]:
        """A stored session's history as (role, text); an unknown one: mm's error."""
        if self.showcase is not None:
            found = self.showcase.history(str(session_id))
            if found is not None:
                return found
        entries = self._stored(session_id).get("history") or []
        return [(str(e.get("role")), str(e.get("text", ""))) for e in entries]

    async def resume_session(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = params.get("sessionId")
        self._history(session_id)
        return await self._open(session_id, params["cwd"])

    async def set_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.showcase is not None
        try:
            return self.showcase.set_mode(params["sessionId"], params["modeId"])
        except ValueError as exc:
            raise wire.invalid_params(str(exc)) from None

    async def set_option(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.showcase is not None
        try:
            return self.showcase.set_option(
                params["sessionId"], params["configId"], params.get("value")
            )
        except ValueError as exc:
            raise wire.invalid_params(str(exc)) from None

    async def close_session(self, params: dict[str, Any]) -> dict[str, Any]:
        self.sessions.pop(params.get("sessionId"), None)
        return {}

    # --- turns

    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = params.get("sessionId")
        session = self.sessions.get(session_id)
        if session is None:
            raise wire.GoError(f"unknown session {session_id}")
        blocks = params["prompt"] if isinstance(params["prompt"], list) else []
        text = "".join(str(b.get("text") or "") for b in blocks if isinstance(b, dict))
        turn = Turn(session)
        session.asks += 1
        session.cancel_requested = session.deaf = False
        running = session.turn = asyncio.ensure_future(self._run(turn, text))
        try:
            stop_reason = await running
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not session.cancel_requested or (current is not None and current.cancelling()):
                raise
            stop_reason = "cancelled"
        finally:
            if session.turn is running:
                session.turn = None
        if self.showcase is not None:
            asked = without_history(blocks)  # its title and stored history: the ask alone
            for update in self.showcase.after_turn(session.id, asked, "".join(turn.answer)):
                await self.update(session.id, update)
        output = sum(len(part) for part in turn.answer)
        usage = {
            "inputTokens": len(text),
            "outputTokens": output,
            "totalTokens": len(text) + output,
        }
        return {"stopReason": stop_reason, "usage": usage}

    async def cancel(self, params: dict[str, Any]) -> None:
        session = self.sessions.get(params.get("sessionId"))
        if session is None or session.turn is None or session.deaf:
            return
        session.cancel_requested = True
        session.turn.cancel()

    async def _run(self, turn: Turn, text: str) -> str:
        if self.config.fake.get("demo") and turn.session.asks == 1:
            read_history(turn.session, text)
        if self.config.fake.get("demo") and is_plain(text):
            text = tour_script(text)
        return await self.run_script(turn, text)

    async def run_script(self, turn: Turn, text: str) -> str:
        """Each line of ``text`` as the model's next step; ``cancelled`` ends the turn so."""
        for line in text.splitlines():
            if not line.strip():
                continue
            turn.fresh_line = True
            command, _, rest = line.partition(" ")
            handler = self.commands.get(command) if command.startswith("/") else None
            if handler is None:
                if command.startswith("/"):
                    await self.say(turn, f"unknown command {command}")
                else:
                    await self.stream_text(turn, f"echo: {line}")
                continue
            if await handler(self, turn, rest.strip()) == "cancelled":
                return "cancelled"
        return "end_turn"

    async def update(self, session_id: str, update: dict[str, Any]) -> None:
        await self.wire.notify("session/update", {"sessionId": session_id, "update": update})

    async def say(self, turn: Turn, text: str, kind: str = "agent_message_chunk") -> None:
        if kind == "agent_message_chunk":
            if turn.fresh_line and turn.answer:
                text = "\n" + text
            turn.fresh_line = False
            turn.answer.append(text)
        gap = self.showcase.word_gap(turn.session.id) if self.showcase else 0.0
        for piece in re.findall(r"\S*\s*", text)[:-1] if gap else [text]:
            content = {"type": "text", "text": piece}
            await self.update(turn.session.id, {"sessionUpdate": kind, "content": content})
            if gap:
                await asyncio.sleep(gap)

    def never_asks(self, turn: Turn) -> bool:
        return self.showcase is not None and self.showcase.never_asks(turn.session.id)

    async def pause(self, turn: Turn) -> None:
        """Between two steps of a command: nothing, unless the demo's pace is slow."""
        if self.showcase is not None and (seconds := self.showcase.pause(turn.session.id)):
            await asyncio.sleep(seconds)

    async def stream_text(self, turn: Turn, text: str, pieces: int = 3) -> None:
        size = max(1, -(-len(text) // pieces))
        for start in range(0, len(text), size):
            await self.say(turn, text[start : start + size])
