""":MiniMeReset while a turn runs (issue 17): the old turn's end belongs to the old
conversation; the new one starts empty, its title not "cancelled"."""

from __future__ import annotations

from pathlib import Path

from helpers.conversation_ui import title
from plugin_harness import editor


def test_reset_mid_turn_starts_an_empty_conversation(tmp_path: Path) -> None:
    with editor(tmp_path) as ed:
        ed.ask("/slow 30")
        ed.wait_text("slow 0")
        ed.nvim.command("MiniMeReset")
        ed.wait_note("new conversation")
        # The old turn's end (MiniMeTurnDone) has reached Lua: after it, the float is empty.
        assert ed.wait_done()["stop_reason"] == "cancelled", "the old turn ended, cancelled"
        assert ed.conversation_lines() == [""], "the new conversation starts empty"
        assert "cancelled" not in title(ed), title(ed)
        assert "idle" in title(ed), title(ed)
        ed.turn("two")
        lines = ed.conversation_lines()
        assert lines[0] == "> two", lines
        assert not any("cancelled" in x for x in lines), lines
