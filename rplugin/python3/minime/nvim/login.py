""":MiniMeLogin: log in to an agent that needs it (ACP ``authenticate``). A method of type
``terminal`` is the agent's own login command (its argv plus the method's ``args``), run in a
Neovim terminal by Lua; any other is ``authenticate`` with its id. Then the ask that failed can
be repeated.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ..errors import Error, method_names
from . import ops
from .agent_pool import AgentPool
from .bridge import NvimBridge
from .events import LoginMethod
from .session_reopen import agent_name
from .wire_text import clean, clean_all

log = logging.getLogger("minime")


class Login:
    def __init__(self, pool: AgentPool, bridge: NvimBridge) -> None:
        self._pool = pool
        self._bridge = bridge

    async def run(self, payload: ops.Login) -> None:
        cwd = os.path.realpath(payload.cwd)
        client = await self._pool.client_for(payload)
        name = agent_name(client, payload.label)
        methods = client.auth_methods
        if not methods:
            self._bridge.notify(f"minime: {name} offers no login methods (authMethods)", "warn")
            return
        if not payload.method_id:
            self._bridge.rpc("pick_login", payload.thread, [_shown(m) for m in methods])
            return
        method = next((m for m in methods if m.get("id") == payload.method_id), None)
        if method is None:
            self._bridge.notify(
                f"minime: {name} has no login method {payload.method_id!r}; "
                f"its methods: {method_names(methods)}",
                "error",
            )
            return
        title = clean(str(method.get("name") or method["id"]))
        if method.get("type") == "terminal":
            argv = [*client.argv, *[str(a) for a in method.get("args") or []]]
            env = {**payload.agent_env, **(method.get("env") or {})}
            log.info("login %s in a terminal: %s", method["id"], " ".join(argv))
            self._bridge.rpc("login_terminal", cwd, clean_all(argv), clean_all(env), title)
            return
        try:
            await client.authenticate(method["id"])
        except Error as exc:
            self._bridge.notify(f"minime: login to {name} failed: {exc}", "error")
            return
        log.info("logged in to %s with %s", name, method["id"])
        self._bridge.notify(f"minime: logged in to {name} ({title}): ask again", "info")


def _shown(method: dict[str, Any]) -> LoginMethod:
    """One of the agent's authMethods, as :MiniMeLogin offers it."""
    description, kind = method.get("description"), method.get("type")
    return LoginMethod(
        id=clean(str(method.get("id") or "")),
        name=clean(str(method.get("name") or method.get("id") or "")),
        description=clean(str(description)) if description else None,
        type=clean(str(kind)) if kind else None,
    )
