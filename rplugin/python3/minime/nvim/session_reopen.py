"""Reopening an agent's earlier sessions (:MiniMeSessions): list them for Lua to offer, then
load one into a thread (its history replays into its conversation) or resume it.
"""

from __future__ import annotations

import logging
from typing import Any

from ..client import Client
from ..errors import Error
from ..session_state import STATE_KINDS
from . import events, ops
from .agent_pool import AgentPool
from .bridge import NvimBridge
from .conversation import Conversation
from .render import to_lua
from .session_modes import SessionModes
from .thread_registry import Threads
from .wire_text import clean

log = logging.getLogger("minime")


class SessionReopener:
    """A reopened session replays into its thread's ``conversation`` and becomes its own."""

    def __init__(
        self,
        pool: AgentPool,
        bridge: NvimBridge,
        conversation: Conversation,
        threads: Threads,
        modes: SessionModes,
    ) -> None:
        self._threads = threads
        self._pool = pool
        self._bridge = bridge
        self._conversation = conversation
        self._modes = modes

    async def list(self, payload: ops.Sessions) -> None:
        """The agent's earlier sessions for the thread's cwd, for Lua to offer
        (:MiniMeSessions)."""
        thread = self._threads.get(payload.thread, payload.cwd)
        cwd = thread.cwd
        if not thread.busy:  # a running turn keeps the tools it was asked with
            thread.take_tools(payload)
        client = await self._pool.client_for(payload)
        name = agent_name(client, payload.label)
        caps = client.agent_capabilities
        listing = "list" in (caps.get("sessionCapabilities") or {})
        how = _reopen_method(caps)
        if how is None and not listing:
            self._bridge.notify(
                f"minime: {name} keeps no sessions to reopen "
                "(it offers neither session/list nor session/load)",
                "warn",
            )
            return
        if how is None:
            self._bridge.notify(
                f"minime: {name} lists sessions but cannot reopen them "
                "(it offers neither session/load nor session/resume)",
                "warn",
            )
            return
        if not listing:  # gemini-cli: it loads a session by its id, and lists none
            self._bridge.notify(
                f"minime: {name} does not list its sessions (it offers no session/list): "
                "there are none to pick",
                "warn",
            )
            return
        try:
            found = await client.list_sessions(cwd)
        except Error as exc:
            if not client.alive:
                raise  # the agent died: said as such by the host's guard
            self._bridge.notify(f"minime: {name} did not list its sessions: {exc}", "warn")
            return
        except Exception as exc:
            log.info("session/list failed: %s", exc)
            self._bridge.notify(f"minime: {name} does not list its sessions (session/list)", "warn")
            return
        # A title the agent gave an open session since (session_info_update) names it.
        titles = {sid: s.title for sid, s in client.sessions.items() if s.title}
        items = [
            events.SessionItem(
                session_id=clean(str(item.get("sessionId") or "")),
                title=clean(str(titles.get(str(item["sessionId"])) or item.get("title") or "")),
                updated_at=clean(str(item.get("updatedAt") or "")),
                cwd=clean(str(item.get("cwd") or "")),
            )
            for item in found
            if item.get("sessionId")
        ]
        if not items:
            self._bridge.notify(f"minime: no earlier sessions of {name} for {cwd}", "info")
            return
        kept = caps.get("sessionCapabilities") or {}
        manage = events.SessionActions(close="close" in kept, delete="delete" in kept)
        self._bridge.rpc("pick_session", thread.id, items, how, manage)

    async def manage(self, payload: ops.ManageSession) -> None:
        """Close (``session/close``) or delete (``session/delete``) a listed session; if it is
        a thread's, the next ask there starts a new one."""
        client = await self._pool.client_for(payload)
        name = agent_name(client, payload.label)
        title = payload.title or payload.session_id
        try:
            if payload.action == "close":
                await client.close_session(payload.session_id)
            else:
                await client.delete_session(payload.session_id)
        except Error as exc:
            if not client.alive:
                raise
            self._bridge.notify(f"minime: {name} did not {payload.action} {title}: {exc}", "error")
            return
        owner = self._threads.of_session(payload.session_id)
        if owner is not None and owner.client is client:
            owner.lost_session()
            self._modes.publish(owner, None)
        done = "closed" if payload.action == "close" else "deleted"
        self._bridge.notify(f"minime: session {title} {done} ({name})", "info")

    async def load(self, payload: ops.LoadSession) -> None:
        """Reopen an earlier session in the thread: its history replays into its
        conversation."""
        thread = self._threads.get(payload.thread, payload.cwd)
        cwd = thread.cwd
        session_id = payload.session_id
        title = payload.title or session_id
        refusal = thread.refusal(":MiniMeCancel it before loading")
        if refusal is not None:
            self._bridge.notify(refusal, "warn")
            return
        thread.take_tools(payload)
        client = await self._pool.client_for(payload)
        how = _reopen_method(client.agent_capabilities)
        if how is None:
            self._bridge.notify(
                f"minime: {agent_name(client, payload.label)} cannot reopen sessions", "warn"
            )
            return
        prompt = clean(f"(loaded session {title})")
        label = clean(payload.label or payload.agent or "")
        begin = events.Begin(
            prompt=prompt, cwd=cwd, session_id=clean(session_id), agent=label, fresh=True
        )
        thread.take_agent(payload)
        if thread.named is None and payload.title:
            thread.named = payload.title

        def render(item: events.LuaEvent) -> None:
            self._conversation.render(thread, item)

        render(begin)

        holder: list[Any] = []

        def replayed(event: Any) -> None:
            if holder and self._modes.follow(thread, holder[0], event):
                return
            if event.kind not in STATE_KINDS:
                render(to_lua(event))

        try:
            if how == "load":
                session = await client.load_session(session_id, cwd, on_update=replayed)
            else:
                session = await client.resume_session(session_id, cwd)
        except Error as exc:
            self._conversation.fail(thread, str(exc), session_id)
            return
        self._pool.adopt(thread, client, session)
        holder.append(session)
        await self._modes.opened(thread, session, payload.mode)
        log.info("session %s reopened (session/%s) in thread %s", session_id, how, thread.id)
        note = "the agent does not replay history on resume; " if how == "resume" else ""
        render(events.Notice(f"{note}the next ask here continues it"))
        render(events.Done(stop_reason="end_turn", cwd=cwd, session_id=clean(session_id)))


def agent_name(client: Client, label: str | None) -> str:
    """The agent's own name; else its definition's label (``qwen-code``), not the program
    that runs it (``node``)."""
    info = client.agent_info
    return str(
        info.get("title") or info.get("name") or label or client.definition_label or client.label
    )


def _reopen_method(capabilities: dict[str, Any]) -> str | None:
    """How the agent reopens a session: "load" (replays history), "resume", or None."""
    if capabilities.get("loadSession"):
        return "load"
    if "resume" in (capabilities.get("sessionCapabilities") or {}):
        return "resume"
    return None
