"""What the client advertises at ``initialize`` beyond mm's tools extension: each capability
only when the client can serve it (an agent may then use it; a capability it cannot serve
would make it wait for ever or fail)."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

log = logging.getLogger("minime")


def lent_capabilities(
    *, fs: bool, questions: bool, terminal_auth: bool, terminal: bool = False
) -> dict[str, Any]:
    """``ClientCapabilities`` fields: boolean config options always (session_state reads and
    sets them); ``fs`` with file-system handlers; ``elicitation.form`` with an
    ``on_elicitation``; ``auth.terminal`` when the caller runs terminal login methods;
    ``terminal`` when the client runs the agent's commands (terminals.py)."""
    from acp.schema import (
        AuthCapabilities,
        BooleanConfigOptionCapabilities,
        ClientSessionCapabilities,
        ElicitationCapabilities,
        ElicitationFormCapabilities,
        FileSystemCapabilities,
        SessionConfigOptionsCapabilities,
    )

    options = SessionConfigOptionsCapabilities(boolean=BooleanConfigOptionCapabilities())
    lent: dict[str, Any] = {"session": ClientSessionCapabilities(config_options=options)}
    if fs:
        lent["fs"] = FileSystemCapabilities(read_text_file=True, write_text_file=True)
    if questions:
        lent["elicitation"] = ElicitationCapabilities(form=ElicitationFormCapabilities())
    if terminal_auth:
        lent["auth"] = AuthCapabilities(terminal=True)
    if terminal:
        lent["terminal"] = True
    return lent


def session_roots(agent_capabilities: dict[str, Any], directories: Sequence[str]) -> dict[str, Any]:
    """``additional_directories`` for session/new, where the agent advertises them."""
    if not directories:
        return {}
    if "additionalDirectories" not in (agent_capabilities.get("sessionCapabilities") or {}):
        log.info("additional directories not sent: the agent does not advertise them")
        return {}
    return {"additional_directories": [os.path.abspath(d) for d in directories]}
