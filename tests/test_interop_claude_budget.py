"""The budget (issue 31, :h minime-budget) with claude-agent-acp: its real ``usage_update``s —
the context ``used`` mid-turn, the session's ``cost`` (Claude Code's price of the tokens its
model reported) at each turn's end — driven by the scripted model's usage figures
(tests/agents/anthropic_model.py). The editor runs the shipped definition through the wire tap
of tests/test_interop_claude.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from nvim_harness import wait_for
from test_interop_claude import Claude, claude_editor

BIG = {"input_tokens": 400_000, "output_tokens": 5}


def usage_updates(claude: Claude) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for m in claude.wire("out", "session/update")
        if m["params"]["update"].get("sessionUpdate") == "usage_update"
    ]


def test_claude_s_cost_reaches_the_budget_and_the_next_ask_waits_for_a_raise(
    tmp_path: Path,
) -> None:
    with claude_editor(tmp_path, budget={"cost": 0.5}) as claude:
        ed = claude.ed
        claude.model.usage = BIG
        done, _ = ed.turn("hello")
        costs = [u["cost"]["amount"] for u in usage_updates(claude) if "cost" in u]
        assert costs and costs[-1] >= 0.5, usage_updates(claude)
        wait_for(
            lambda: ed.lua("return require('minime.budget').get(...).state", ed.cwd) == "reached",
            10,
            message="the budget reached",
        )
        # claude sends the cost before its answer to session/prompt: the turn's end says it.
        assert done["budget"] == f"${costs[-1]:.2f} of $0.50", done
        assert f"■ budget reached (${costs[-1]:.2f} of $0.50)" in ed.turn_text()
        status = ed.lua("return require('minime.status').statusline()")
        assert re.search(r"\$\d+\.\d\d/\$0\.50 reached$", status), status

        prompts = len(claude.wire("in", "session/prompt"))
        ed.ask("hello again")
        ed.wait_note("the budget of this thread is reached")
        assert len(claude.wire("in", "session/prompt")) == prompts

        claude.model.usage = {"input_tokens": 12, "output_tokens": 5}
        ed.nvim.command("MiniMeBudget +100")
        ed.wait_note("minime: budget now")
        done, text = ed.turn("hello once more")
        assert done["stop_reason"] == "end_turn"
        assert "Hello from the script." in text


def test_claude_s_context_reaches_a_token_budget_mid_turn(tmp_path: Path) -> None:
    """A turn of two model steps (a Bash call, then its answer): the first step's usage_update
    (used = its tokens) passes budget.tokens, and the turn is cancelled before the command."""
    with claude_editor(tmp_path, budget={"tokens": 100_000}) as claude:
        ed = claude.ed
        claude.model.usage = {"input_tokens": 150_000, "output_tokens": 5}
        done, text = ed.turn("write out")
        assert done["stop_reason"] == "cancelled", text
        assert done["budget"].endswith("of 100k tokens"), done
        assert "■ budget reached (" in text
        assert claude.wire("in", "session/cancel"), "the turn was cancelled on the wire"
        assert not (Path(ed.cwd) / "out.txt").exists()
