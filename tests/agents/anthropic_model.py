"""A scripted model behind Anthropic's ``POST /v1/messages`` on loopback, so that a real agent
that talks to Claude over HTTP (claude-agent-acp, through ``ANTHROPIC_BASE_URL``) acts without
one.

The test gives ``script(messages) -> Reply``: the messages of each request that offers tools
(the agent's own loop) in, the assistant's next step out (text, or one ``tool_use``). Requests
without tools are Claude Code's side questions (a title for the session, a topic check): they
get ``side_text``. Token counting (``/v1/messages/count_tokens``) gets a count. Every request —
path and body — is kept (scripted_http.py), so a test can assert what the agent told its
model (e.g. a command's output). Streaming requests get Anthropic's server-sent events
(``message_start``, ``content_block_*``, ``message_delta``, ``message_stop``); others one JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from agents import scripted_http
from agents.scripted_http import Answer, ScriptedServer, sse, text_of


@dataclass
class Reply:
    """The model's next step: ``text``, then (if ``tool``) a ``tool_use`` of ``tool``."""

    text: str = ""
    tool: str | None = None
    input: dict[str, Any] = field(default_factory=dict)


Script = Callable[[list[dict[str, Any]]], Reply]

NOT_FOUND = {"type": "error", "error": {"type": "not_found_error"}}


class ModelServer(ScriptedServer):
    """``base_url`` is what ``ANTHROPIC_BASE_URL`` is set to (the SDK appends ``/v1/messages``)."""

    def __init__(self, script: Script, side_text: str = "Scripted") -> None:
        super().__init__()
        self.script = script
        self.side_text = side_text
        # The usage each answer reports (Claude Code prices it: claude-agent-acp's cost).
        self.usage = {"input_tokens": 12, "output_tokens": 5}

    def turns(self) -> list[dict[str, Any]]:
        """The bodies of the agent-loop requests (those that offered tools), in order."""
        return [body for body in self.posted("/v1/messages") if body.get("tools")]

    def tool_results(self) -> list[str]:
        """The text of every ``tool_result`` the agent sent its model, in order, once each."""
        seen: list[str] = []
        for body in self.turns():
            for message in body.get("messages", []):
                for block in _blocks(message):
                    if block.get("type") == "tool_result":
                        text = text_of(block.get("content"))
                        if text not in seen:
                            seen.append(text)
        return seen

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        if method == "POST" and path.endswith("/count_tokens"):
            return Answer({"input_tokens": 12})
        if method != "POST" or not path.endswith("/v1/messages"):
            return Answer(NOT_FOUND, status=404)
        if body.get("tools"):
            reply = self.script(body.get("messages") or [])
        else:
            reply = Reply(text=self.side_text)
        message = {
            "id": self.next_id("msg_scripted"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "scripted"),
            "content": _content(reply, self.next_id("toolu_scripted")),
            "stop_reason": "tool_use" if reply.tool else "end_turn",
            "stop_sequence": None,
            "usage": dict(self.usage),
        }
        if not body.get("stream"):
            return Answer(message)
        return Answer(events=[sse(event, event["type"]) for event in _events(message)])


def _content(reply: Reply, tool_id: str) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    if reply.tool:
        content.append(
            {"type": "tool_use", "id": tool_id, "name": reply.tool, "input": reply.input}
        )
    return content


def _events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The message as Anthropic streams it: text in two deltas, a tool's input as JSON."""
    usage = message["usage"]
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": usage["input_tokens"]},
    }
    yield {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
            text = block["text"]
            for part in (text[: len(text) // 2], text[len(text) // 2 :]):
                delta = {"type": "text_delta", "text": part}
                yield {"type": "content_block_delta", "index": index, "delta": delta}
        else:
            opened = {**block, "input": {}}
            yield {"type": "content_block_start", "index": index, "content_block": opened}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": usage["output_tokens"]},
    }
    yield {"type": "message_stop"}


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def last_tool(messages: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(tool name, result text) when the last message answers a ``tool_use``, else None.
    Claude Code puts notes of its own after it, as ``system`` messages: those are skipped."""
    while messages and messages[-1].get("role") == "system":
        messages = messages[:-1]
    if not messages or messages[-1].get("role") != "user":
        return None
    blocks = _blocks(messages[-1])
    results = [b for b in blocks if b.get("type") == "tool_result"]
    interrupted = any(str(b.get("text", "")).startswith("[Request interrupted") for b in blocks)
    if not results or (interrupted and any(_prompted(b) for b in blocks)):
        return None  # a new prompt rides with the result of a call a cancel stopped
    wanted = results[-1].get("tool_use_id")
    for message in reversed(messages):
        for block in _blocks(message):
            if block.get("type") == "tool_use" and block.get("id") == wanted:
                return block["name"], text_of(results[-1].get("content"))
    return None


def _prompted(block: dict[str, Any]) -> bool:
    """A text block the user typed (not Claude Code's own notes: reminders, interruptions)."""
    text = block.get("text", "") if block.get("type") == "text" else ""
    return bool(text.strip()) and not text.startswith(("<system-reminder>", "[Request interrupted"))


def user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message that is not a tool result (the prompt this answers)."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        texts = [b["text"] for b in _blocks(message) if _prompted(b)]
        if texts:
            return "\n".join(texts)
    return ""


@contextmanager
def serving(script: Script, side_text: str = "Scripted") -> Iterator[ModelServer]:
    with scripted_http.serving(ModelServer(script, side_text)) as server:
        yield server
