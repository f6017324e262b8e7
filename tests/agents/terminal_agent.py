"""A minimal ACP agent (JSON lines on stdio) that runs commands in the client terminal, for
tests/test_library_terminal.py and tests/test_terminal.py. It runs no model: each prompt is
JSON, a list of steps, each a client request sent in turn:

- ``{"method": "terminal/create", "params": {...}}`` (``sessionId`` filled in), and the same
  for ``terminal/output``, ``wait_for_exit``, ``kill``, ``release``, whose ``terminalId``, when
  not given, is that of the last terminal created;
- a step's ``"tool": true`` also announces a tool call (``call-<n>``, in progress) whose content
  is the terminal, right after the request (after ``terminal/create``: the new terminal), and
  ``"done": true`` completes that call (content: the terminal again; ``"done": "bare"``: an
  update with no content, which leaves the content as it was);
- ``"sleep": s`` waits s seconds before the request (a command that prints slowly);
- ``"exit": n`` makes the agent exit with status n right after the request (its death).

Each answer is sent back as one text chunk: ``TERM <method> {"result": ...}`` or
``{"error": ...}``. The prompt ``caps`` answers ``CAPS <clientCapabilities>``.
"""

from __future__ import annotations

import json
import os
import sys
import time

from fs_agent import ask, say, serve
from jsonl import send


def tool(
    session_id: str, call_id: str, terminal_id: str, update: str, status: str, bare: bool = False
) -> None:
    body = {
        "sessionUpdate": update,
        "toolCallId": call_id,
        "title": "Run a command",
        "kind": "execute",
        "status": status,
        "content": [{"type": "terminal", "terminalId": terminal_id}],
    }
    if bare:
        body = {"sessionUpdate": update, "toolCallId": call_id, "status": status}
    send({"method": "session/update", "params": {"sessionId": session_id, "update": body}})


def run(session_id: str, steps: list[dict]) -> None:
    last = ""
    calls = 0
    for step in steps:
        method = step["method"]
        params = {"sessionId": session_id, **step.get("params", {})}
        if method != "terminal/create":
            params.setdefault("terminalId", last)
        time.sleep(step.get("sleep", 0))
        answer = ask(method, params)
        if method == "terminal/create" and "result" in answer:
            last = answer["result"]["terminalId"]
        if step.get("tool"):
            calls += 1
            tool(session_id, f"call-{calls}", last, "tool_call", "in_progress")
        if step.get("done"):
            bare = step["done"] == "bare"
            tool(session_id, f"call-{calls}", last, "tool_call_update", "completed", bare)
        say(session_id, f"TERM {method} {json.dumps(answer, sort_keys=True)}\n")
        if "exit" in step:
            sys.stdout.flush()
            os._exit(step["exit"])


def main() -> None:
    serve("term-1", run)


if __name__ == "__main__":
    main()
