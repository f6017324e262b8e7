"""The lazy.nvim specs in README.md and :h minime load the plugin on exactly the commands that
plugin/minime.lua defines (a command left out of ``cmd`` is "not an editor command" until
another one loads the plugin), and the README says what scripts/test runs, in its order."""

from __future__ import annotations

import re

import nvim_harness
import pytest
from nvim_harness import REPO


def spec_commands(text: str) -> list[str]:
    """The ``cmd = { ... }`` list of the lazy.nvim spec (the one with ``build =``) in ``text``."""
    spec = re.search(r"build = .*?cmd = \{(.*?)\}", text, flags=re.S)
    assert spec, "no lazy.nvim spec with build and cmd"
    return re.findall(r'"([^"]+)"', spec.group(1))


@pytest.fixture(scope="module")
def defined() -> list[str]:
    """The user commands the plugin defines, from a real Neovim that loaded plugin/."""
    with nvim_harness.start() as nvim:
        names = nvim.exec_lua("return vim.tbl_keys(vim.api.nvim_get_commands({}))")
    return sorted(n for n in names if n.startswith("MiniMe"))


@pytest.mark.parametrize("doc", ["README.md", "doc/minime.txt"])
def test_the_lazy_spec_lists_every_command_the_plugin_defines(doc: str, defined: list[str]) -> None:
    listed = spec_commands((REPO / doc).read_text(encoding="utf-8"))
    assert len(listed) == len(set(listed)), f"{doc} lists a command twice: {listed}"
    assert sorted(listed) == defined


def test_the_readme_says_what_scripts_test_runs_in_its_order() -> None:
    script = (REPO / "scripts" / "test").read_text(encoding="utf-8")
    steps = [s for s in ("ruff check", "ruff format --check", "pytest") if s in script]
    steps.sort(key=script.index)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    said = re.search(r"`scripts/test` sets up.*?CI runs exactly this", readme, flags=re.S)
    assert said, "the README's paragraph on scripts/test is gone"
    text = said.group(0)
    assert [s for s in steps if f"`{s}" in text] == steps, "a step of scripts/test is not named"
    assert sorted(steps, key=lambda s: text.index(f"`{s}")) == steps, text
