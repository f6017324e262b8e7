"""What the plugin reads of mm's agent file: whether it gives clients tools, and the
discovery mode it imposes on them."""

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
