"""The environment the plugin gives its agent, passed to the agent alone.

Never written into ``os.environ``: on the ``:UpdateRemotePlugins`` route the host shares one
Python process with every other remote plugin.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping


def agent_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    """``extra`` (the user's ``agent.env``) over ``$MINIME_PYTHON``: demo/mm runs the offline
    demo agent with that interpreter, by default the host's own, which has the ACP SDK."""
    return {"MINIME_PYTHON": os.environ.get("MINIME_PYTHON", sys.executable), **(extra or {})}
