"""The offline demo's tours: what a plain prompt (no ``/`` command) plays with ``fake.demo``, and
``/tour``, which walks a newcomer through minime.nvim one step a prompt, each step saying what to
press next and whether what it shows is mm's (per its spec) or how other ACP agents do it.

The steps that edit files do it only in the demo's scratch project (``./scripts/demo`` copies
demo/project/, which holds the marker file ``.minime-demo``): anywhere else they say so and
change nothing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .agent import ScriptedMM, Turn
    from .script import Command

MARKER = ".minime-demo"  # in demo/project/: the directory the tour may edit
NEXT = "Next: press `i` in this panel (or `:MiniMeAsk`), type `/tour` and press Enter."
ALLOW = "press **Alt-p** (or `:MiniMePermission`) to go to it, then `1` to allow once"
GREET_NEW = (
    '"""The demo project\'s one function: say hello."""\\n\\n\\n'
    'def greet(name, greeting="Hello"):\\n'
    '    return f"{greeting}, {name}!"\\n\\n\\n'
    'if __name__ == "__main__":\\n'
    '    print(greet("world"))'
)
NOTES_NEW = (
    "# Notes\\n\\n"
    "The demo project of minime.nvim: the tour edits these files.\\n\\n"
    "- greet() takes a greeting (step 3 of the tour)"
)

# Each step: lines said as text (markdown), and script lines (starting with /) run in order.
STEPS: list[list[str]] = [
    [
        "/think A thought: shown dimmed and folded (za opens a fold).",
        "**Tour, step 1 of 9: the conversation.** This panel holds the whole session: your "
        "prompts, the agent's thinking (dimmed, folded), its plan, each tool call with its "
        "status, and the answer as markdown. No model runs here: this is the offline demo "
        "agent, a scripted mm.",
        "/plan",
        "`:MiniMeToggle` hides and shows the panel (the turn goes on); `q` in it hides it. "
        "`/help` lists every command of the script.",
        NEXT,
    ],
    [
        "**Tour, step 2 of 9: the agent reads your editor.** I call the editor's tool "
        "`open_buffers` (mm's client tools), then mm's bash. Each asks first: a permission "
        f"prompt opens beside your code without taking the focus: {ALLOW} (`2` always allows "
        "this tool for the session).",
        "/tool open_buffers",
        "/bash echo hello from the demo",
        "The statusline said `permission asked` while a prompt waited. " + NEXT,
    ],
    [
        "**Tour, step 3 of 9: edits to review.** Three files change, three ways, each after a "
        f"permission prompt ({ALLOW}): `notes.md` through the editor (`fs/write_text_file`: "
        "qwen-code's way, not mm's), `greet.py` by my own edit tool on disk (claude-agent-acp's "
        "way, not mm's), and `CHANGES.txt` created by a shell command (mm's bash).",
        "/edits",
        "Now `:MiniMeReview`: every hunk in the quickfix list (`:cnext` moves on); in a file "
        "`]h` / `[h` go to the next / previous hunk, `:MiniMeAccept` keeps one, `:MiniMeReject` "
        "puts the old text back (on `CHANGES.txt` it offers to delete the file). Then "
        "`/tour` here.",
    ],
    [
        "**Tour, step 4 of 9: follow the agent.** I read two files at given lines, naming them "
        "in ACP `locations` (claude-agent-acp sends them; mm sends none). With "
        "`:MiniMeFollow` on, each shows in a window below your code as I reach it, never "
        "taking the focus; in this panel `<CR>` on the `Read greet.py` line opens it.",
        "/locate greet.py:4 notes.md:3 greet.py:9",
        "Turn following on with `:MiniMeFollow` and send `/tour 4` to see it again, or `/tour` "
        "to go on.",
    ],
    [
        "**Tour, step 5 of 9: a command in the editor's terminal.** I run `ls -la` in a "
        "terminal the editor lends me (ACP `terminal/*`: claude-agent-acp's and codex's way; "
        f"mm runs its own bash). It asks first: {ALLOW}.",
        "/run ls -la",
        "`:MiniMeTerminal` opens its output in a buffer at the bottom. " + NEXT,
    ],
    [
        "**Tour, step 6 of 9: a question.** I ask you something (mm's `ask_user` tool: a form, "
        "ACP elicitation). It waits like a permission prompt, and the statusline says so: "
        "press **Alt-p** to go to it, then the number of your choice (`o` types another).",
        "/question",
        NEXT,
    ],
    [
        "**Tour, step 7 of 9: modes and options.** `:MiniMeMode` picks the session mode: "
        "`yolo` never asks before a tool call (mm's `yolo: true` in its agent file; mm has no "
        "ACP modes: the demo offers them as claude-agent-acp and codex-acp do). "
        "`:MiniMeConfig pace slow` makes me stream word by word (a config option, not mm's). "
        "The panel's title and the statusline show the mode.",
        "Try `:MiniMeMode yolo`, then `/tour 2` runs without a prompt; `:MiniMeMode ask` "
        "brings them back. Then `/tour`.",
    ],
    [
        "**Tour, step 8 of 9: sessions.** This session has a title, `The minime tour` (ACP "
        "`session_info_update`, not mm's), in the panel's title; its footer and the statusline "
        "show the context used (`usage_update`, not mm's: mm sends the usage with each answer).",
        "`:MiniMeReset` starts a new conversation; `:MiniMeSessions` then lists this one and "
        "`An earlier session (scripted)`: pick one to reload it, its history replayed (mm "
        "stores sessions: `session/load`). Then `/tour 9`.",
    ],
    [
        "**Tour, step 9 of 9: stopping, logging in, the log.** `/slow 100` streams for five "
        "seconds: `:MiniMeCancel` (or `<C-c>` in this panel) stops it. `:MiniMeLogin` shows "
        "the demo's login method (not mm's). `:MiniMeLog` shows the agent's stderr and the "
        "plugin's log. `:MiniMeStop` stops the agent; the next ask starts a new one.",
        "That is the tour. `:h minime` is the reference; `/help` lists the script's commands; "
        "with a real mm on your PATH (or `$MM_BIN`) the same keys drive a model.",
    ],
]


