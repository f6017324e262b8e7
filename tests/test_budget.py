"""The budget the client enforces (issue 31, :h minime-budget), through the whole stack: a real
headless Neovim, its Python host and the fake mm, whose ``/spend`` sends ``usage_update``s with
a growing cost (tests/fake_mm_usage.py) and whose answers carry token figures.

Asserted: the conversation's lines, the end of the turn (MiniMeTurnDone), the statusline, the
messages, the draft a refused ask leaves, and what crossed the wire (session/cancel, the
prompts sent or not).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from helpers.wire import prompts_by_session, trace
from nvim_harness import wait_for
from plugin_harness import Editor, agent_file, editor


def prompts(directory: Path) -> list[str]:
    return [text for _, text in prompts_by_session(directory)]


def cancels(directory: Path) -> int:
    return sum(1 for m in trace(directory, "in") if m.get("method") == "session/cancel")


def statusline(ed: Editor) -> str:
    return ed.lua("return require('minime.status').statusline()")


def draft(ed: Editor) -> str | None:
    return ed.lua("return require('minime.ui.drafts').get(require('minime.threads').here())")


def conversation(ed: Editor, key: str | None = None) -> str:
    return ed.conversation_text(key)


def budget_of(ed: Editor, key: str | None = None) -> dict[str, Any] | None:
    return ed.lua("return require('minime.budget').get(...)", key or ed.cwd)


def test_a_growing_cost_is_cancelled_at_the_budget_and_the_next_ask_waits_for_a_raise(
    tmp_path: Path,
) -> None:
    with editor(tmp_path, budget={"cost": 0.5}) as ed:
        done, text = ed.turn("/spend 20 0.1")
        assert done["stop_reason"] == "cancelled"
        assert done["budget"] == "$0.50 of $0.50"
        assert "⚠ budget: over 80% used ($0.40 of $0.50)" in text
        assert "■ budget reached ($0.50 of $0.50)" in text
        assert "spent 2.0" not in text, "the turn was cancelled, not run to its end"
        assert cancels(tmp_path) == 1
        assert re.search(r"\$0\.[56]0/\$0\.50 reached$", statusline(ed)), statusline(ed)
        assert budget_of(ed)["state"] == "reached"

        # The next ask is refused: said, its text kept as the draft, nothing sent.
        sent = len(prompts(tmp_path))
        ed.ask("/say not now")
        ed.wait_note("the budget of this thread is reached")
        assert draft(ed) == "/say not now"
        assert len(prompts(tmp_path)) == sent
        assert len(ed.done()) == 1

        ed.nvim.command("MiniMeBudget +1")
        ed.wait_note("minime: budget now $0.")
        wait_for(lambda: budget_of(ed)["state"] == "ok", 10, message="the raise")
        assert "/$1.50" in statusline(ed)
        done, text = ed.turn("/say after the raise")
        assert done["stop_reason"] == "end_turn"
        assert "after the raise" in text
        assert ed.turn_errors() == []


def test_tokens_count_where_the_agent_sends_no_cost_and_a_reset_starts_over(
    tmp_path: Path,
) -> None:
    """mm sends no usage_update: its answers' token figures add up for budget.tokens, and the
    cost budget says it cannot be enforced (once, and to :checkhealth)."""
    with editor(tmp_path, budget={"cost": 1, "tokens": 60}) as ed:
        done, text = ed.turn("/say 0123456789")  # 15 + 10 tokens
        assert done["stop_reason"] == "end_turn"
        assert done.get("budget") is None
        assert (
            "ℹ budget.cost cannot be enforced for mini-me (fake): it sends no cost"
            " (its token figures count for budget.tokens)"
        ) in text
        assert budget_of(ed)["unenforced"].startswith(
            "budget.cost cannot be enforced for mini-me (fake)"
        )
        assert "?/$1.00 · 25/60 tokens" in statusline(ed)
        done, text = ed.turn("/say 0123456789")  # 50 tokens: over 80%
        assert "⚠ budget: over 80% used (50 of 60 tokens)" in text
        assert "cannot be enforced" not in text, "said once"
        done, text = ed.turn("/say 0123456789")  # 75: reached at the turn's end
        assert done["budget"] == "75 of 60 tokens"
        assert text.rstrip().splitlines()[-1].startswith("■ budget reached (75 of 60 tokens)")
        ed.ask("/say refused")
        ed.wait_note("the budget of this thread is reached (75 of 60 tokens)")

        ed.nvim.command("checkhealth minime")
        health = "\n".join(ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
        assert "budget.cost cannot be enforced for mini-me (fake): it sends no cost" in health
        ed.nvim.command("bwipeout")

        ed.nvim.command("MiniMeReset")
        ed.wait_note("new conversation")
        wait_for(lambda: budget_of(ed)["state"] == "ok", 10, message="the budget starting over")
        done, _ = ed.turn("/say again")
        assert done["stop_reason"] == "end_turn"


def test_an_agent_that_sends_nothing_says_the_budget_cannot_be_enforced(tmp_path: Path) -> None:
    config = agent_file(tmp_path, fake={"usage": False})
    with editor(tmp_path, config=config, budget={"tokens": 1000}) as ed:
        done, text = ed.turn("/say hello")
        assert done["stop_reason"] == "end_turn"
        assert (
            "ℹ budget.tokens cannot be enforced for mini-me (fake): it sends no token figures"
            in text
        )
        done, _ = ed.turn("/say still goes")
        assert done["stop_reason"] == "end_turn", "a budget that cannot count stops nothing"


def test_budget_mid_turn_mid_start_up_and_from_another_threads_window(tmp_path: Path) -> None:
    """:MiniMeBudget while the agent starts, while a turn spends, and from the window of
    another thread's conversation: each acts on its own thread at once."""
    gate = tmp_path / "session.go"
    config = agent_file(tmp_path, fake={"hold_session_new": str(gate)})
    with editor(tmp_path, config=config, budget={"cost": 0.3}) as ed:
        ed.ask("/spend 8 0.1")
        first = ed.lua("return require('minime.threads').current()")
        wait_for(
            lambda: any(m.get("method") == "session/new" for m in trace(tmp_path, "in")),
            ed.timeout,
            message="session/new sent",
        )
        ed.nvim.command("MiniMeBudget 0.5")  # mid-start-up
        ed.wait_note("minime: budget now ? of $0.50")
        gate.write_text("")
        ed.wait_text("spent 0.2")
        ed.nvim.command("MiniMeBudget +10")  # mid-turn, before the budget is reached
        ed.wait_note("of $10.50")
        done = ed.wait_done(1)
        assert done["stop_reason"] == "end_turn" and done.get("budget") is None
        assert "spent 0.8" in ed.turn_text()

        ed.nvim.command("MiniMeNew")
        second = ed.lua("return require('minime.threads').current()")
        ed.turn("/say other thread")
        buf = ed.lua("return require('minime.ui.turn').get(...).buf", first)
        ed.nvim.command(f"botright sbuffer {buf}")
        ed.nvim.command("MiniMeBudget 0.1")  # the first thread's, from its window
        ed.wait_note("still reached")
        assert budget_of(ed, first)["state"] == "reached"
        assert budget_of(ed, second)["state"] == "ok"
        ed.nvim.command("MiniMeBudget")
        ed.wait_note("minime: budget in")
        ed.nvim.command("MiniMeBudget lots")
        ed.wait_note(":MiniMeBudget takes an amount")


