"""doc/minime.txt lists the options and commands the code defines: scripts/gen-help writes
those parts from lua/minime/config.lua and plugin/minime.lua (tests/gen_help.py), and the
committed file must be what it writes. Every command, option, mapping and event has its tag,
and each command's entry opens with the usage the code gives it."""

from __future__ import annotations

import difflib
import re
from typing import Any

import gen_help
import pytest
from nvim_harness import REPO, start


@pytest.fixture(scope="module")
def nvim() -> Any:
    with start() as n:
        yield n


def doc() -> str:
    return gen_help.DOC.read_text(encoding="utf-8")


def test_the_committed_help_is_what_the_generator_writes(nvim: Any) -> None:
    committed = doc()
    fresh = gen_help.generate(nvim, committed)
    if fresh != committed:
        diff = "\n".join(
            difflib.unified_diff(committed.split("\n"), fresh.split("\n"), "committed", "now", n=1)
        )
        pytest.fail(f"doc/minime.txt is stale: run scripts/gen-help and commit it\n{diff}")


def test_each_option_has_its_tag() -> None:
    names = [o.name for o in gen_help.options(gen_help.CONFIG.read_text(encoding="utf-8"))]
    assert len(names) > 20, names  # the reader found the table, not an empty one
    text = doc()
    assert [n for n in names if f"*minime-config-{n}*" not in text] == []


def usage(command: gen_help.Command) -> str:
    """How the command's entry opens: ``:[range]MiniMeAsk [text]``, ``:MiniMeAccept[!]``."""
    head = ":" + ("[range]" if command.range else "") + command.name
    return head + ("[!]" if command.bang else "") + (f" {command.usage}" if command.usage else "")


def test_each_command_has_an_entry_that_opens_with_its_usage(nvim: Any) -> None:
    defined = nvim.exec_lua("return vim.api.nvim_get_commands({})")
    commands = gen_help.commands(gen_help.PLUGIN.read_text(encoding="utf-8"), defined)
    assert len(commands) > 20
    assert sorted(c.name for c in commands) == sorted(n for n in defined if n.startswith("MiniMe"))
    lines = doc().split("\n")
    tags = [(i, re.match(r"^\s+\*:(\w+)\*$", line)) for i, line in enumerate(lines)]
    tagged = {m.group(1): i for i, m in tags if m}
    assert sorted(tagged) == sorted(c.name for c in commands), "one *:Name* entry per command"
    for command in commands:
        opening = lines[tagged[command.name] + 1]
        head = usage(command)
        # The usage, then the end of the line or the entry's text: not more arguments.
        assert re.match(rf"{re.escape(head)}($|\s+[^\s\[{{])", opening), (head, opening)


def test_each_mapping_and_event_has_its_tag(nvim: Any) -> None:
    text = doc()
    mappings = [m["lhs"] for m in nvim.exec_lua(gen_help.MAPPINGS)]
    assert len(mappings) >= 3, mappings
    assert [m for m in mappings if f"*{m}*" not in text] == []
    fired = {
        name
        for path in (REPO / "lua").rglob("*.lua")
        for name in re.findall(
            r'nvim_exec_autocmds\(\s*"User",\s*\{\s*pattern\s*=\s*"(\w+)"', path.read_text()
        )
    }
    assert "MiniMeTurnDone" in fired  # the scan reads the code
    assert [e for e in sorted(fired) if f"*{e}*" not in text] == []


def test_a_command_s_description_leaves_out_every_group_of_its_arguments(nvim: Any) -> None:
    """`:MiniMeNew [agent] [worktree]`: both groups are the usage, neither is in `desc` (what
    `:command` and completion menus show)."""
    defined = nvim.exec_lua("return vim.api.nvim_get_commands({})")
    descs = {name: c["definition"] for name, c in defined.items() if name.startswith("MiniMe")}
    assert descs["MiniMeNew"].startswith("Start a new thread"), descs["MiniMeNew"]
    assert [n for n, d in descs.items() if d.startswith("[")] == []
    listed = gen_help.commands(gen_help.PLUGIN.read_text(encoding="utf-8"), defined)
    assert {c.name: c.usage for c in listed}["MiniMeNew"] == "[agent] [worktree]"


def test_no_generated_line_breaks_inside_a_code_span() -> None:
    """`{ tokens = 200000 }` stays on one line: help shows a span cut in two as two halves."""
    lines = doc().split("\n")
    start = next(i for i, line in enumerate(lines) if line.endswith("*minime-config*"))
    end = next(i for i, line in enumerate(lines) if line.endswith("*minime-commands*"))
    prose, code = [], False
    for line in lines[start + 1 : end]:
        if code:
            code = line != "<"
        elif re.search(r"(^|\s)>[a-z]*$", line):
            code = True
        else:
            prose.append(line)
    assert len(prose) > 100, prose  # the options' entries, not an empty section
    assert [line for line in prose if line.count("`") % 2] == []
