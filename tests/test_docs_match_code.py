"""The docs state what the code defines: every option with its default (doc/minime.txt's
setup() block and `*minime-config*` entries, which scripts/gen-help writes from
lua/minime/config.lua: this checks that what it wrote evaluates to the defaults) is config.lua's,
a default quoted in prose is the default, and the agents the docs list are the files of
lua/minime/agents/. A default changed or an agent added, renamed or removed in the code fails
here until the docs say so (the tools: test_tool_docs.py).

The Lua texts are evaluated by a real Neovim, with `nil` written as a marker so that an option
whose default is nil is still there to compare."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from nvim_harness import REPO, start

README = (REPO / "README.md").read_text(encoding="utf-8")
FAULTS = (REPO / "notes" / "faults.md").read_text(encoding="utf-8")
DOC = (REPO / "doc" / "minime.txt").read_text(encoding="utf-8")
CONFIG = (REPO / "lua" / "minime" / "config.lua").read_text(encoding="utf-8")
AGENTS = sorted(
    p.stem for p in (REPO / "lua" / "minime" / "agents").glob("*.lua") if p.stem != "init"
)
NIL = "<nil>"

# Evaluates each Lua text (a table expression) and answers it as JSON; {} reads as [].
EVAL = """
local out = {}
for _, text in ipairs(...) do
  local chunk, err = loadstring("return " .. text)
  if not chunk then error(err .. " in: " .. text) end
  out[#out + 1] = vim.json.encode(chunk())
end
return out
"""


def lua_value(text: str) -> str:
    """A Lua expression as evaluable text: comments dropped, `nil` made a string marker."""
    text = re.sub(r"--[^\n]*", "", text)
    return re.sub(r"\bnil\b", f'"{NIL}"', text)


@pytest.fixture(scope="module")
def evaluate() -> Any:
    with start() as nvim:

        def run(texts: list[str]) -> list[Any]:
            return [json.loads(s) for s in nvim.exec_lua(EVAL, [lua_value(t) for t in texts])]

        yield run


def config_defaults_text() -> str:
    """The table config.lua's defaults() returns, as written."""
    body = re.search(
        r"^local function defaults\(\).*?^  return (\{\n.*?^  \})$", CONFIG, re.S | re.M
    )
    assert body, "config.lua: no `return { ... }` in defaults()"
    return body.group(1)


@pytest.fixture(scope="module")
def defaults(evaluate: Any) -> dict[str, Any]:
    (found,) = evaluate([config_defaults_text()])
    assert {"agent", "mm", "window", "permission", "max_lines"} <= set(found), found
    return found


def test_the_vimdoc_setup_block_is_every_option_with_its_default(
    evaluate: Any, defaults: dict[str, Any]
) -> None:
    section = DOC.split("*minime-config*\n", 1)[1]
    setup = r'>lua\n    require\("minime"\)\.setup\((\{\n.*?\n    \})\)\n<'
    block = re.search(setup, section, re.S)
    assert block, "doc/minime.txt: no setup({ ... }) block under *minime-config*"
    (shown,) = evaluate([block.group(1)])
    assert shown == defaults


def vimdoc_entries() -> dict[str, str]:
    """`*minime-config*`'s entries: option name -> the text of its [default] (may span lines)."""
    section = DOC.split("*minime-config*\n", 1)[1].split("\n=====", 1)[0]
    entries = {}
    for m in re.finditer(r"^(\w+)\s+\[", section, re.M):
        depth, i = 1, m.end()
        while depth:
            depth += {"[": 1, "]": -1}.get(section[i], 0)
            i += 1
        entries[m.group(1)] = section[m.end() : i - 1]
    return entries


def test_the_vimdoc_gives_every_option_with_its_default(
    evaluate: Any, defaults: dict[str, Any]
) -> None:
    entries = vimdoc_entries()
    assert sorted(entries) == sorted(defaults), "one *minime-config* entry per option, no other"
    names = sorted(entries)
    values = evaluate([entries[name] for name in names])
    assert dict(zip(names, values, strict=True)) == defaults


def test_the_defaults_quoted_in_prose_are_the_defaults(defaults: dict[str, Any]) -> None:
    """The vimdoc's "`permission.idle` seconds (1)" and "|minime-config-ready_timeout| seconds
    (60)", the same in the README and the notes: a default repeated where it is used."""
    texts = [README, DOC, FAULTS]
    quoted = [q for t in texts for q in re.findall(r"`(\w+)\.(\w+)`(?: \w+)? \(([\d.]+)\)", t)]
    quoted += [
        (name, "", v)
        for t in texts
        for name, v in re.findall(r"\|minime-config-(\w+)\| \w+ \(([\d.]+)\)", t)
    ]
    assert quoted, "the prose quotes some defaults"
    for section, field, value in quoted:
        default = defaults[section][field] if field else defaults[section]
        assert float(value) == default, (section, field, value, default)


def quoted_names(text: str) -> list[str]:
    return sorted(re.findall(r'`"(\w+)"`', text))


def test_the_readme_agents_table_has_one_row_per_agent_file() -> None:
    section = README.split("\n## Agents\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r'^\| `"(\w+)"`', section, re.M)
    assert sorted(rows) == AGENTS
    default = re.findall(r'^\| `"(\w+)"` \(default\)', section, re.M)
    assert default == [re.search(r'^    agent = "(\w+)",$', CONFIG, re.M).group(1)]


def test_the_vimdoc_agents_list_has_one_entry_per_agent_file() -> None:
    section = DOC.split("*minime-agents*\n", 1)[1].split("\n\n", 2)[1]
    assert sorted(re.findall(r'^  `"(\w+)"`', section, re.M)) == AGENTS


def test_the_unknown_agent_message_quoted_in_the_faults_lists_the_agent_files() -> None:
    said = re.search(r"the agents are ([\w, ]+) \(or add", FAULTS)
    assert said, "notes/faults.md: the unknown-agent row"
    assert said.group(1).split(", ") == AGENTS
