"""``session/update`` payloads (SDK models) turned into the library's events."""

from __future__ import annotations

import json
from typing import Any

from .model import Event, ToolCall

TERMINAL_STATUSES = ("completed", "failed")


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump(mode="json", by_alias=True, exclude_none=True)
    return value


def _block_text(block: Any) -> str:
    text = getattr(block, "text", None)
    return text if isinstance(text, str) else ""


def tool_output(raw_output: Any, content: list[Any] | None) -> str:
    """mm puts the tool's text in ``rawOutput.output``; other agents in content blocks."""
    if isinstance(raw_output, dict) and isinstance(raw_output.get("output"), str):
        return raw_output["output"]
    if isinstance(raw_output, str):
        return raw_output
    texts = []
    for item in content or []:
        inner = getattr(item, "content", None)
        if inner is not None:
            texts.append(_block_text(inner))
    if texts:
        return "".join(texts)
    if raw_output is None:
        return ""
    return json.dumps(raw_output, ensure_ascii=False, separators=(",", ":"))


def _tool_call(update: Any) -> ToolCall:
    return ToolCall(
        id=update.tool_call_id,
        title=update.title or "",
        kind=update.kind or "other",  # the kind ACP gives a call that names none
        status=update.status,
        input=update.raw_input,
        content=[_plain(item) for item in update.content or []],
    )


def to_event(update: Any) -> Event | None:
    """One event per update; None for the kinds a turn does not show (modes, commands, …)."""
    kind = getattr(update, "session_update", None)
    if kind == "agent_message_chunk":
        return Event(kind="text", text=_block_text(update.content))
    if kind == "agent_thought_chunk":
        return Event(kind="thinking", text=_block_text(update.content))
    if kind == "tool_call":
        return Event(kind="tool_call", call=_tool_call(update))
    if kind == "tool_call_update":
        call = _tool_call(update)
        if update.status in TERMINAL_STATUSES:
            return Event(
                kind="tool_result",
                call=call,
                status=update.status,
                output=tool_output(update.raw_output, update.content),
            )
        return Event(kind="tool_call", call=call)
    if kind == "plan":
        return Event(kind="plan", entries=[_plain(entry) for entry in update.entries])
    if kind == "user_message_chunk":
        # Only seen when a loaded session replays its history.
        return Event(kind="user", text=_block_text(update.content))
    return None
