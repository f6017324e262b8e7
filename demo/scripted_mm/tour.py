"""The offline demo's tours: what a plain prompt (no ``/`` command) plays with ``fake.demo``, and
``/tour``, which walks a newcomer through minime.nvim one step a prompt, each step saying what to
press next and whether what it shows is mm's (per its spec) or how other ACP agents do it.

The steps that edit files do it only in the demo's scratch project (``./scripts/demo`` copies
demo/project/, which holds the marker file ``.minime-demo``): anywhere else they say so and
change nothing.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent import ScriptedMM, Session, Turn
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
EARLIER_ASKS = re.compile(r"continues a conversation of (\d+) earlier asks")
TOUR_STEP = re.compile(r"Tour, step (\d+) of")
REWIND = "/rewind-how"  # step 4's paragraph naming the ask that ran step 3's edits
THREADS_WAIT = 60  # step 10's turn: long enough to open a second thread and ask there

# Each step: lines said as text (markdown), and script lines (starting with /) run in order.
STEPS: list[list[str]] = [
    [
        "/think A thought: shown dimmed and folded (za opens a fold).",
        "**Tour, step 1 of 11: the conversation.** This panel holds the whole session: your "
        "prompts, the agent's thinking (dimmed, folded), its plan, each tool call with its "
        "status, and the answer as markdown. No model runs here: this is the offline demo "
        "agent, a scripted mm.",
        "/plan",
        "`:MiniMeToggle` hides and shows the panel (the turn goes on); `q` in it hides it. "
        "`/help` lists every command of the script.",
        NEXT,
    ],
    [
        "**Tour, step 2 of 11: the agent reads your editor.** I call the editor's tool "
        "`open_buffers` (mm's client tools), then mm's bash. Each asks first: a permission "
        f"prompt opens beside your code without taking the focus: {ALLOW} (`2` always allows "
        "this tool for the session).",
        "/tool open_buffers",
        "/bash echo hello from the demo",
        "The statusline said `permission asked` while a prompt waited. " + NEXT,
    ],
    [
        "**Tour, step 3 of 11: edits to review.** Three files change, three ways, each after a "
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
        "**Tour, step 4 of 11: going back.** Each ask is a checkpoint of its thread (in git, a "
        "snapshot of the files): the plugin's, not mm's (mm's spec has no rewind), so it works "
        "with any agent.",
        REWIND,
        "A file you edited since is kept (`:MiniMeRewind!` restores it too). "
        "`:MiniMeRewind undo` brings back what the rewind replaced.",
        "In this panel, on an ask's `> …` line, `r` rewinds to before that ask and `e` opens "
        "it to **edit and resend**: the files go back, and the conversation goes on from before "
        "it. Where the agent forks sessions (`sessionCapabilities.fork`: claude-agent-acp, "
        "codex-acp) its session is forked there; mm's spec has no fork and this demo offers "
        "none, so a new session opens whose first prompt carries the asks and answers before "
        "it (I echo them: you see what the new session got). Then `/tour`.",
    ],
    [
        "**Tour, step 5 of 11: follow the agent.** I read two files at given lines, naming them "
        "in ACP `locations` (claude-agent-acp sends them; mm sends none). With "
        "`:MiniMeFollow` on, each shows in a window below your code as I reach it, never "
        "taking the focus; in this panel `<CR>` on the `Read greet.py` line opens it.",
        "/locate greet.py:4 notes.md:3 greet.py:9",
        "Turn following on with `:MiniMeFollow` and send `/tour 5` to see it again, or `/tour` "
        "to go on.",
    ],
    [
        "**Tour, step 6 of 11: a command in the editor's terminal.** I run `ls -la` in a "
        "terminal the editor lends me (ACP `terminal/*`: claude-agent-acp's and codex's way; "
        f"mm runs its own bash). It asks first: {ALLOW}.",
        "/run ls -la",
        "`:MiniMeTerminal` opens its output in a buffer at the bottom. " + NEXT,
    ],
    [
        "**Tour, step 7 of 11: a question.** I ask you something (mm's `ask_user` tool: a form, "
        "ACP elicitation). It waits like a permission prompt, and the statusline says so: "
        "press **Alt-p** to go to it, then the number of your choice (`o` types another).",
        "/question",
        NEXT,
    ],
    [
        "**Tour, step 8 of 11: modes and options.** `:MiniMeMode` picks the session mode: "
        "`yolo` never asks before a tool call (mm's `yolo: true` in its agent file; mm has no "
        "ACP modes: the demo offers them as claude-agent-acp and codex-acp do). "
        "`:MiniMeConfig pace slow` makes me stream word by word (a config option, not mm's). "
        "The panel's title and the statusline show the mode.",
        "Try `:MiniMeMode yolo`, then `/tour 2` runs without a prompt; `:MiniMeMode ask` "
        "brings them back. Then `/tour`.",
    ],
    [
        "**Tour, step 9 of 11: sessions.** This session has a title, `The minime tour` (ACP "
        "`session_info_update`, not mm's), in the panel's title; its footer and the statusline "
        "show the context used (`usage_update`, not mm's: mm sends the usage with each answer).",
        "`:MiniMeReset` starts a new conversation; `:MiniMeSessions` then lists this one and "
        "`An earlier session (scripted)`: pick one to reload it, its history replayed (mm "
        "stores sessions: `session/load`). Then `/tour 10`.",
    ],
    [
        "**Tour, step 10 of 11: two threads at once.** A thread is one conversation: one ACP "
        "session, its own buffer and prompts (the plugin's; threads of one agent share its "
        f"process, as mm serves several sessions). I now work for {THREADS_WAIT} seconds (a "
        "scripted wait). Meanwhile `:MiniMeNew` opens a "
        "second thread here and shows its empty conversation: press `i` there, type `hello` "
        "and Enter; it asks two permissions, as in step 2.",
        "Then `:MiniMeThreads`: one line a thread, this one `running`, the new one "
        "`waits: permission` (once answered: `done`); the statusline counts them. On a line, "
        "`<CR>` shows that thread's conversation, `r` renames it, `x` closes it. A permission "
        "or a turn's end in a thread not shown says so in one line. Back here, "
        "`:MiniMeCancel` ends my wait; then `/tour 11`.",
        f"/wait {THREADS_WAIT}",
        "My wait is over: `/tour 11` goes on.",
    ],
    [
        "**Tour, step 11 of 11: stopping, logging in, the log.** `/slow 100` streams for five "
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


def read_history(session: Session, text: str) -> None:
    """A session's first prompt that carries the conversation before it (an edit and resend
    with no fork: minime's history) read as a model would: how many asks came before, so that
    this session numbers its asks as the editor does, and the last tour step shown."""
    earlier = EARLIER_ASKS.search(text)
    if earlier:
        session.asks += int(earlier.group(1))
        steps = TOUR_STEP.findall(text)
        session.tour_step = int(steps[-1]) if steps else 0


def without_history(blocks: list[Any]) -> str:
    """The prompt's text less a history carried in its first block: what the user asked."""
    texts = [str(b.get("text") or "") for b in blocks if isinstance(b, dict)]
    return "".join(texts[1:] if texts and EARLIER_ASKS.search(texts[0]) else texts)


