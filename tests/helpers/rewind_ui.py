"""The rewind (:MiniMeRewind, the conversation's `r` and `e`, lua/minime/rewind/) as a user
drives it in a real Neovim with the fake mm: turns that write files three ways, the one line
a rewind says, the confirmation it asks. Used by test_rewind*.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file

# The fake mm's writes are allowed without a float: a shell command's (its title is the
# command, written literally here), its own Write tool's.
RULES = [
    {"pattern": "bash: sh -c 'printf %s * > *'", "decision": "allow"},
    {"pattern": "Write *", "decision": "allow", "kind": "edit"},
]

# vim.ui.select answers with the item _G.pick (each prompt and its items kept in _G.selects).
PICKER = """
_G.selects, _G.pick = {}, 1
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.selects, { prompt = opts.prompt, items = items })
  on_choice(items[_G.pick], _G.pick)
end
"""


def opts(tmp_path: Path, **more: Any) -> dict[str, Any]:
    """The plugin's options: the fake mm, its writes allowed by RULES."""
    more.setdefault("config", None) or more.update(config=agent_file(tmp_path))
    return {"mm": FAKE_MM_BIN, "permission_rules": RULES, **more}


def turn(ed: Editor, prompt: str) -> dict[str, Any]:
    """One ask, to its end (and its end's checkpoint written)."""
    count = len(ed.done()) + 1
    ed.ask(prompt)
    done = ed.wait_done(count)
    assert not done.get("error"), done
    wait_for(lambda: ended(ed), 20, message="for the turn's end to be recorded")
    return done


def ended(ed: Editor) -> bool:
    """The last turn's end is recorded (its snapshot in git, its texts outside)."""
    return bool(
        ed.lua(
            "local key = require('minime.threads').here()"
            " local t = key and require('minime.review.baseline').last(key)"
            " return t ~= nil and t.ended_at ~= nil and (t.tree == nil or t.ended_tree ~= nil)"
        )
    )


def rewind(ed: Editor, arg: str = "", bang: bool = False) -> str:
    """:MiniMeRewind[!] ARG; the line it says when done."""
    before = len(ed.notes())
    ed.nvim.command(f"MiniMeRewind{'!' if bang else ''} {arg}")
    return wait_for(
        lambda: next((n for n in ed.notes()[before:] if "rewind" in n or "rewound" in n), None),
        20,
        message="for the rewind's line",
    )


def selects(ed: Editor) -> list[dict[str, Any]]:
    return ed.lua("return _G.selects")
