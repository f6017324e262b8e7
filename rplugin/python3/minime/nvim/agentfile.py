"""What the plugin reads of mm's agent file (the library's minime.agent_file): whether it
gives clients tools, and the discovery mode it imposes on them."""

from __future__ import annotations

from ..agent_file import client_tools, disabled, named_discovery, read

__all__ = ["client_tools", "disabled", "named_discovery", "read"]
