"""Commands that ask the client to do something for the agent: answer a question (ACP
``elicitation/create``, a form), run a command in the client's terminal (``terminal/*``).

==============================  ================================================================
``/question [TEXT]``            mm's ``ask_user`` tool (offered only to a client that takes
                                forms): a tool call, then ``elicitation/create`` with one choice
                                and an optional free text; the answer is what the model reads:
                                ``ask_user -> <answer>``. The form's shape is the demo's (mm's
                                spec does not give it).
``/run CMD``                    CMD run by the client in its terminal (``terminal/create`` with
                                ``sh -c CMD``, ``wait_for_exit``, ``output``; kept for
                                :MiniMeTerminal, not released), after
                                a permission request; its output is the call's result. Not mm's
                                (mm needs no client terminal): claude-agent-acp's and codex's way.
==============================  ================================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import wire

if TYPE_CHECKING:
    from .agent import ScriptedMM, Turn
    from .script import Command

QUESTION = "Which greeting should the demo use from now on?"
CHOICES = [
    {"const": "Hello", "title": "Hello", "description": "the usual one"},
    {"const": "Bonjour", "title": "Bonjour"},
    {"const": "Hej", "title": "Hej"},
]


def form(message: str) -> dict[str, Any]:
    """One choice (``greeting``) and an optional free text (``other``)."""
    return {
        "type": "object",
        "properties": {
            "greeting": {"type": "string", "title": "Greeting", "oneOf": CHOICES},
            "other": {"type": "string", "title": "Other"},
        },
    }


def answer_text(answer: Any) -> str:
    if not isinstance(answer, dict):
        return "[no answer]"
    action = answer.get("action")
    if action != "accept":
        return f"[{action}]"
    content = answer.get("content") or {}
    picked = content.get("other") or content.get("greeting")
    return str(picked) if picked else "[accepted, nothing chosen]"


async def question(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    message = rest or QUESTION
    if not mm.lends("elicitation", "form"):
        await mm.say(turn, "ask_user -> [not offered: the client takes no forms (elicitation)]")
        return
    call = mm.new_call(
        f"ask_user: {message}", "other", "in_progress", rawInput={"question": message}
    )
    call_id = call["toolCallId"]
    await mm.report_call(turn, call)
    params = {
        "sessionId": turn.session.id,
        "mode": "form",
        "message": message,
        "requestedSchema": form(message),
        "toolCallId": call_id,
    }
    try:
        read = answer_text(await mm.wire.request("elicitation/create", params))
    except wire.RpcError as exc:
        read = f"[client tool error: {exc}]"
    await mm.report_end(turn, call_id, read, read.startswith("[client tool error"))
    await mm.say(turn, f"ask_user -> {read}")


def exit_text(status: Any) -> str:
    if not isinstance(status, dict):
        return "ended"
    if status.get("signal"):
        return f"killed by {status['signal']}"
    return f"exit status {status.get('exitCode')}"


async def run(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    command = rest or "ls"
    if not mm.lends("terminal"):
        await mm.say(turn, "run -> [the client lends no terminal]")
        return
    sid = turn.session.id
    call = mm.new_call(f"bash: {command}", "execute", rawInput={"command": command})
    call_id = call["toolCallId"]
    await mm.report_call(turn, call)
    if not await mm.allowed(turn, "bash", call):
        await mm.report_end(turn, call_id, "[bash rejected by user]", True)
        await mm.say(turn, "run -> [bash rejected by user]")
        return
    try:
        params = {"sessionId": sid, "command": "sh", "args": ["-c", command]}
        created = await mm.wire.request("terminal/create", {**params, "cwd": turn.session.cwd})
        terminal = {"sessionId": sid, "terminalId": created["terminalId"]}
        shown = [{"type": "terminal", "terminalId": created["terminalId"]}]
        running = {"toolCallId": call_id, "status": "in_progress", "content": shown}
        await mm.update(sid, {"sessionUpdate": "tool_call_update", **running})
        status = await mm.wire.request("terminal/wait_for_exit", terminal)
        output = await mm.wire.request("terminal/output", terminal)
        # Not released: :MiniMeTerminal shows it until the session ends (the client ends it).
    except (wire.RpcError, KeyError, TypeError) as exc:
        await mm.report_end(turn, call_id, f"[terminal failed: {exc}]", True)
        await mm.say(turn, f"run -> [terminal failed: {exc}]")
        return
    text = output.get("output", "") if isinstance(output, dict) else ""
    ended = exit_text(status)
    end = {
        "toolCallId": call_id,
        "status": "completed" if ended == "exit status 0" else "failed",
        "rawOutput": {"output": f"{text}[{ended}]"},
        "content": shown,  # the terminal stays what the call shows
    }
    await mm.update(sid, {"sessionUpdate": "tool_call_update", **end})
    await mm.say(turn, f"run -> {ended}")


SERVICES: dict[str, Command] = {"/question": question, "/run": run}
