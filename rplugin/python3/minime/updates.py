"""``session/update`` payloads (SDK models) turned into the library's events."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .model import Event, ToolCall, ToolCallLocation

TERMINAL_STATUSES = ("completed", "failed")
# The output of this client's terminal of that id (None: no such terminal here).
TerminalText = Callable[[str], str | None]


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump(mode="json", by_alias=True, exclude_none=True)
    return value


def _field(item: Any, attribute: str, key: str) -> Any:
    """A content item's field: an SDK model's attribute, or a plain dict's wire key (what a
    turn keeps of its calls' content)."""
    return item.get(key) if isinstance(item, dict) else getattr(item, attribute, None)


def _block_text(block: Any) -> str:
    text = _field(block, "text", "text")
    return text if isinstance(text, str) else ""


# Where agents put a tool's text in a JSON rawOutput: mm ``output``, codex-acp
# ``formatted_output`` / ``aggregated_output`` / ``stdout`` (with ``stderr``).
OUTPUT_FIELDS = ("output", "formatted_output", "aggregated_output", "stdout")
# A rawOutput shown as JSON is cut past this many characters: an edit's rawOutput can be
# 512 KB (the old and the new file), which nobody reads in a turn.
MAX_JSON_OUTPUT = 20_000


def _is_diff(item: Any) -> bool:
    kind = item.get("type") if isinstance(item, dict) else getattr(item, "type", None)
    return kind == "diff"


def tool_output(
    raw_output: Any,
    content: list[Any] | None,
    meta: Any = None,
    diffed: bool = False,
    streamed: str = "",
    terminal_text: TerminalText | None = None,
) -> str:
    """The text a tool call produced, wherever the agent put it: mm in ``rawOutput.output``,
    codex-acp in other fields of a JSON rawOutput, qwen-code in ``content`` (with rawOutput
    ""), codex-acp 2.6 in ``_meta`` terminal chunks (``streamed``: what the call's earlier
    updates sent); otherwise a JSON rawOutput, pretty and capped, unless the content has a
    diff (or had one earlier: ``diffed``), which says it better."""
    known = False
    if isinstance(raw_output, dict):
        for key in OUTPUT_FIELDS:
            value = raw_output.get(key)
            if isinstance(value, str):
                known = True
                if value:
                    stderr = raw_output.get("stderr") if key == "stdout" else None
                    return value + (f"\n{stderr}" if isinstance(stderr, str) and stderr else "")
    if isinstance(raw_output, str) and raw_output:
        return raw_output
    texts = []
    terminals = []
    for item in content or []:
        inner = _field(item, "content", "content")
        if inner is not None:
            texts.append(_block_text(inner))
        terminal = _field(item, "terminal_id", "terminalId")
        if isinstance(terminal, str):
            terminals.append(terminal)
    if any(texts):
        return "".join(texts)
    shown = _terminal_output(meta, streamed)
    if shown:
        return shown
    if terminals and terminal_text is not None:
        kept = [text for t in terminals if (text := terminal_text(t)) is not None]
        if kept:
            return "\n".join(kept)
        names = ", ".join(terminals)
        return f"(the output is in the agent's terminal {names}, which this client never created)"
    if terminals:
        names = ", ".join(terminals)
        return f"(the output is in the agent's terminal {names}; this client has no terminal)"
    if known or raw_output in (None, "", {}, []):
        return ""
    if diffed or any(_is_diff(item) for item in content or []):
        # The diff is drawn; a JSON rawOutput beside it is the same old and new file again
        # (qwen-code's fileDiff/originalContent/newContent, or 512 KB of an edit's JSON).
        return ""
    return readable_json(raw_output)


def terminal_chunk(meta: Any) -> str:
    """The command output one update carries in ``_meta`` (codex-acp: ``terminal_output_delta``
    for a client that declares nothing, ``terminal_output`` for Zed), each an append."""
    if not isinstance(meta, dict):
        return ""
    for key in ("terminal_output_delta", "terminal_output"):
        chunk = meta.get(key)
        if isinstance(chunk, dict) and isinstance(chunk.get("data"), str):
            return chunk["data"]
    return ""


def _terminal_output(meta: Any, streamed: str) -> str:
    """A command's output from terminal chunks without the client's terminal capability: the
    earlier ones (``streamed``) and this update's, then ``terminal_exit``'s exit code."""
    text = streamed + terminal_chunk(meta)
    exit_ = meta.get("terminal_exit") if isinstance(meta, dict) else None
    if isinstance(exit_, dict) and exit_.get("exit_code") is not None:
        text += (
            "" if text.endswith("\n") or not text else "\n"
        ) + f"(exit code {exit_['exit_code']})"
    return text


