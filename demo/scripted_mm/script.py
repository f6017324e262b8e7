"""The script that stands in for a model: one command a line of the prompt.

Each command is ``async (agent, turn, rest of the line)``; one that returns ``"cancelled"`` ends
the turn so. These are what a model can make mm do; tests/fake_mm.py adds the faults.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .client_services import SERVICES
from .client_tools import json_text
from .edits import EDITS
from .tour import TOUR
from .wire import GoError, go_value

if TYPE_CHECKING:
    from .agent import ScriptedMM, Turn

Command = Callable[["ScriptedMM", "Turn", str], Awaitable["str | None"]]

PLAN_ENTRIES = [
    {"content": "Read the code", "priority": "high", "status": "completed"},
    {"content": "Write the tests", "priority": "medium", "status": "in_progress"},
    {"content": "Ship it", "priority": "low", "status": "pending"},
]
SLOW_INTERVAL = 0.05


def chunks_text(count: int, size: int = 16) -> list[str]:
    """The chunks ``/chunks COUNT SIZE`` streams: chunk i is ``i`` padded with dots to SIZE."""
    return [str(i).ljust(size, ".")[: max(size, 1)] for i in range(count)]


def split_args(rest: str) -> tuple[str, Any]:
    """A tool's name and its arguments, decoded as mm (Go) decodes the model's JSON."""
    name, _, args = rest.strip().partition(" ")
    return name, (go_value(json.loads(args)) if args.strip() else {})


async def say(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, rest)


async def think(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, rest, kind="agent_thought_chunk")


async def chunks(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    count, _, size = rest.partition(" ")
    for chunk in chunks_text(int(count), int(size or 16)):
        await mm.say(turn, chunk)


async def slow(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    for i in range(int(rest)):
        await mm.say(turn, f"slow {i}\n")
        await asyncio.sleep(SLOW_INTERVAL)


async def plan(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    await mm.update(turn.session.id, {"sessionUpdate": "plan", "entries": PLAN_ENTRIES})


async def tools(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    await mm.say(turn, json_text([t.as_model_sees_it() for t in turn.session.tools]))


async def tool_line(mm: ScriptedMM, turn: Turn, rest: str, session_id: str | None = None) -> None:
    """One model step calling a tool; the loop detector counts it."""
    name, args = split_args(rest)
    tool = turn.session.find_tool(name)
    if tool is None:
        await mm.say(turn, f"{name} -> [unknown tool]")
        return
    read = await mm.call_tool(turn, tool, args, session_id)
    mm.count(turn, tool.model_name, args, read)
    await mm.say(turn, f"{tool.model_name} -> {read}")


async def tool(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    await tool_line(mm, turn, rest)


async def parallel(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    """N calls in one model step (not a loop: the detector counts steps)."""
    count, _, rest = rest.partition(" ")
    name, args = split_args(rest)
    found = turn.session.find_tool(name)
    if found is None:
        await mm.say(turn, f"{name} -> [unknown tool]")
        return
    reads = await asyncio.gather(*(mm.call_tool(turn, found, args) for _ in range(int(count))))
    await mm.say(turn, "\n".join(f"{found.model_name} -> {read}" for read in reads))


async def bash(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    await mm.bash(turn, rest)


async def diff(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    """An edit of ``a.txt``: its permission request carries the diff."""
    call_id = f"call_{next(mm.call_ids)}"
    path = os.path.join(turn.session.cwd, "a.txt")
    change = {"type": "diff", "path": path, "oldText": "old\n", "newText": "new\n"}
    call = {
        "toolCallId": call_id,
        "title": "edit: a.txt",
        "kind": "edit",
        "status": "pending",
        "rawInput": {"path": path},
        "content": [change],
    }
    await mm.report_call(turn, call)
    ok = mm.config.yolo or await mm.allowed(turn, "edit", call)
    read = "applied" if ok else "[edit rejected by user]"
    await mm.report_end(turn, call_id, read, not ok)
    await mm.say(turn, f"edit -> {read}")


class ModelFailed(GoError):
    """The model (server) failed: mm returns the error, a plain Go ``error``."""


async def error(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    raise ModelFailed(rest)


async def help_text(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    """The script's commands, one a line, as its available_commands_update describes them."""
    lines = ["The script's commands (no model runs: each line of a prompt is one):"]
    for command in mm.commands:
        description, hint = COMMAND_HELP.get(command[1:], ("", None))
        usage = f"{command} {hint}" if hint else command
        lines.append(f"- `{usage}`" + (f": {description}" if description else ""))
    lines.append("A line without `/` is echoed; `/tour` walks you through minime.nvim.")
    await mm.say(turn, "\n".join(lines))


COMMANDS: dict[str, Command] = {
    "/say": say,
    "/think": think,
    "/chunks": chunks,
    "/slow": slow,
    "/plan": plan,
    "/tools": tools,
    "/tool": tool,
    "/parallel": parallel,
    "/bash": bash,
    "/diff": diff,
    "/error": error,
    "/help": help_text,
    **TOUR,
    **SERVICES,
    **EDITS,
}

# What the agent advertises of the script (``available_commands_update`` after a session
# opens), so that an editor lists and completes them: name -> (description, input hint).
COMMAND_HELP: dict[str, tuple[str, str | None]] = {
    "say": ("Answer with this text, in one chunk", "text"),
    "think": ("A thought chunk", "text"),
    "chunks": ("Stream N text chunks", "N [SIZE]"),
    "slow": ("Stream N lines, 50 ms apart (cancel stops it)", "N"),
    "plan": ("Send a plan", None),
    "tools": ("List the client tools this session was given", None),
    "tool": ("Call a client tool", "NAME [JSON arguments]"),
    "parallel": ("Call a client tool N times at once", "N NAME [JSON arguments]"),
    "bash": ("Run a command with the built-in bash (asks first)", "command"),
    "diff": ("An edit of a.txt whose permission shows the diff", None),
    "error": ("Make the model fail with this text", "text"),
    "help": ("List the script's commands", None),
    "tour": ("A step-by-step tour of minime.nvim: the next step, or step N", "[N]"),
    "wait": ("Work for N seconds, saying so once (cancel stops it)", "N"),
    "question": ("Ask you a question (mm's ask_user tool: a form)", "[question]"),
    "run": ("Run a command in the editor's terminal (not mm's; asks first)", "command"),
    "shell-write": ("Write a file as a shell command of mm's bash would (asks first)", "PATH TEXT"),
    "ask-write": ("Write a file with its own edit tool, claude's way (asks first)", "PATH TEXT"),
    "fs-write": ("Write a file through the editor (fs, not mm's; asks first)", "PATH TEXT"),
    "locate": ("Read files at lines, naming them in locations (not mm's)", "PATH[:LINE]..."),
}


def commands_update(names: list[str] | None = None) -> dict[str, Any]:
    """The ``available_commands_update`` of the script's commands (or of ``names``, each
    described by COMMAND_HELP where it is known)."""
    advertised = []
    for name in names if names is not None else list(COMMAND_HELP):
        description, hint = COMMAND_HELP.get(name, (f"The {name} command", None))
        command: dict[str, Any] = {"name": name, "description": description}
        if hint:
            command["input"] = {"hint": hint}
        advertised.append(command)
    return {"sessionUpdate": "available_commands_update", "availableCommands": advertised}
