"""A session's conversation as the library saw it: each turn's ask and final answer, and the id
of the agent's last message in it. What a rewind continues from (branch.py): forked at that
message where the agent forks sessions, else carried into a new session as text — the asks
and the answers, never the tool calls nor their output.

Each ask and answer is kept up to MAX_TEXT characters; the text given to a new session holds
the latest exchanges up to MAX_HISTORY characters and says how many earlier ones it leaves out.
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

import msgspec

MAX_TEXT = 16_000
MAX_HISTORY = 200_000
HISTORY_URI = "minime://history"


class EndedTurn(Protocol):
    """A turn as history reads it (turn.Turn)."""

    prompt: str | list[dict[str, Any]]
    parts: list[str]

    def last_message(self) -> tuple[str | None, str]: ...


class Exchange(msgspec.Struct, frozen=True):
    """One turn: what was asked (its text blocks; other blocks by name), what the agent answered
    (its text, as ``Result.text``), and its last message (id and text: a fork point)."""

    ask: str
    answer: str
    message_id: str | None = None
    message_text: str = ""


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - limit} characters cut …]\n{text[-half:]}"


def prompt_text(prompt: str | list[dict[str, Any]]) -> str:
    """The text of a prompt: a string as it is, text blocks joined, any other block named."""
    if isinstance(prompt, str):
        return prompt
    parts: list[str] = []
    for block in prompt:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text") or ""))
        elif kind == "resource":
            resource = block.get("resource") or {}
            parts.append(f"[attached: {resource.get('uri', '')}]")
        elif kind == "resource_link":
            parts.append(f"[attached: {block.get('uri', '')}]")
        else:
            parts.append(f"[{kind}]")
    return "\n".join(parts)


class History:
    """The exchanges of one session, oldest first."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []

    def add(self, turn: EndedTurn) -> None:
        """A turn whose prompt went to the agent has ended (turn.py tells it, once)."""
        message_id, message_text = turn.last_message()
        self.exchanges.append(
            Exchange(
                ask=_cut(prompt_text(turn.prompt)),
                answer=_cut("".join(turn.parts)),
                message_id=message_id,
                message_text=message_text,
            )
        )

    def extend(self, exchanges: list[Exchange]) -> None:
        """A branch starts from these (branch.py)."""
        self.exchanges.extend(exchanges)


def _quoted(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def history_text(exchanges: list[Exchange]) -> str:
    """The conversation so far as a new session reads it (ends with a blank line)."""
    parts: list[str] = []
    size = 0
    first = len(exchanges)
    while first > 0:
        one = exchanges[first - 1]
        entry = f"ask {first}:\n{_quoted(one.ask)}\n\nanswer {first}:\n{_quoted(one.answer)}\n"
        if parts and size + len(entry) > MAX_HISTORY:
            break
        parts.insert(0, entry)
        size += len(entry)
        first -= 1
    left_out = f" (the first {first} left out for length)" if first else ""
    head = (
        f"[minime] This session continues a conversation of {len(exchanges)} earlier asks"
        f"{left_out}. The files were put back to how they were before the ask that follows."
        " The asks and the final answers so far (tool calls and their output not included):"
    )
    return head + "\n\n" + "\n".join(parts) + "\n"


def history_block(exchanges: list[Exchange], agent_capabilities: dict[str, Any]) -> dict[str, Any]:
    """The history as one prompt block: an embedded resource where the agent takes them
    (``promptCapabilities.embeddedContext``), else a text block."""
    text = history_text(exchanges)
    prompt_caps = agent_capabilities.get("promptCapabilities") or {}
    if prompt_caps.get("embeddedContext"):
        resource = {"uri": HISTORY_URI, "mimeType": "text/markdown", "text": text}
        return {"type": "resource", "resource": resource}
    return {"type": "text", "text": text}


def fork_meta(exchanges: list[Exchange]) -> dict[str, Any] | None:
    """The ``_meta`` of a ``session/fork`` that keeps ``exchanges`` (the history up to and with
    the turn of the last one's last message), or None when that message has no id.

    The fork point is the one claude-agent-acp 0.101 and codex-acp 2.6 read:
    ``_meta.jetbrains.air.fork = {version: 1, messageId, messageFingerprint, messageOccurrence}``
    (a sha256 of the message's text, and which of the messages with that text it is)."""
    last = exchanges[-1]
    if not last.message_id:
        return None
    point: dict[str, Any] = {"version": 1, "messageId": last.message_id}
    if last.message_text:
        digest = hashlib.sha256(last.message_text.encode("utf-8")).hexdigest()
        point["messageFingerprint"] = f"sha256:{digest}"
        point["messageOccurrence"] = sum(
            1 for one in exchanges if one.message_text == last.message_text
        )
    return {"jetbrains": {"air": {"fork": point}}}
