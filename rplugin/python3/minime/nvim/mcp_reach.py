"""Whether an agent given the editor's MCP server ever started it: some drop a client's
``mcpServers`` without a word (gemini-cli in a folder it does not trust; agy-acp, copilot-cli
and oh-my-pi were reported to), and their model then never sees an editor tool. When a
session's first turn ends and its bridge never came, the user is told once per agent, with
what to check (the definition's ``mcp_hint``). A first turn cut short (cancelled, failed)
says nothing: the agent may start its servers late.
"""

from __future__ import annotations

import logging
import weakref

from ..session import Session
from . import ops
from .bridge import NvimBridge
from .thread import Thread

log = logging.getLogger("minime")

# What to check when the definition says nothing more precise.
GENERIC_HINT = (
    "check that it takes the MCP servers a client passes (session/new's mcpServers): its "
    "settings, its trust of this folder"
)


class McpReach:
    def __init__(self, bridge: NvimBridge) -> None:
        self._bridge = bridge
        self._checked: weakref.WeakSet[Session] = weakref.WeakSet()
        self._told: weakref.WeakSet[object] = weakref.WeakSet()  # the clients said of

    def turn_ended(self, thread: Thread, session: Session, ask: ops.AgentOp) -> None:
        """A turn of ``session`` (``thread``'s) ended as the agent ended it: after its first,
        say whether the bridge never came."""
        client = thread.client
        if ask.editor_tools != "mcp" or session in self._checked or client is None:
            return
        self._checked.add(session)
        if client.mcp.reached(session.session_id) is not False or client in self._told:
            return
        self._told.add(client)
        name = session.agent_name
        log.warning("%s never started the editor's MCP server (%s)", name, session.session_id)
        self._bridge.notify(
            f"minime: {name} never started the editor's MCP server in this session's first "
            f"turn: its model cannot reach your buffers. {ask.mcp_hint or GENERIC_HINT}",
            "warn",
        )
