"""minime — drive the mini-me agent (``mm -acp``) over ACP, and lend it your own tools.

The public names are imported lazily: loading this package stays cheap (the Neovim host
imports it at start), and the ACP SDK itself is imported only when an agent is started.
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "start": "agent",
    "Agent": "agent",
    "connect": "client",
    "Client": "client",
    "Session": "session",
    "Branch": "branch",
    "Exchange": "history",
    "Checkpoints": "checkpoints",
    "Rewound": "checkpoints",
    "Error": "errors",
    "Busy": "errors",
    "AuthRequired": "errors",
    "Tool": "tools",
    "ALLOW": "permissions",
    "REJECT": "permissions",
    "choose": "permissions",
    "Decision": "permissions",
    "Event": "model",
    "Result": "model",
    "ToolCall": "model",
    "ToolCallLocation": "model",
    "SessionMode": "model",
    "SessionModes": "model",
    "ConfigOption": "model",
    "ConfigValue": "model",
    "AvailableCommand": "model",
    "ToolRequest": "model",
    "PermissionRequest": "model",
    "PermissionOption": "model",
    "ElicitationRequest": "elicitations",
    "ElicitationAnswer": "elicitations",
}

__all__ = [
    "ALLOW",
    "REJECT",
    "Agent",
    "AuthRequired",
    "AvailableCommand",
    "Branch",
    "Busy",
    "Checkpoints",
    "Client",
    "ConfigOption",
    "ConfigValue",
    "Decision",
    "ElicitationAnswer",
    "ElicitationRequest",
    "Error",
    "Event",
    "Exchange",
    "PermissionOption",
    "PermissionRequest",
    "Result",
    "Rewound",
    "Session",
    "SessionMode",
    "SessionModes",
    "Tool",
    "ToolCall",
    "ToolCallLocation",
    "ToolRequest",
    "choose",
    "connect",
    "start",
]

if TYPE_CHECKING:
    from .agent import Agent, start
    from .branch import Branch
    from .checkpoints import Checkpoints, Rewound
    from .client import Client, connect
    from .elicitations import ElicitationAnswer, ElicitationRequest
    from .errors import AuthRequired, Busy, Error
    from .history import Exchange
    from .model import (
        AvailableCommand,
        ConfigOption,
        ConfigValue,
        Event,
        PermissionOption,
        PermissionRequest,
        Result,
        SessionMode,
        SessionModes,
        ToolCall,
        ToolCallLocation,
        ToolRequest,
    )
    from .permissions import ALLOW, REJECT, Decision, choose
    from .session import Session
    from .tools import Tool


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'minime' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


# Neovim's python3 host (the `:UpdateRemotePlugins` route) imports this package and looks
# for a class marked @pynvim.plugin in it; only then is the Neovim adapter loaded.
if "pynvim.plugin.host" in sys.modules:
    from .nvim.rplugin import MiniMePlugin  # noqa: F401