def is_plain(prompt: str) -> bool:
    """A prompt a person typed, not a script: no line starts with ``/``."""
    return not any(line.lstrip().startswith("/") for line in prompt.splitlines())


def tour_script(prompt: str) -> str:
    """Thought, plan, a client tool, a bash permission, and how to go on."""
    first = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return "\n".join(
        [
            "/think No model runs here: this is minime's offline demo agent.",
            "/say **Offline demo agent** (no model, scripted answers).",
            f"/say You asked: {first}",
            "/plan",
            "/tool open_buffers",
            "/bash echo hello from the demo",
            "/say Send `/tour` for a step-by-step tour of minime.nvim, `/help` for every "
            "command of the script; try `/slow 100` then :MiniMeCancel.",
        ]
    )


def edit_lines(cwd: str) -> list[str]:
    """Step 3's edits, or why there are none."""
    if not os.path.exists(os.path.join(cwd, MARKER)):
        return [
            f"/say (Skipped: this directory is not the demo's scratch project, no `{MARKER}` "
            "here. `./scripts/demo` with no arguments opens one, so that the tour edits "
            "nothing of yours.)"
        ]
    return [
        f"/fs-write notes.md {NOTES_NEW}",
        f"/ask-write greet.py {GREET_NEW}",
        "/shell-write CHANGES.txt greet: a greeting argument",
    ]


async def tour(mm: ScriptedMM, turn: Turn, rest: str) -> str | None:
    """Step N (``/tour N``), else the step after the last one shown in this session."""
    session = turn.session
    wanted = int(rest) if rest.strip().isdigit() else session.tour_step + 1
    step = min(max(wanted, 1), len(STEPS))
    session.tour_step = step
    for item in STEPS[step - 1]:
        if item == "/edits":
            if await mm.run_script(turn, "\n".join(edit_lines(session.cwd))) == "cancelled":
                return "cancelled"
        elif item.startswith("/"):
            if await mm.run_script(turn, item) == "cancelled":
                return "cancelled"
        else:  # a paragraph of its own
            answer = turn.answer
            gap = "" if not answer else "\n" if answer[-1].endswith("\n") else "\n\n"
            turn.fresh_line = False
            await mm.say(turn, gap + item + "\n")
        turn.fresh_line = True
        await mm.pause(turn)
    return None


TOUR: dict[str, Command] = {"/tour": tour}
