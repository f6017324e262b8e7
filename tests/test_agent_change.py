"""setup() changing the agent while sessions run (issue 17): a cwd keeps the agent its session
runs on until :MiniMeReset, and a message says so; an agent no session uses any more ends (it
ran on, idle: four agent processes after a few such resets). Processes counted in /proc."""

from __future__ import annotations

from pathlib import Path

from nvim_harness import wait_for
from plugin_harness import agent_file, editor, running_with

# setup() again with another agent file (the fake mm's binary kept).
SETUP_WITH = "require('minime').setup({ mm = require('minime.config').options.mm, config = ... })"


def gone(config: str) -> None:
    wait_for(lambda: running_with(config) == [], 10, message=f"the agent of {config} to end")


def test_a_changed_agent_applies_after_reset_and_the_old_one_ends(tmp_path: Path) -> None:
    first = agent_file(tmp_path, name="first.yaml", trace=False)
    second = agent_file(tmp_path, name="second.yaml", trace=False)
    with editor(tmp_path, config=first) as ed:
        ed.turn("one")
        assert len(running_with(first)) == 1
        ed.lua(SETUP_WITH, second)
        note = ed.wait_note("applies to the next session")
        assert ":MiniMeReset" in note and "\n" not in note, note
        ed.turn("two")  # the same conversation, on the agent it began with
        assert len(running_with(first)) == 1 and running_with(second) == []
        configs = [second, first, second]
        for round_, (config, other) in enumerate(zip(configs, [first, *configs[:-1]], strict=True)):
            ed.nvim.command("MiniMeReset")
            ed.wait_note("new conversation")
            ed.lua(SETUP_WITH, config)
            ed.turn(f"round {round_}")
            assert len(running_with(config)) == 1
            gone(other)
        assert len(running_with(str(tmp_path))) == 1, "one agent process in all"
