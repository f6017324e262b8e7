#!/usr/bin/env python3
"""A fake ``mm -acp``: mini-me's ACP side as the spec describes it, with a script for a model.

Usage (mm's own command line; anything else exits 2)::

    python tests/fake_mm.py -acp -config agent.yaml

Built on the ACP SDK's agent side (``acp.run_agent``). It follows
shared/spec/acp-client-tools.md to the letter: tool discovery (``meta`` and ``request``), the
validation of a tool list and its stderr lines, the names and schemas as the model sees them,
the required-parameter check, permissions (mm's four options), the call itself, both response
shapes, errors, timeouts with ``$/cancel_request``, and ``maxOutput``. Nothing else of mm.

Agent file (YAML)
-----------------
``yolo`` (false), ``maxOutput`` (50000 characters), ``acp.clientTools.enabled`` (true),
``acp.clientTools.discovery`` (meta | request), ``acp.clientTools.permissions`` (auto | ask),
``acp.clientTools.timeout`` (Go duration, "30s"). Test-only knobs under ``fake:``:

=============================  =================================================================
``banner: str``                stderr line written at start, ``{pid}`` replaced by mm's pid.
``exit_before_initialize: N``  write ``exit_message`` on stderr and exit with status N at once.
``exit_message: str``          the line above (default ``fatal: cannot reach the model server``).
``never_initialize: true``     never answer ``initialize``.
``stderr_flood_bytes: N``      write N bytes of stderr lines before answering ``initialize``.
``trace: path``                append every JSON-RPC message, in and out, to this file as JSON
                               lines ``{"dir": "in" | "out" | "raw", "msg": ...}``.
``usage: false``               no ``usage`` on the prompt's answer.
``ignore_stdin_eof: true``     keep running after stdin closes (a stuck agent).
``demo: true``                 a plain prompt plays a short tour (``demo_script``): thought,
                               plan, a client tool, a bash permission. Used by demo/mm.
``load_sessions: [...]``       sessions for ``session/list`` and ``session/load``: each
                               ``{sessionId, cwd, title, updatedAt, history: [{role, text}]}``
                               where role is user, agent or thought (replayed on load).
=============================  =================================================================

The script (the prompt's text, one command a line)
-------------------------------------------------
A line without a leading ``/`` is answered ``echo: <line>`` in three chunks. The outputs of
successive lines are separated by ``\\n``. A tool call's line says ``<model name> -> <what the
model read>``, so a test asserts the model's view over the wire.

==============================  ================================================================
``/say TEXT``                   one text chunk.
``/think TEXT``                 one thought chunk.
``/chunks N [SIZE]``            N text chunks of SIZE (16) characters, see ``chunks_text``.
``/bigline BYTES``              one text chunk of that many characters (``<xxx…>``).
``/slow N``                     N chunks ``slow i\\n`` 50 ms apart; session/cancel stops it.
``/deaf``                       says ``deaf``, then ignores session/cancel forever.
``/plan``                       a plan update with ``PLAN_ENTRIES``.
``/tools``                      the session's tools as the model sees them, as JSON: a list of
                                ``{name, description, inputSchema, method}``.
``/tool NAME [JSON]``           call a client tool by its name or model name.
``/parallel N NAME [JSON]``     N calls of that tool at once; one output line each.
``/tool-as SID NAME [JSON]``    the same call, with ``SID`` as ``org.mini-me/sessionId``.
``/call METHOD [JSON]``         a request to any method, read as a tool call's answer.
``/cancel-request ID``          a ``$/cancel_request`` for request ID (JSON), then ``sent``.
``/bash CMD``                   the built-in bash: permission unless yolo, then ``ran: CMD``.
``/permission-first CMD``       bash, with request_permission sent before its tool_call.
``/reject-cancels CMD``         bash; a rejection ends the turn with stopReason cancelled.
``/dup-toolcall``               the same tool_call id sent twice, then completed.
``/empty-input``                a tool_call without rawInput, then completed.
``/deep-input N``               a tool_call whose rawInput nests N levels (``{"a": {"a": …}}``,
                                ``"bottom"`` at the end), then completed: ``deep -> done``.
``/diff``                       an edit whose permission request carries diff content.
``/terminal``                   a tool_call with terminal content (no terminal capability).
``/garbage``                    raw lines: not JSON, an unknown notification, an unknown
                                request, an unknown session/update kind, a response to no
                                request, vendor updates (session_info, usage, commands).
``/badutf8``                    a session/update line that is not UTF-8.
``/big-update BYTES``           an ``available_commands_update`` line of about BYTES bytes.
``/stderr LINE``                one stderr line.
``/error MESSAGE``              the prompt answered with JSON-RPC error -32603, MESSAGE.
``/error-data TEXT``            the same, as mm says it: ``Internal error`` with data TEXT.
``/crash [STATUS]``             says ``crashing``, a stderr line, exit STATUS (2).
``/close-stdout``               says ``closing``, closes stdout and lives on (never answers).
``/pid``                        says ``pid <pid> pgid <pgid>``.
``/spawn-child``                starts ``sleep 1000`` in mm's process group: ``child <pid>``.
==============================  ================================================================

The prompt's answer carries ``usage`` (PromptResponse.usage): inputTokens = characters of the
prompt, outputTokens = characters of the answer, totalTokens = their sum.

Where the spec is silent, the fake chooses (and the tests rely on it): entries are numbered
from 0; ``Required parameters: …`` and ``One of: ….`` are appended after one space; a cut
result is head + ``\n[… N characters cut …]\n`` + tail, halves of ``maxOutput``; a deadline
reads ``context deadline exceeded`` (Go's words); a timed-out list request and a permission
request pending at session/cancel get ``$/cancel_request`` too; a call's tool_call is
reported ``pending``, then ``in_progress`` once allowed, then ``completed``/``failed``.

The helpers above the agent (``model_name``, ``model_tool``, ``validate_tools``,
``render_result``, ``truncate``, ``chunks_text``…) import without the SDK, for the tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import os
import re
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

META_TOOLS = "org.mini-me/tools"
LIST_METHOD = "_org.mini-me/tools/list"
SESSION_META = "org.mini-me/sessionId"
CANCEL_REQUEST = "$/cancel_request"
NOT_A_LIST = (
    '"org.mini-me/tools" is not a list of tools; a client that answers '
    "_org.mini-me/tools/list needs acp.clientTools.discovery: request"
)
DEADLINE = "context deadline exceeded"
DEFAULT_BANNER = "mm v0.0.0-fake (fake mm for tests): ACP on stdio"
DEFAULT_EXIT_MESSAGE = "fatal: cannot reach the model server"
STDIO_LIMIT = 256 * 1024 * 1024
PERMISSION_OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    {"optionId": "never", "name": "Never", "kind": "reject_always"},
]
PLAN_ENTRIES = [
    {"content": "Read the code", "priority": "high", "status": "completed"},
    {"content": "Write the tests", "priority": "medium", "status": "in_progress"},
    {"content": "Ship it", "priority": "low", "status": "pending"},
]
SLOW_INTERVAL = 0.05


# ---------------------------------------------------------------------------------------------
# Pure helpers: what mm does to a tool list and to a tool's answer. Tests import these.


def json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def parse_duration(text: Any) -> float:
    """A Go duration ("30s", "200ms", "1m30s") in seconds."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)", str(text))
    if not parts or "".join(n + u for n, u in parts) != str(text):
        raise ValueError(f"invalid duration {text!r}")
    return sum(float(n) * units[u] for n, u in parts)


