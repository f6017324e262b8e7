"""The Neovim adapter: sessions keyed on cwd, turns rendered in Lua, permissions, tools.

Lua sends notifications (``dispatch``) on pynvim's thread; each is handed to the ACP loop
at once. The ACP loop talks back with ``nvim.async_call`` + async ``exec_lua`` — and, for
the editor tools, a sync ``exec_lua`` run on pynvim's thread and awaited as a future.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import os
import time
from typing import Any

from .. import permissions
from ..client import Client, connect
from ..errors import Error
from ..model import PermissionRequest
from ..session import Session
from . import agentfile
from .agent_env import agent_env
from .loop_thread import LoopThread
from .lua_tools import LuaTools
from .prompts import Prompts
from .render import Renderer, clean, to_lua

log = logging.getLogger("minime")

LOG_LINES = 2000


class RingLog(logging.Handler):
    """The plugin's own log, kept in memory for :MiniMeLog."""

    def __init__(self, lines: collections.deque[str]) -> None:
        super().__init__(logging.INFO)
        self._lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            message += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
        self._lines.append(f"{stamp} {record.levelname.lower()}: {message}")


class Host:
    def __init__(self, nvim: Any, log_to: str = "minime") -> None:
        """``log_to``: the logger whose records :MiniMeLog shows — ``"minime"`` in Neovim's
        shared python3 host; the root logger (``""``) in our own process, so the ACP SDK's
        records (it logs to the root) show too."""
        self.nvim = nvim
        self.loop_thread = LoopThread()
        self.options: dict[str, Any] = {}
        self.clients: dict[tuple[Any, ...], Client] = {}
        self.sessions: dict[str, Session] = {}
        self.opening: dict[str, asyncio.Future[Session]] = {}
        self._cancelled_start: set[str] = set()
        self._starting: dict[tuple[Any, ...], asyncio.Future[Client]] = {}
        # The tool context of a cwd's last accepted ask (for which tools to offer); set only by
        # an ask that starts a turn, so that one refused mid-turn changes nothing.
        self.tool_ctx: dict[str, dict[str, Any]] = {}
        self.tools = LuaTools(self.lua_call, lambda: self.options, self.tool_ctx)
        self.log_lines: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        self.stderr_lines: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        self.prompts = Prompts(
            self.lua, lambda: self.options, self._flush, self.loop_thread.call_soon
        )
        self.renderer: Renderer | None = None
        handler = RingLog(self.log_lines)
        logging.getLogger(log_to).addHandler(handler)
        logging.getLogger(log_to).setLevel(logging.INFO)
        self.loop_thread.call_soon(self._make_renderer)

    def _make_renderer(self) -> None:
        self.renderer = Renderer(self._send_batch)

    # -- talking to Neovim (from the ACP loop) ----------------------------------------

    def lua(self, code: str, *args: Any) -> None:
        """Fire-and-forget Lua on pynvim's thread."""
        self.nvim.async_call(lambda: self.nvim.exec_lua(code, *args, async_=True))

    async def lua_call(self, code: str, *args: Any) -> Any:
        """Lua whose answer the ACP loop needs (editor tools): awaited, never blocking pynvim."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            if future.cancelled():
                return
            try:
                future.set_result(self.nvim.exec_lua(code, *args))
            except Exception as exc:  # surfaced to the tool call as its error
                future.set_exception(exc)

        self.nvim.async_call(run)
        return await asyncio.wrap_future(future)

    def _send_batch(self, key: str, batch: list[dict[str, Any]]) -> None:
        self.lua("require('minime.ui.turn').apply(...)", key, batch)

    def render(self, key: str, item: dict[str, Any]) -> None:
        assert self.renderer is not None
        self.renderer.push(key, item)

    def notify_user(self, message: str, level: str = "error") -> None:
        self.lua("require('minime').notify(...)", clean(message), level)

    # -- notifications from Lua (on pynvim's thread) --------------------------------

    def dispatch(self, op: str, payload: Any) -> None:
        payload = payload if isinstance(payload, dict) else {}
        if op == "permission_answer":
            self.prompts.answer(payload)
            return
        if op == "tool_result":
            self.tools.answer(payload)
            return
        if op == "log":
            self.show_log()
            return
        handler = getattr(self, f"op_{op}", None)
        if handler is None:
            log.warning("unknown request from Lua: %s", op)
            return
        self.loop_thread.submit(self._guard(op, handler(payload)))

    async def _guard(self, op: str, coro: Any) -> None:
        try:
            await coro
        except Exception as exc:
            log.exception("%s failed", op)
            self.notify_user(f"minime: {op} failed: {exc}")

    def show_log(self) -> None:
        lines = ["# minime log", *self.log_lines, "", "# agent stderr", *self.stderr_lines]
        self.nvim.exec_lua("require('minime').show_log(...)", [clean(x) for x in lines])

    # -- operations (on the ACP loop) --------------------------------------------------

    async def op_setup(self, payload: dict[str, Any]) -> None:
        self.options = payload

    async def op_ask(self, payload: dict[str, Any]) -> None:
        cwd = os.path.realpath(payload["cwd"])
        prompt = payload.get("prompt") or ""
        if self._refused_while_busy(cwd, payload, ":MiniMeCancel stops it"):
            return
        # This ask's selection (kept in Lua, where it was made) is the one the turn's tools see.
        if isinstance(payload.get("ask_id"), int):
            self.lua("require('minime.editor.asks').accept(...)", cwd, payload["ask_id"])
        session = self.sessions.get(cwd)
        self.render(cwd, {"kind": "begin", "prompt": clean(prompt), "cwd": cwd, "session_id": ""})
        if session is None or not session.client.alive:
            self.render(cwd, {"kind": "notice", "text": "starting the agent…"})
        self._cancelled_start.discard(cwd)
        try:
            session = await self._session_for(cwd, payload)
        except Error as exc:
            self._fail(cwd, str(exc))
            return
        if cwd in self._cancelled_start:  # :MiniMeCancel while the agent was starting
            self._cancelled_start.discard(cwd)
            self.render(cwd, {"kind": "done", "stop_reason": "cancelled", "cwd": cwd})
            return
        await self._run_turn(session, cwd, payload.get("context") or prompt)

    async def _run_turn(self, session: Session, cwd: str, prompt: str) -> None:
        try:
            async for event in session.stream(prompt):
                item = to_lua(event)
                if event.kind == "done":
                    item["session_id"] = session.session_id
                    item["cwd"] = cwd
                self.render(cwd, item)
        except Error as exc:
            self._fail(cwd, str(exc), session.session_id)
            if not session.client.alive:
                self._drop_client(session.client)

    def _fail(self, cwd: str, message: str, session_id: str = "") -> None:
        self.render(
            cwd,
            {
                "kind": "done",
                "stop_reason": "error",
                "error": clean(message),
                "cwd": cwd,
                "session_id": session_id,
            },
        )

    def _refused_while_busy(self, cwd: str, payload: dict[str, Any], advice: str) -> bool:
        """Refuse (and say so) while a turn runs in ``cwd``; else take the ask's tool context."""
        if not self._busy(cwd):
            self._take_tool_ctx(cwd, payload)
            return False
        self.notify_user(f"minime: a turn is already running in {cwd} — {advice}", "warn")
        return True

    def _busy(self, cwd: str) -> bool:
        session = self.sessions.get(cwd)
        return session is not None and session.busy

    def _take_tool_ctx(self, cwd: str, payload: dict[str, Any]) -> None:
        if isinstance(payload.get("tool_ctx"), dict):
            self.tool_ctx[cwd] = payload["tool_ctx"]

    async def op_cancel(self, payload: dict[str, Any]) -> None:
        cwd = os.path.realpath(payload.get("cwd") or os.getcwd())
        session = self.sessions.get(cwd)
        if cwd in self.opening:  # the ask is still starting the agent: its turn will not run
            self._cancelled_start.add(cwd)
        elif session is not None:
            await session.cancel()

    async def op_reset(self, payload: dict[str, Any]) -> None:
        cwd = os.path.realpath(payload.get("cwd") or os.getcwd())
        session = self.sessions.pop(cwd, None)
        if session is not None:
            if session.busy:
                await session.cancel()
            session.client.forget(session)
        self.notify_user(f"minime: new conversation for {cwd}", "info")

    async def op_stop(self, payload: dict[str, Any]) -> None:
        clients = list(self.clients.values())
        self.clients.clear()
        self.sessions.clear()
        for client in clients:
            await client.close(grace=2.0)
        if not payload.get("quiet"):
            self.notify_user("minime: agent stopped", "info")

    async def op_sessions(self, payload: dict[str, Any]) -> None:
        """The agent's earlier sessions for this cwd, for Lua to offer (:MiniMeSessions)."""
        cwd = os.path.realpath(payload["cwd"])
        if not self._busy(cwd):  # a running turn keeps the context it was asked with
            self._take_tool_ctx(cwd, payload)
        client = await self._client_for(payload)
        name = _agent_name(client)
        caps = client.agent_capabilities
        listing = "list" in (caps.get("sessionCapabilities") or {})
        how = _reopen_method(caps)
        if how is None and not listing:
            self.notify_user(
                f"minime: {name} keeps no sessions to reopen "
                "(it offers neither session/list nor session/load)",
                "warn",
            )
            return
        if how is None:
            self.notify_user(
                f"minime: {name} lists sessions but cannot reopen them "
                "(it offers neither session/load nor session/resume)",
                "warn",
            )
            return
        try:
            found = await client.list_sessions(cwd)
        except Error:
            raise  # the agent died: said as such by _guard
        except Exception as exc:
            log.info("session/list failed: %s", exc)
            self.notify_user(f"minime: {name} does not list its sessions (session/list)", "warn")
            return
        items = [
            {
                "session_id": clean(str(item.get("sessionId") or "")),
                "title": clean(str(item.get("title") or "")),
                "updated_at": clean(str(item.get("updatedAt") or "")),
                "cwd": clean(str(item.get("cwd") or "")),
            }
            for item in found
            if item.get("sessionId")
        ]
        if not items:
            self.notify_user(f"minime: no earlier sessions of {name} for {cwd}", "info")
            return
        self.lua("require('minime').pick_session(...)", cwd, items, how)

    async def op_load_session(self, payload: dict[str, Any]) -> None:
        """Reopen an earlier session in this cwd: its history replays into the turn float."""
        cwd = os.path.realpath(payload["cwd"])
        session_id = str(payload["session_id"])
        title = str(payload.get("title") or "") or session_id
        if self._refused_while_busy(cwd, payload, ":MiniMeCancel it before loading"):
            return
        current = self.sessions.get(cwd)
        client = await self._client_for(payload)
        how = _reopen_method(client.agent_capabilities)
        if how is None:
            self.notify_user(f"minime: {_agent_name(client)} cannot reopen sessions", "warn")
            return
        prompt = clean(f"(loaded session {title})")
        self.render(cwd, {"kind": "begin", "prompt": prompt, "cwd": cwd, "session_id": session_id})

        def replayed(event: Any) -> None:
            self.render(cwd, to_lua(event))

        try:
            if how == "load":
                session = await client.load_session(session_id, cwd, on_update=replayed)
            else:
                session = await client.resume_session(session_id, cwd)
        except Error as exc:
            self._fail(cwd, str(exc), session_id)
            return
        if current is not None and (current.client, current.session_id) != (client, session_id):
            current.client.forget(current)
        self.sessions[cwd] = session
        log.info("session %s reopened (session/%s) for %s", session_id, how, cwd)
        note = "the agent does not replay history on resume; " if how == "resume" else ""
        self.render(cwd, {"kind": "notice", "text": f"{note}the next ask here continues it"})
        self.render(
            cwd, {"kind": "done", "stop_reason": "end_turn", "cwd": cwd, "session_id": session_id}
        )

    # -- sessions keyed on cwd -----------------------------------------------------------

    async def _session_for(self, cwd: str, payload: dict[str, Any]) -> Session:
        session = self.sessions.get(cwd)
        if session is not None and session.client.alive:
            return session
        pending = self.opening.get(cwd)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Session] = asyncio.get_running_loop().create_future()
        self.opening[cwd] = future
        try:
            client = await self._client_for(payload)
            session = await client.new_session(cwd)
            self.sessions[cwd] = session
            log.info("session %s for %s", session.session_id, cwd)
            future.set_result(session)
            return session
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a waiting ask reports it itself
            raise
        finally:
            self.opening.pop(cwd, None)

    def _agent_argv(self, payload: dict[str, Any]) -> tuple[list[str], str]:
        """(command, discovery) for this ask. Lua resolved the agent (lua/minime/agents/); an
        agent with an ``agent_file`` (mm) gets the discovery that file names: mm offers tools
        only to a client in the file's mode."""
        command = payload.get("agent_cmd")
        if not command:
            raise Error("no agent command: the agent's definition gave none (see :h minime-agents)")
        wanted = payload.get("discovery")
        config = payload.get("agent_file") or None
        if not config:
            return list(command), wanted or "meta"
        try:
            named = agentfile.discovery_mode(config)
        except FileNotFoundError:
            raise Error(f"agent file not found: {config}") from None
        except Exception as exc:
            raise Error(f"cannot read the agent file {config}: {exc}") from None
        mode = named or "meta"
        if wanted and wanted != mode:
            log.warning(
                "discovery %r ignored: the agent file %s uses %r (acp.clientTools.discovery)",
                wanted,
                config,
                mode,
            )
            self.notify_user(
                f"minime: discovery = {wanted!r} conflicts with the agent file ({mode!r}); "
                f"using {mode!r}",
                "warn",
            )
        else:
            log.info("discovery %s (from %s)", mode, "the agent file" if named else "mm's default")
        return list(command), mode

    async def _client_for(self, payload: dict[str, Any]) -> Client:
        command, discovery = self._agent_argv(payload)
        env = payload.get("agent_env") or {}
        key = (tuple(command), tuple(sorted(env.items())), discovery)
        client = self.clients.get(key)
        if client is not None and client.alive:
            return client
        # Asks in several cwds at once share one agent: the first one starts it.
        starting = self._starting.get(key)
        if starting is not None:
            return await asyncio.shield(starting)
        future: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._starting[key] = future
        try:
            client = await self._start_client(key, payload, command, discovery)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: each waiting ask reports it itself
            raise
        finally:
            self._starting.pop(key, None)
        future.set_result(client)
        return client

    async def _start_client(
        self,
        key: tuple[Any, ...],
        payload: dict[str, Any],
        command: list[str],
        discovery: str,
    ) -> Client:
        source = self.tools.source(discovery)
        client = await connect(
            command=command,
            env=agent_env(payload.get("agent_env")),
            tools=source,
            discovery=discovery,
            on_permission=self.ask_permission,
            on_stderr=self._on_stderr,
            cwd=os.path.realpath(payload["cwd"]),
            ready_timeout=_seconds(payload.get("ready_timeout"), 60.0),
            cancel_timeout=_seconds(payload.get("cancel_timeout"), 30.0),
        )
        self.clients[key] = client
        assert client.process is not None
        self.lua("require('minime').track_agent(...)", client.process.pid)
        log.info("agent started: %s (pid %d)", " ".join(client.argv), client.process.pid)
        return client

    def _drop_client(self, client: Client) -> None:
        for key, known in list(self.clients.items()):
            if known is client:
                del self.clients[key]
        for cwd, session in list(self.sessions.items()):
            if session.client is client:
                del self.sessions[cwd]

    def _on_stderr(self, line: str) -> None:
        self.stderr_lines.append(line)

    # -- permissions ----------------------------------------------------------------------

    async def ask_permission(self, request: PermissionRequest) -> permissions.Decision:
        return await self.prompts.ask(request, self._cwd_of(request.session_id))

    def _flush(self) -> None:
        if self.renderer is not None:
            self.renderer.flush()

    def _cwd_of(self, session_id: str) -> str:
        for cwd, session in self.sessions.items():
            if session.session_id == session_id:
                return cwd
        return ""

    # -- shutdown ----------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Neovim is gone: end every agent's process tree now, without waiting on asyncio."""
        for client in list(self.clients.values()):
            if client.process is not None:
                client.process.kill_tree()
        self.loop_thread.stop()


def _agent_name(client: Client) -> str:
    info = client.agent_info
    return str(info.get("title") or info.get("name") or client.label)


def _reopen_method(capabilities: dict[str, Any]) -> str | None:
    """How the agent reopens a session: "load" (replays history), "resume", or None."""
    if capabilities.get("loadSession"):
        return "load"
    if "resume" in (capabilities.get("sessionCapabilities") or {}):
        return "resume"
    return None


def _seconds(value: Any, default: float) -> float:
    """A timeout option from Lua: a positive number of seconds, else the default."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return default
