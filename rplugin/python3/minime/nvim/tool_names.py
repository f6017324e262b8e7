"""The editor tools' names as the receiving agent's model sees them.

The tools' texts (lua/minime/tools/*.lua: descriptions, errors) name each other as mm's model
sees them, ``client_open_buffers``. Over MCP every agent names them its own way (Claude Code
``mcp__minime__open_buffers``, OpenCode ``minime_open_buffers``, Codex ``open_buffers`` in its
``mcp__minime`` namespace): a model that follows "call client_open_buffers" there calls a tool
that does not exist. The agent's definition says its way (``tool_names``, lua/minime/agents/);
this rewrites the texts to it. Only texts of ours: a tool's value (a file's text) is never
touched; Lua formats the notes it writes into values itself (``tools.call``'s ``names``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

MM_NAMES = "client_%s"  # what mm makes of a client tool's name (minime.tools.model_name)

Rename = Callable[[str], str]


def shown_name(names: str, tool: str) -> str:
    """``tool`` as the agent's model sees it: ``names`` with its ``%s`` replaced."""
    return names.replace("%s", tool, 1)


def renamer(names: str, tools: Iterable[str]) -> Rename:
    """A function that rewrites each ``client_<tool>`` of ``tools`` in a text to its name in
    ``names``; the identity for mm's own names."""
    if names == MM_NAMES:
        return lambda text: text
    by_mm_name = {f"client_{tool}": shown_name(names, tool) for tool in tools}
    if not by_mm_name:
        return lambda text: text
    # The longest first: client_definition must not take the start of client_definitions.
    alternatives = "|".join(map(re.escape, sorted(by_mm_name, key=len, reverse=True)))
    pattern = re.compile(rf"(?<![A-Za-z0-9_])(?:{alternatives})(?![A-Za-z0-9_])")
    return lambda text: pattern.sub(lambda m: by_mm_name[m.group(0)], text)


def renamed_schema(schema: Any, rename: Rename) -> Any:
    """An input schema with the ``description`` texts in it renamed (its keys untouched)."""
    if isinstance(schema, dict):
        return {
            key: rename(value)
            if key == "description" and isinstance(value, str)
            else renamed_schema(value, rename)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [renamed_schema(item, rename) for item in schema]
    return schema