def model_name(name: str) -> str:
    """``client_`` + the name with every run outside [A-Za-z0-9] made one ``_``, ends trimmed."""
    return "client_" + re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")


@dataclass
class ClientTool:
    """A client tool as mm keeps it: the model's name, description and schema, and the method."""

    name: str
    model_name: str
    method: str
    description: str
    schema: dict[str, Any]
    required: list[str]

    def as_model_sees_it(self) -> dict[str, Any]:
        return {
            "name": self.model_name,
            "description": self.description,
            "inputSchema": self.schema,
            "method": self.method,
        }


def model_tool(entry: dict[str, Any]) -> ClientTool:
    """The schema as the model sees it (spec: "Schema as the model sees it")."""
    name, method = entry["name"], entry["method"]
    schema = copy.deepcopy(entry.get("inputSchema") or {})
    schema.pop("$schema", None)
    if schema.get("additionalProperties") is False:
        del schema["additionalProperties"]
    required = schema.pop("required", None)
    required = [str(r) for r in required] if isinstance(required, list) else []
    schema["type"] = "object"
    if not isinstance(schema.get("properties"), dict):
        schema["properties"] = {}
    for prop in schema["properties"].values():
        if isinstance(prop, dict) and isinstance(prop.get("enum"), list):
            values = prop.pop("enum")
            shown = (v if isinstance(v, str) else json_text(v) for v in values)
            one_of = "One of: " + ", ".join(shown)
            described = prop.get("description")
            prop["description"] = f"{described} {one_of}." if described else f"{one_of}."
    description = entry.get("description") or f"Tool provided by the editor ({method})."
    if required:
        description = f"{description} Required parameters: {', '.join(required)}"
    return ClientTool(name, model_name(name), method, description, schema, required)