def readable_json(value: Any) -> str:
    """A JSON value indented, cut at MAX_JSON_OUTPUT characters with a note."""
    try:
        text = json.dumps(value, ensure_ascii=False, indent=2)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    if len(text) > MAX_JSON_OUTPUT:
        more = len(text) - MAX_JSON_OUTPUT
        text = f"{text[:MAX_JSON_OUTPUT]}\n… ({more} more characters not shown)"
    return text


# Bounds on what one update's ``locations`` may hold: the files a call works on are a few; a
# path longer than PATH_MAX names no file.
MAX_LOCATIONS = 50
MAX_LOCATION_PATH = 4096
MAX_LINE = 2**31 - 1  # beyond it, no file's line (and no msgpack integer past 2**64)


def tool_locations(locations: Any) -> list[ToolCallLocation] | None:
    """An update's ``locations`` (SDK ToolCallLocation models), bounded: at most MAX_LOCATIONS,
    paths of at most MAX_LOCATION_PATH characters (longer ones and empty ones dropped), a line
    past MAX_LINE not said; None when the update names none (not said: earlier ones stand)."""
    if locations is None:
        return None
    kept = []
    for item in locations:
        path, line = getattr(item, "path", None), getattr(item, "line", None)
        if not isinstance(path, str) or not path or len(path) > MAX_LOCATION_PATH:
            continue
        if not isinstance(line, int) or isinstance(line, bool) or not 0 <= line <= MAX_LINE:
            line = None
        kept.append(ToolCallLocation(path=path, line=line))
        if len(kept) == MAX_LOCATIONS:
            break
    return kept


def _tool_call(update: Any) -> ToolCall:
    """What one update says of its call, None where it says nothing (see ToolCall)."""
    return ToolCall(
        id=update.tool_call_id,
        title=update.title,
        kind=update.kind,
        status=update.status,
        input=update.raw_input,
        content=[_plain(item) for item in update.content or []],
        locations=tool_locations(update.locations),
    )


def to_event(
    update: Any,
    earlier: ToolCall | None = None,
    streamed: str = "",
    terminal_text: TerminalText | None = None,
) -> Event | None:
    """One event per update; None for the kinds a turn does not show (modes, commands, …).
    ``earlier``: the call as the turn knows it, for an update that names only what changed;
    ``streamed``: the terminal output its earlier updates carried (:func:`terminal_chunk`)."""
    kind = getattr(update, "session_update", None)
    if kind == "agent_message_chunk":
        return Event(kind="text", text=_block_text(update.content), message_id=update.message_id)
    if kind == "agent_thought_chunk":
        return Event(
            kind="thinking", text=_block_text(update.content), message_id=update.message_id
        )
    if kind == "tool_call":
        return Event(kind="tool_call", call=_tool_call(update))
    if kind == "tool_call_update":
        call = _tool_call(update)
        if update.status in TERMINAL_STATUSES:
            return _result(update, call, earlier, streamed, terminal_text)
        return Event(kind="tool_call", call=call)
    if kind == "plan":
        return Event(kind="plan", entries=[_plain(entry) for entry in update.entries])
    if kind == "user_message_chunk":
        # Only seen when a loaded session replays its history.
        return Event(kind="user", text=_block_text(update.content), message_id=update.message_id)
    return None


def ended_call(
    update: Any, streamed: str = "", terminal_text: TerminalText | None = None
) -> Event | None:
    """The ``tool_result`` of a ``tool_call`` that arrives already ended (qwen-code: completed,
    its text in ``content``; a replayed history): sent after its ``tool_call`` event."""
    if getattr(update, "session_update", None) != "tool_call":
        return None
    if update.status not in TERMINAL_STATUSES:
        return None
    return _result(update, _tool_call(update), None, streamed, terminal_text)


def _result(
    update: Any,
    call: ToolCall,
    earlier: ToolCall | None,
    streamed: str,
    terminal_text: TerminalText | None = None,
) -> Event:
    # An update without content leaves the call's content as it was (minime.turn.merged): a
    # terminal named by the tool_call still holds the output of the call that completes.
    content = update.content or (earlier.content if earlier is not None else None)
    return Event(
        kind="tool_result",
        call=call,
        status=update.status,
        output=tool_output(
            update.raw_output,
            content,
            update.field_meta,
            diffed=earlier is not None and any(_is_diff(c) for c in earlier.content),
            streamed=streamed,
            terminal_text=terminal_text,
        ),
    )


def tool_call_of(update: Any) -> ToolCall:
    """The call an update or a permission request names (the handler's seam: it builds a
    permission request's call the way a turn builds its calls)."""
    return _tool_call(update)
