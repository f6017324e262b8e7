"""What crossed the wire, from the fake mm's side: its trace file (``trace.jsonl``, one row per
message: ``{"dir": "in" | "out", "msg": ...}``; see plugin_harness.agent_file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# What mm reads of an expired deadline: the Go SDK's toReqErr(context.DeadlineExceeded).
DEADLINE_ERROR = (
    '{"code":-32603,"message":"Internal error","data":{"error":"context deadline exceeded"}}'
)


def trace_rows(path: Path) -> list[dict[str, Any]]:
    """Every complete row of a trace file (a line still being written is left out)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines() if line.strip()]


def trace(directory: Path, direction: str) -> list[dict[str, Any]]:
    """The messages the fake mm received ("in") or sent ("out"), in order."""
    rows = trace_rows(directory / "trace.jsonl")
    return [r["msg"] for r in rows if r["dir"] == direction and isinstance(r["msg"], dict)]


def permission_traffic(directory: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """(titles asked, [(title, chosen option id or "cancelled")]) of session/request_permission
    on the wire, in order."""
    asked = {
        m["id"]: m["params"]["toolCall"].get("title", "")
        for m in trace(directory, "out")
        if m.get("method") == "session/request_permission"
    }
    answered = []
    for m in trace(directory, "in"):
        if "result" in m and m.get("id") in asked:
            outcome = m["result"]["outcome"]
            answered.append((asked[m["id"]], outcome.get("optionId") or outcome["outcome"]))
    return list(asked.values()), answered


def permission_answers(directory: Path) -> list[tuple[str, str]]:
    """(title, chosen option id or "cancelled") of each session/request_permission, in order."""
    return permission_traffic(directory)[1]


def prompts_by_session(directory: Path) -> list[tuple[str, str]]:
    """(session id, the prompt's text blocks joined) of each session/prompt, in order."""
    return [
        (m["params"]["sessionId"], "".join(b.get("text", "") for b in m["params"]["prompt"]))
        for m in trace(directory, "in")
        if m.get("method") == "session/prompt"
    ]