def footer(ed: Editor) -> str:
    win = ed.lua("return require('minime.ui.turn').get(...).win", ed.cwd)
    return "".join(piece[0] for piece in ed.float_config(win)["footer"])


def test_the_currency_is_the_agent_s_text_made_printable_everywhere(tmp_path: Path) -> None:
    """A currency that holds an escape sequence and a statusline item: shown as text in the
    statusline (`%` doubled, ESC as ^[), the float's footer and the conversation."""
    currency = "\x1b]2;x\x07%{x}"  # cut at 12 characters, as any currency
    with editor(tmp_path, budget={"cost": 1}, window={"layout": "float"}) as ed:
        ed.lua("require('minime').ask(...)", f"/usage cost=0.9 currency={currency}")
        ed.wait_done(1)
        wait_for(lambda: budget_of(ed)["state"] == "warned", 10, message="the 80% line")
        status = statusline(ed)
        assert "\x1b" not in status and "\x07" not in status, status
        assert "0.90 ^[]2;x^G%%{x}/1.00 ^[]2;x^G%%{x}" in status, status
        assert "0.90 ^[]2;x^G%{x}/1.00 ^[]2;x^G%{x}" in footer(ed)
        assert "⚠ budget: over 80% used (0.90 ^[]2;x^G%{x} of 1.00 ^[]2;x^G%{x})" in ed.turn_text()


def test_a_budget_that_is_not_one_is_said_plainly_and_nothing_starts(tmp_path: Path) -> None:
    with editor(tmp_path, budget={"cost": "lots"}) as ed:
        ed.ask("/say hi")
        ed.wait_note('minime: budget.cost must be a positive number, got "lots"')
        assert (
            ed.done() == [] and ed.lua("return vim.tbl_count(require('minime.host').agents)") == 0
        )
