"""Interop with a real third-party ACP agent: the example agent of the npm package
``@agentclientprotocol/sdk@1.9.0`` (``dist/examples/agent.js``, run with node), driven through
``:MiniMeAsk`` like any agent (``agent = { cmd = { "node", … } }``).

Each of its turns streams text, reports a read tool call (completed), then asks permission for
an edit with its own options ("allow": "Allow this change", "reject": "Skip this change") and
answers according to the option chosen. scripts/setup installs it (``npm install`` in
tests/interop); without node or the package the test is skipped, except in CI.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from nvim_harness import REPO
from plugin_harness import editor, quit_with_one_agent, wait_tree_gone

AGENT_JS = REPO / "tests/interop/node_modules/@agentclientprotocol/sdk/dist/examples/agent.js"
NODE = shutil.which("node")

FIRST = "I'll help you with that. Let me start by reading some files"
ALLOWED = "Perfect! I've successfully updated the configuration."
SKIPPED = "I understand you prefer not to make that change."

if not (NODE and AGENT_JS.exists()) and not os.environ.get("CI"):
    pytest.skip(
        "needs node and the npm packages of tests/interop (./scripts/setup)",
        allow_module_level=True,
    )


def test_a_full_turn_with_the_sdk_example_agent(tmp_path: Path) -> None:
    agent = {"cmd": [NODE or "node", str(AGENT_JS)]}
    with editor(tmp_path, agent=agent) as ed:
        # Turn 1: the text streams (seen while the turn still runs); the permission is allowed.
        ed.ask("Please update the configuration")
        ed.wait_text(FIRST, timeout=60)
        assert ed.lua("return require('minime.ui.turn').get(...).running", ed.cwd)
        shown = ed.permission_text().splitlines()
        assert "Modifying critical configuration file" in shown
        assert "kind: edit" in shown
        assert "path: /home/user/project/config.json" in shown
        assert "1. Allow this change — allow once" in shown
        assert "2. Skip this change — reject once" in shown
        ed.answer_permission("1")
        first = ed.wait_done(1, timeout=60)
        assert first["stop_reason"] == "end_turn"
        text = ed.turn_text()
        headers = [line for line in text.splitlines() if line.startswith("⚙ ")]
        assert headers == [
            "⚙ Reading project files  [read] completed",
            "⚙ Modifying critical configuration file  [edit] completed",
        ]
        assert "# My Project" in text, "the read call's output"
        assert text.index(FIRST) < text.index("Now I understand") < text.index(ALLOWED)
        assert SKIPPED not in text

        # Turn 2, same session: the prompt is dismissed (q), which answers the agent's own
        # reject option.
        ed.ask("Try again")
        assert "Modifying critical configuration file" in ed.permission_text()
        ed.answer_permission("q")
        second = ed.wait_done(2, timeout=60)
        assert second["stop_reason"] == "end_turn"
        assert second["session_id"] == first["session_id"]
        text = ed.turn_text()
        assert SKIPPED in text and ALLOWED not in text
        # Each prompt, shown without taking the focus from the code window, said so once.
        asked = "minime: permission asked: Modifying critical con"
        notes = ed.notes()
        assert [n[: len(asked)] for n in notes if n.startswith(asked[:26])] == [asked, asked]
        # The example agent starts no MCP server (it reads nothing): said once, after the
        # first turn, and nothing else.
        unused = "minime: agent.cmd never started the editor's MCP server"
        assert [n for n in notes if not n.startswith(asked[:26])] == [
            n for n in notes if n.startswith(unused)
        ]
        assert len([n for n in notes if n.startswith(unused)]) == 1
        assert ed.turn_errors() == []
        pid = quit_with_one_agent(ed)
    wait_tree_gone(pid, "node")