def _shape_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return f"expected a JSON object, got {json_kind(entry)}"
    for key in ("name", "description", "method"):
        if key in entry and entry[key] is not None and not isinstance(entry[key], str):
            return f'"{key}" is a {json_kind(entry[key])}, not a string'
    schema = entry.get("inputSchema")
    if schema is not None and not isinstance(schema, dict):
        return f'"inputSchema" is a {json_kind(schema)}, not an object'
    return None


def validate_tools(entries: list[Any]) -> tuple[list[ClientTool], list[str]]:
    """The valid tools sorted by model name, and the stderr line of every skipped entry."""
    tools: dict[str, ClientTool] = {}
    lines = []
    for index, entry in enumerate(entries):
        reason = _shape_problem(entry)
        if reason is not None:
            reason = f"not a tool description: {reason}"
        elif not (entry.get("name") or "").strip():
            reason = "no name"
        elif not (entry.get("method") or "").startswith("_"):
            method = json_text(entry.get("method") or "")
            reason = f'method {method} must start with "_" (an ACP extension method)'
        elif (entry.get("inputSchema") or {}).get("type", "object") != "object":
            got = json_text(entry["inputSchema"]["type"])
            reason = f'inputSchema.type must be "object", got {got}'
        elif model_name(entry["name"]) in tools:
            reason = f'duplicate tool name "{model_name(entry["name"])}"'
        if reason is not None:
            lines.append(f"[acp] client tools: entry {index} skipped: {reason}")
            continue
        tool = model_tool(entry)
        tools[tool.model_name] = tool
    return [tools[name] for name in sorted(tools)], lines


def error_text(code: Any, message: Any) -> str:
    return f"[client tool error: {json_text({'code': code, 'message': message})}]"


def render_result(result: Any) -> tuple[str, bool]:
    """What the model reads from a tool's answer, and whether the call failed."""
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        parts = []
        for block in result["content"]:
            kind = block.get("type") if isinstance(block, dict) else json_kind(block)
            if kind == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(f"[client tool: non-text content of type {kind} skipped]")
        text = "".join(parts)
        if result.get("isError") is True:
            return f"[client tool error: {text}]", True
        return text, False
    if isinstance(result, str):
        return result, False
    return json_text(result), False


def truncate(text: str, limit: int) -> str:
    """Cut to ``limit`` characters, head and tail kept, the cut marked in the middle."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    marker = f"\n[… {len(text) - limit} characters cut …]\n"
    return text[:head] + marker + (text[-tail:] if tail else "")


def demo_script(prompt: str) -> str:
    """What the offline demo agent (``fake.demo``) does with a plain prompt: a tour."""
    first = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return "\n".join(
        [
            "/think No model runs here: this is minime's offline demo agent.",
            "/say **Offline demo agent** (no model, scripted answers).",
            f"/say You asked: {first}",
            "/plan",
            "/tool open_buffers",
            "/bash echo hello from the demo",
            '/say Try `/tool read_buffer {"path": "<a file you opened>"}`, '
            "`/slow 100` then :MiniMeCancel, or `/tools`.",
        ]
    )


def chunks_text(count: int, size: int = 16) -> list[str]:
    """The chunks ``/chunks COUNT SIZE`` streams: chunk i is ``i`` padded with dots to SIZE."""
    return [str(i).ljust(size, ".")[: max(size, 1)] for i in range(count)]


def bigline_text(size: int) -> str:
    if size <= 2:
        return "x" * size
    return "<" + "x" * (size - 2) + ">"


def new_session_id() -> str:
    """Like mm's: ``20261110-224507-1f3a9c2e``."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(4)


# ---------------------------------------------------------------------------------------------
# Configuration


@dataclass
class Config:
    path: str
    yolo: bool = False
    max_output: int = 50000
    enabled: bool = True
    discovery: str = "meta"
    permissions: str = "auto"
    timeout: float = 30.0
    fake: dict[str, Any] = field(default_factory=dict)

    @property
    def ask_client_tools(self) -> bool:
        return self.permissions == "ask" or not self.yolo


