"""What the client advertises at ``initialize`` beyond mm's tools extension: each capability
only when the client can serve it (an agent may then use it; a capability it cannot serve
would make it wait for ever or fail)."""

from __future__ import annotations

from typing import Any


def lent_capabilities(*, fs: bool, questions: bool, terminal_auth: bool) -> dict[str, Any]:
    """``ClientCapabilities`` fields: boolean config options always (session_state reads and
    sets them); ``fs`` with file-system handlers; ``elicitation.form`` with an
    ``on_elicitation``; ``auth.terminal`` when the caller runs terminal login methods."""
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
    return lent
