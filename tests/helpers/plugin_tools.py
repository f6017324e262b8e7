"""A Neovim with the plugin set up on the offline demo agent, whose agent file names the
client-tool discovery. Used by test_plugin_tools.py and test_editor_tools_attacks.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nvim_harness import REPO, start
from plugin_harness import agent_file, init


def yolo_agent_file(directory: Path, discovery: str | None) -> str:
    tools: dict[str, Any] = {} if discovery is None else {"discovery": discovery}
    return agent_file(directory, trace=False, yolo=True, acp={"clientTools": tools})


def demo_options(tmp_path: Path, file_discovery: str | None, **opts: Any) -> dict[str, Any]:
    """setup()'s options: the demo agent, an agent file naming `file_discovery`, and `opts`."""
    config = yolo_agent_file(tmp_path, file_discovery)
    return {"mm": str(REPO / "demo" / "mm"), "config": config, **opts}


def open_editor(tmp_path: Path, file_discovery: str | None, **opts: Any) -> Any:
    """A Neovim whose agent file names `file_discovery`; `opts` go to setup()."""
    return start(init(demo_options(tmp_path, file_discovery, **opts)))