def load_config(path: str) -> Config:
    import yaml

    with open(path, encoding="utf-8") as f:
        raw = yaml.safe_load(f) or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: not a mapping")
    tools = ((raw.get("acp") or {}).get("clientTools")) or {}
    config = Config(
        path=path,
        yolo=bool(raw.get("yolo", False)),
        max_output=int(raw.get("maxOutput", 50000)),
        enabled=bool(tools.get("enabled", True)),
        discovery=str(tools.get("discovery", "meta")),
        permissions=str(tools.get("permissions", "auto")),
        timeout=parse_duration(tools.get("timeout", "30s")),
        fake=dict(raw.get("fake") or {}),
    )
    if config.discovery not in ("meta", "request"):
        raise ValueError(f"acp.clientTools.discovery: {config.discovery!r} is not meta or request")
    if config.permissions not in ("auto", "ask"):
        raise ValueError(f"acp.clientTools.permissions: {config.permissions!r} is not auto or ask")
    return config


def log(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


# ---------------------------------------------------------------------------------------------
# The agent


@dataclass
class Session:
    id: str
    cwd: str
    tools: list[ClientTool]
    remembered: dict[str, bool] = field(default_factory=dict)  # allow_always / never, by tool
    turn: asyncio.Task[str] | None = None
    cancel_requested: bool = False
    deaf: bool = False

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


def _split_args(rest: str) -> tuple[str, Any]:
    name, _, args = rest.strip().partition(" ")
    return name, (json.loads(args) if args.strip() else {})


class FakeMM:
    """The ACP agent. Outgoing messages are plain dicts on the SDK's Connection."""

    def __init__(self, config: Config, writer: asyncio.StreamWriter) -> None:
        self.config = config
        self.writer = writer
        self.sessions: dict[str, Session] = {}
        self.meta_tools: list[ClientTool] = []
        self.advertised = False
        self.call_ids = itertools.count(1)
        self.children: list[subprocess.Popen[bytes]] = []
        self.trace = None

    # --- plumbing

    def on_connect(self, conn: Any) -> None:
        self.rpc = conn._conn  # the SDK's Connection: plain-dict requests and notifications
        if path := self.config.fake.get("trace"):
            self.trace = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
            self.rpc.add_observer(self._trace)

    def _trace(self, event: Any) -> None:
        direction = "in" if event.direction.value == "incoming" else "out"
        self._trace_line(direction, event.message)

    def _trace_line(self, direction: str, message: Any) -> None:
        if self.trace is not None:
            self.trace.write(json_text({"dir": direction, "msg": message}) + "\n")

    async def client_request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        """A request to the client; on timeout or cancellation, ``$/cancel_request`` for it."""
        request_id = None

        async def send() -> Any:
            nonlocal request_id
            # Connection.send_request takes this id synchronously, in this same step.
            request_id = self.rpc._next_request_id
            return await self.rpc.send_request(method, params)

        try:
            if timeout is None:
                return await send()
            return await asyncio.wait_for(send(), timeout)
        except (asyncio.CancelledError, TimeoutError):
            if request_id is not None:
                with contextlib.suppress(Exception):
                    await self.rpc.send_notification(CANCEL_REQUEST, {"requestId": request_id})
            raise

    async def update(self, session_id: str, update: dict[str, Any]) -> None:
        await self.rpc.send_notification(
            "session/update", {"sessionId": session_id, "update": update}
        )

    async def raw(self, line: bytes) -> None:
        """A line straight onto stdout. Every earlier send was awaited, so lines stay whole."""
        self._trace_line("raw", line.decode("utf-8", "replace"))
        self.writer.write(line if line.endswith(b"\n") else line + b"\n")
        await self.writer.drain()

    # --- ACP: connection and sessions

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **_: Any,
    ) -> dict[str, Any]:
        fake = self.config.fake
        if flood := int(fake.get("stderr_flood_bytes", 0)):
            line = b"flood " + b"." * 93 + b"\n"
            out = sys.stderr.buffer
            for _i in range(flood // len(line)):
                out.write(line)
            out.write(b"." * (flood % len(line)))
            out.write(b"\n")
            out.flush()
        if fake.get("never_initialize"):
            await asyncio.Event().wait()
        meta = getattr(client_capabilities, "field_meta", None) or {}
        self._learn_meta_tools(meta.get(META_TOOLS))
        return {
            "protocolVersion": min(int(protocol_version), 1),
            "agentCapabilities": {"loadSession": True},
            "agentInfo": {"name": "mm", "title": "mini-me (fake)", "version": "0.0.0-fake"},
            "authMethods": [],
        }

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
        from acp import RequestError

        params = {"sessionId": session_id, "cwd": cwd}
        try:
            result = await self.client_request(LIST_METHOD, params, self.config.timeout)
        except RequestError as exc:
            failure = json_text({"code": exc.code, "message": str(exc)})
            log(f"[acp] client tools: {LIST_METHOD} failed: {failure}")
            return []
        except TimeoutError:
            log(f"[acp] client tools: {LIST_METHOD} failed: {DEADLINE}")
            return []
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            log(f"[acp] client tools: {LIST_METHOD} answered no tools array")
            return []
        tools = self._validated(result["tools"])
        names = ", ".join(t.model_name for t in tools)
        log(f"[acp] session {session_id} client tools (request): {names}")
        return tools

    async def _open(self, session_id: str, cwd: str) -> None:
        tools = await self._session_tools(session_id, cwd)
        self.sessions[session_id] = Session(session_id, cwd, tools)

    async def new_session(self, cwd: str, **_: Any) -> dict[str, Any]:
        session_id = new_session_id()
        await self._open(session_id, cwd)
        return {"sessionId": session_id}

    def _stored(self, session_id: str) -> dict[str, Any]:
        from acp import RequestError

        for stored in self.config.fake.get("load_sessions") or []:
            if stored.get("sessionId") == session_id:
                return stored
        raise RequestError.invalid_params({"sessionId": f"no session {session_id}"})

    async def list_sessions(self, cwd: str | None = None, **_: Any) -> dict[str, Any]:
        keys = ("sessionId", "cwd", "title", "updatedAt")
        sessions = [
            {k: s[k] for k in keys if k in s}
            for s in self.config.fake.get("load_sessions") or []
            if cwd is None or s.get("cwd") == cwd
        ]
        return {"sessions": sessions}

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> dict[str, Any]:
        kinds = {"user": "user_message_chunk", "agent": "agent_message_chunk"}
        for entry in self._stored(session_id).get("history") or []:
            kind = kinds.get(entry.get("role"), "agent_thought_chunk")
            content = {"type": "text", "text": entry.get("text", "")}
            await self.update(session_id, {"sessionUpdate": kind, "content": content})
        await self._open(session_id, cwd)
        return {}

    async def resume_session(self, cwd: str, session_id: str, **_: Any) -> dict[str, Any]:
        self._stored(session_id)
        await self._open(session_id, cwd)
        return {}

    async def close_session(self, session_id: str, **_: Any) -> dict[str, Any]:
        self.sessions.pop(session_id, None)
        return {}

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from acp import RequestError

        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # --- ACP: turns

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> dict[str, Any]:
        from acp import RequestError

        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"unknown session {session_id}"})
        text = "".join(getattr(block, "text", "") or "" for block in prompt)
        turn = Turn(session)
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
        answer: dict[str, Any] = {"stopReason": stop_reason}
        if self.config.fake.get("usage", True):
            output = sum(len(part) for part in turn.answer)
            answer["usage"] = {
                "inputTokens": len(text),
                "outputTokens": output,
                "totalTokens": len(text) + output,
            }
        return answer

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None or session.turn is None or session.deaf:
            return
        session.cancel_requested = True
        session.turn.cancel()

    async def _run(self, turn: Turn, text: str) -> str:
        stop_reason = "end_turn"
        if self.config.fake.get("demo") and not any(
            line.lstrip().startswith("/") for line in text.splitlines()
        ):
            text = demo_script(text)
        for line in text.splitlines():
            if not line.strip():
                continue
            turn.fresh_line = True
            command, _, rest = line.partition(" ")
            handler = COMMANDS.get(command) if command.startswith("/") else None
            if handler is None:
                if command.startswith("/"):
                    await self.say(turn, f"unknown command {command}")
                else:
                    await self.stream_text(turn, f"echo: {line}")
                continue
            if await handler(self, turn, rest.strip()) == "cancelled":
                stop_reason = "cancelled"
                break
        return stop_reason

    async def say(self, turn: Turn, text: str, kind: str = "agent_message_chunk") -> None:
        if kind == "agent_message_chunk":
            if turn.fresh_line and turn.answer:
                text = "\n" + text
            turn.fresh_line = False
            turn.answer.append(text)
        content = {"type": "text", "text": text}
        await self.update(turn.session.id, {"sessionUpdate": kind, "content": content})

    async def stream_text(self, turn: Turn, text: str, pieces: int = 3) -> None:
        size = max(1, -(-len(text) // pieces))
        for start in range(0, len(text), size):
            await self.say(turn, text[start : start + size])

    # --- tool calls

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

    async def allowed(self, turn: Turn, key: str, call: dict[str, Any]) -> bool:
        """mm's permission request; allow_always / never are remembered per tool."""
        from acp import RequestError

        session = turn.session
        if key in session.remembered:
            return session.remembered[key]
        params = {"sessionId": session.id, "toolCall": call, "options": PERMISSION_OPTIONS}
        try:
            answer = await self.client_request("session/request_permission", params)
        except RequestError:
            return False
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        option = None
        if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
            option = outcome.get("optionId")
        if option in ("allow_always", "never"):
            session.remembered[key] = option == "allow_always"
        return option in ("allow", "allow_always")

    async def invoke(self, method: str, params: dict[str, Any]) -> tuple[str, bool]:
        from acp import RequestError

        try:
            result = await self.client_request(method, params, self.config.timeout)
        except RequestError as exc:
            return error_text(exc.code, str(exc)), True
        except TimeoutError:
            return f"[client tool error: {DEADLINE}]", True
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
        call_id = f"call_{next(self.call_ids)}"
        call = {
            "toolCallId": call_id,
            "title": f"bash: {command}",
            "kind": "execute",
            "status": "pending",
            "rawInput": {"command": command},
        }
        if not permission_first:
            await self.report_call(turn, call)
        ok = self.config.yolo or await self.allowed(turn, "bash", call)
        if permission_first:
            await self.report_call(turn, {**call, "status": "in_progress"})
        read = f"ran: {command}" if ok else "[bash rejected by user]"
        await self.report_end(turn, call_id, truncate(read, self.config.max_output), not ok)
        await self.say(turn, f"bash -> {read}")
        return ok


# ---------------------------------------------------------------------------------------------
# The script's commands: (agent, turn, rest of the line) -> "cancelled" to end the turn so.


async def _say(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, rest)


async def _think(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, rest, kind="agent_thought_chunk")


async def _chunks(mm: FakeMM, turn: Turn, rest: str) -> None:
    count, _, size = rest.partition(" ")
    for chunk in chunks_text(int(count), int(size or 16)):
        await mm.say(turn, chunk)


async def _bigline(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, bigline_text(int(rest)))


async def _slow(mm: FakeMM, turn: Turn, rest: str) -> None:
    for i in range(int(rest)):
        await mm.say(turn, f"slow {i}\n")
        await asyncio.sleep(SLOW_INTERVAL)


async def _deaf(mm: FakeMM, turn: Turn, rest: str) -> None:
    turn.session.deaf = True
    await mm.say(turn, "deaf")
    await asyncio.Event().wait()


async def _plan(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.update(turn.session.id, {"sessionUpdate": "plan", "entries": PLAN_ENTRIES})


async def _tools(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, json_text([t.as_model_sees_it() for t in turn.session.tools]))


async def _tool_line(mm: FakeMM, turn: Turn, rest: str, session_id: str | None = None) -> None:
    name, args = _split_args(rest)
    tool = turn.session.find_tool(name)
    if tool is None:
        await mm.say(turn, f"{name} -> [unknown tool]")
        return
    read = await mm.call_tool(turn, tool, args, session_id)
    await mm.say(turn, f"{tool.model_name} -> {read}")


async def _tool(mm: FakeMM, turn: Turn, rest: str) -> None:
    await _tool_line(mm, turn, rest)


async def _tool_as(mm: FakeMM, turn: Turn, rest: str) -> None:
    session_id, _, rest = rest.partition(" ")
    await _tool_line(mm, turn, rest, session_id)


async def _parallel(mm: FakeMM, turn: Turn, rest: str) -> None:
    count, _, rest = rest.partition(" ")
    name, args = _split_args(rest)
    tool = turn.session.find_tool(name)
    if tool is None:
        await mm.say(turn, f"{name} -> [unknown tool]")
        return
    calls = [mm.call_tool(turn, tool, args) for _ in range(int(count))]
    reads = await asyncio.gather(*calls)
    await mm.say(turn, "\n".join(f"{tool.model_name} -> {read}" for read in reads))


async def _call(mm: FakeMM, turn: Turn, rest: str) -> None:
    method, args = _split_args(rest)
    params = {**(args if isinstance(args, dict) else {}), "_meta": {SESSION_META: turn.session.id}}
    read, _failed = await mm.invoke(method, params)
    await mm.say(turn, f"{method} -> {truncate(read, mm.config.max_output)}")


async def _cancel_request(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.rpc.send_notification(CANCEL_REQUEST, {"requestId": json.loads(rest)})
    await mm.say(turn, "sent")


async def _bash(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.bash(turn, rest)


async def _permission_first(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.bash(turn, rest or "ls", permission_first=True)


async def _reject_cancels(mm: FakeMM, turn: Turn, rest: str) -> str | None:
    return None if await mm.bash(turn, rest or "rm -rf build") else "cancelled"


async def _dup_toolcall(mm: FakeMM, turn: Turn, rest: str) -> None:
    call_id = f"call_{next(mm.call_ids)}"
    first = {"toolCallId": call_id, "title": "bash: first", "kind": "execute", "status": "pending"}
    await mm.report_call(turn, {**first, "rawInput": {"command": "first"}})
    second = {**first, "title": "bash: second", "status": "in_progress"}
    await mm.report_call(turn, {**second, "rawInput": {"command": "second"}})
    await mm.report_end(turn, call_id, "dup done", False)
    await mm.say(turn, "dup -> dup done")


async def _empty_input(mm: FakeMM, turn: Turn, rest: str) -> None:
    call_id = f"call_{next(mm.call_ids)}"
    call = {"toolCallId": call_id, "title": "read: somewhere", "kind": "read", "status": "pending"}
    await mm.report_call(turn, call)
    await mm.report_end(turn, call_id, "read nothing", False)
    await mm.say(turn, "empty -> read nothing")


async def _deep_input(mm: FakeMM, turn: Turn, rest: str) -> None:
    call_id = f"call_{next(mm.call_ids)}"
    nested: Any = "bottom"
    for _ in range(int(rest)):
        nested = {"a": nested}
    call = {"toolCallId": call_id, "title": "deep: input", "kind": "other", "status": "pending"}
    await mm.report_call(turn, {**call, "rawInput": nested})
    await mm.report_end(turn, call_id, "done", False)
    await mm.say(turn, "deep -> done")


async def _diff(mm: FakeMM, turn: Turn, rest: str) -> None:
    call_id = f"call_{next(mm.call_ids)}"
    path = os.path.join(turn.session.cwd, "a.txt")
    diff = {"type": "diff", "path": path, "oldText": "old\n", "newText": "new\n"}
    call = {
        "toolCallId": call_id,
        "title": "edit: a.txt",
        "kind": "edit",
        "status": "pending",
        "rawInput": {"path": path},
        "content": [diff],
    }
    await mm.report_call(turn, call)
    ok = mm.config.yolo or await mm.allowed(turn, "edit", call)
    read = "applied" if ok else "[edit rejected by user]"
    await mm.report_end(turn, call_id, read, not ok)
    await mm.say(turn, f"edit -> {read}")


async def _terminal(mm: FakeMM, turn: Turn, rest: str) -> None:
    call_id = f"call_{next(mm.call_ids)}"
    call = {
        "toolCallId": call_id,
        "title": "bash: make",
        "kind": "execute",
        "status": "in_progress",
        "rawInput": {"command": "make"},
        "content": [{"type": "terminal", "terminalId": "term-1"}],
    }
    await mm.report_call(turn, call)
    await mm.report_end(turn, call_id, "made", False)
    await mm.say(turn, "terminal -> made")


async def _garbage(mm: FakeMM, turn: Turn, rest: str) -> None:
    sid = turn.session.id

    def update(body: dict[str, Any]) -> bytes:
        message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid}}
        message["params"]["update"] = body
        return json_text(message).encode()

    lines = [
        b"this is not JSON {",
        json_text({"jsonrpc": "2.0", "method": "qwen/notify/x", "params": {"a": 1}}).encode(),
        json_text({"jsonrpc": "2.0", "id": "odd-1", "method": "qwen/ask", "params": {}}).encode(),
        json_text({"jsonrpc": "2.0", "id": 987654321, "result": {"late": True}}).encode(),
        update({"sessionUpdate": "weird_kind", "payload": [1, 2, 3]}),
        update({"sessionUpdate": "session_info_update", "title": "A title"}),
        update({"sessionUpdate": "usage_update", "used": 1200, "size": 32000}),
        update(
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [{"name": "init", "description": "x" * 1000}] * 50,
            }
        ),
    ]
    for line in lines:
        await mm.raw(line)
    await mm.say(turn, "after garbage")


async def _badutf8(mm: FakeMM, turn: Turn, rest: str) -> None:
    head = json_text(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": turn.session.id,
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "@BAD@"},
                },
            },
        }
    ).encode()
    await mm.raw(head.replace(b"@BAD@", b"bad \xff\xfe bytes"))
    await mm.say(turn, "after badutf8")