def rewind_text(ask: int) -> str:
    """How to rewind step 3's edits: its ask's number, as this session counted its prompts."""
    which = (
        f"`:MiniMeRewind {ask}` puts every file changed since ask {ask} (step 3's) began"
        if ask
        else "`:MiniMeRewind N` (N: the ask that ran step 3, counted from this conversation's "
        "first) puts every file changed since that ask began"
    )
    return (
        f"{which} back as it was then, whatever wrote it, and removes `CHANGES.txt` (if your "
        "review kept it) after a confirmation; one line says what it did. With no N it goes "
        "back before the last ask."
    )


async def paragraph(mm: ScriptedMM, turn: Turn, text: str) -> None:
    """``text`` as a paragraph of its own."""
    answer = turn.answer
    gap = "" if not answer else "\n" if answer[-1].endswith("\n") else "\n\n"
    turn.fresh_line = False
    await mm.say(turn, gap + text + "\n")


async def wait(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    """A turn that works for N seconds, saying so once (a cancel ends it)."""
    await mm.say(turn, f"(working: a scripted wait of {rest} s)")
    await asyncio.sleep(float(rest))


async def tour(mm: ScriptedMM, turn: Turn, rest: str) -> str | None:
    """Step N (``/tour N``), else the step after the last one shown in this session."""
    session = turn.session
    wanted = int(rest) if rest.strip().isdigit() else session.tour_step + 1
    step = min(max(wanted, 1), len(STEPS))
    session.tour_step = step
    for item in STEPS[step - 1]:
        if item == "/edits":
            lines = edit_lines(session.cwd)
            session.edits_ask = session.asks if lines[0].startswith("/fs-write") else 0
            if await mm.run_script(turn, "\n".join(lines)) == "cancelled":
                return "cancelled"
        elif item == REWIND:
            await paragraph(mm, turn, rewind_text(session.edits_ask))
        elif item.startswith("/"):
            if await mm.run_script(turn, item) == "cancelled":
                return "cancelled"
        else:
            await paragraph(mm, turn, item)
        turn.fresh_line = True
        await mm.pause(turn)
    return None


TOUR: dict[str, Command] = {"/tour": tour, "/wait": wait}
