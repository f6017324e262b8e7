"""Logging in to an agent (ACP ``authMethods`` and ``authenticate``). Part of
:class:`~minime.client.Client` (a mixin), kept apart: the client runs sessions; this is what
it does when the agent refuses one until the user logs in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import AuthRequired, Error, describe, method_names

if TYPE_CHECKING:
    from .client import Client


class Authentication:
    """The login requests of a Client."""

    def _auth_required(self: Client, what: str, exc: BaseException) -> AuthRequired:
        name = self.agent_info.get("title") or self.agent_info.get("name") or self.definition_label
        name = name or self.label
        methods = self.auth_methods
        how = f"its login methods: {method_names(methods)}" if methods else "it names no method"
        return AuthRequired(f"{name} needs a login ({what}: {describe(exc)}); {how}", methods)

    async def authenticate(self: Client, method_id: str) -> None:
        """``authenticate`` with one of the agent's ``authMethods``; any failure an Error."""
        self._check_alive()
        if not any(m.get("id") == method_id for m in self.auth_methods):
            offered = method_names(self.auth_methods) or "none"
            raise Error(f"no login method {method_id!r}; the agent offers: {offered}")
        try:
            await self.rpc.authenticate(method_id=method_id)
        except Exception as exc:
            if isinstance(exc, ConnectionError) or not self.alive:
                raise await self.death_or(exc) from None
            raise Error(f"authenticate failed: {describe(exc)}") from None