async def _big_update(mm: FakeMM, turn: Turn, rest: str) -> None:
    count = max(1, int(rest) // 1024)
    commands = [{"name": f"cmd{i}", "description": "d" * 1000} for i in range(count)]
    body = {"sessionUpdate": "available_commands_update", "availableCommands": commands}
    await mm.update(turn.session.id, body)
    await mm.say(turn, "after big-update")


async def _stderr(mm: FakeMM, turn: Turn, rest: str) -> None:
    log(rest)


async def _error(mm: FakeMM, turn: Turn, rest: str) -> None:
    from acp import RequestError

    raise RequestError(-32603, rest)


async def _error_data(mm: FakeMM, turn: Turn, rest: str) -> None:
    from acp import RequestError

    raise RequestError(-32603, "Internal error", rest)


async def _crash(mm: FakeMM, turn: Turn, rest: str) -> None:
    status = int(rest or 2)
    await mm.say(turn, "crashing")
    log(f"panic: fake crash (exit status {status})")
    os._exit(status)


async def _close_stdout(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, "closing")
    mm.writer.close()
    with contextlib.suppress(OSError):
        os.close(1)
    await asyncio.Event().wait()


async def _pid(mm: FakeMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, f"pid {os.getpid()} pgid {os.getpgid(0)}")


async def _spawn_child(mm: FakeMM, turn: Turn, rest: str) -> None:
    child = subprocess.Popen(
        ["sleep", "1000"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    mm.children.append(child)
    await mm.say(turn, f"child {child.pid}")


COMMANDS = {
    "/say": _say,
    "/think": _think,
    "/chunks": _chunks,
    "/bigline": _bigline,
    "/slow": _slow,
    "/deaf": _deaf,
    "/plan": _plan,
    "/tools": _tools,
    "/tool": _tool,
    "/tool-as": _tool_as,
    "/parallel": _parallel,
    "/call": _call,
    "/cancel-request": _cancel_request,
    "/bash": _bash,
    "/permission-first": _permission_first,
    "/reject-cancels": _reject_cancels,
    "/dup-toolcall": _dup_toolcall,
    "/empty-input": _empty_input,
    "/deep-input": _deep_input,
    "/diff": _diff,
    "/terminal": _terminal,
    "/garbage": _garbage,
    "/badutf8": _badutf8,
    "/big-update": _big_update,
    "/stderr": _stderr,
    "/error": _error,
    "/error-data": _error_data,
    "/crash": _crash,
    "/close-stdout": _close_stdout,
    "/pid": _pid,
    "/spawn-child": _spawn_child,
}


# ---------------------------------------------------------------------------------------------


async def serve(config: Config) -> None:
    from acp import run_agent
    from acp.stdio import stdio_streams

    # mm (Go) has no recursion limit: nested data (/deep-input) must survive the SDK's deepcopy
    # of each message for the trace observer.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    # run_agent's stdio_buffer_limit_bytes, applied here because the writer is needed for /garbage.
    reader, writer = await stdio_streams(limit=STDIO_LIMIT)
    agent = FakeMM(config, writer)
    await run_agent(agent, writer, reader, use_unstable_protocol=True)
    if config.fake.get("ignore_stdin_eof"):
        await asyncio.Event().wait()


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] != "-acp" or argv[1] != "-config":
        log("usage: fake_mm.py -acp -config <agent.yaml>")
        return 2
    try:
        config = load_config(argv[2])
    except (OSError, ValueError) as exc:
        log(f"error: agent file: {exc}")
        return 1
    fake = config.fake
    banner = fake.get("banner", DEFAULT_BANNER)
    if banner:
        log(str(banner).replace("{pid}", str(os.getpid())))
    if "exit_before_initialize" in fake:
        log(str(fake.get("exit_message", DEFAULT_EXIT_MESSAGE)))
        return int(fake["exit_before_initialize"])
    try:
        asyncio.run(serve(config))
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
