"""What a client must know of mm's agent file: whether it gives clients tools at all, and the
discovery mode it imposes on them. A client in the other mode, or one whose file turns client
tools off, gets no tools, and only mm's stderr said why: these say it in plain words.
"""

from __future__ import annotations

from typing import Any

import msgspec


def read(path: str) -> dict[str, Any]:
    with open(path, "rb") as handle:
        data = msgspec.yaml.decode(handle.read())
    return data if isinstance(data, dict) else {}


def client_tools(path: str) -> dict[str, Any]:
    """The ``acp.clientTools`` block, or ``{}``."""
    acp = read(path).get("acp")
    block = acp.get("clientTools") if isinstance(acp, dict) else None
    return block if isinstance(block, dict) else {}


def named_discovery(block: dict[str, Any]) -> str | None:
    """The discovery an ``acp.clientTools`` block names, or None (mm then uses ``meta``)."""
    mode = block.get("discovery")
    return mode if mode in ("meta", "request") else None


def disabled(block: dict[str, Any]) -> bool:
    """``acp.clientTools.enabled: false``: mm offers the agent no client tools."""
    return block.get("enabled", True) is False


def mismatches(path: str, discovery: str) -> list[str]:
    """Why a client with tools in ``discovery`` mode would get none from mm, in plain words
    (none: ``[]``). A file that cannot be read gives ``[]`` (mm will say so), and so does a
    library installed without PyYAML (only the ``nvim`` extra brings it): no check then."""
    try:
        block = client_tools(path)
    except Exception:
        return []
    found = []
    if disabled(block):
        found.append(
            f"the agent file {path} turns client tools off (acp.clientTools.enabled: false): "
            "mm offers the agent none of this client's tools"
        )
    mode = named_discovery(block) or "meta"
    if discovery != mode:
        found.append(
            f"discovery={discovery!r} but the agent file {path} uses {mode!r} "
            f"(acp.clientTools.discovery): mm offers no tools to a client in another mode; "
            f"pass discovery={mode!r}"
        )
    return found
