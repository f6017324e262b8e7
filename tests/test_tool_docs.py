"""doc/minime.txt's `*minime-tool-<name>*` entries name every tool of lua/minime/tools/ with its
parameters, as the tool files declare them, and the README's list names every tool.

The tool files are the truth (each returns {description, input_schema, handler}); they are read
in a real Neovim, so a tool added, renamed or given a parameter fails here until documented.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from nvim_harness import REPO, start

SPECS = "return require('minime.tools').builtin_specs()"


@pytest.fixture(scope="module")
def tools() -> dict[str, tuple[list[str], set[str]]]:
    """name -> (parameters in declared order, the required ones)."""
    with start() as nvim:
        specs: list[dict[str, Any]] = nvim.exec_lua(SPECS)
    found = {}
    for spec in specs:
        schema = json.loads(spec["input_schema"])
        found[spec["name"]] = (
            list(schema.get("properties") or {}),
            set(schema.get("required") or []),
        )
    files = sorted(p.stem for p in (REPO / "lua" / "minime" / "tools").glob("*.lua"))
    assert sorted(found) == [f for f in files if f != "init"], "each file is one tool"
    return found


def readme_names() -> set[str]:
    """The tools the README's "Agents" section names (the list of editor tools)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Agents\n", 1)[1].split("\n## ", 1)[0]
    listed = section.split("The editor tools", 1)[1].split("(`:h minime-tools`)", 1)[0]
    return set(re.findall(r"`(\w+)`", listed))


def vimdoc_heads() -> dict[str, str]:
    """The `*minime-tool-<name>*` lines: tool name -> the text before the tag."""
    doc = (REPO / "doc" / "minime.txt").read_text(encoding="utf-8")
    heads = re.findall(r"^(\S.*?)\s+\*minime-tool-([\w-]+)\*$", doc, flags=re.M)
    return {name: head for head, name in heads}


def test_the_readme_names_each_tool(tools: dict[str, tuple[list[str], set[str]]]) -> None:
    assert readme_names() == set(tools), "the README lists every tool file, and no other"


def test_the_vimdoc_entries_name_each_tool_with_its_parameters(
    tools: dict[str, tuple[list[str], set[str]]],
) -> None:
    heads = vimdoc_heads()
    assert sorted(heads) == sorted(tools), "one *minime-tool-<name>* entry per tool file"
    for name, (params, required) in tools.items():
        expected = ", ".join(p if p in required else p + "?" for p in params)
        assert heads[name] == f"{name} {{{expected}}}", (name, heads[name])
