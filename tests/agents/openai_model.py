"""A scripted model behind an OpenAI-compatible ``POST /v1/chat/completions`` on loopback, so
that a real agent that talks to a model over HTTP (qwen-code with ``--auth-type openai`` and
``OPENAI_BASE_URL``) acts without one.

The test gives ``script(messages) -> Reply``: each request's chat messages in, the assistant's
next step out (text, or one tool call). Every request is kept (scripted_http.py), so a test can
assert what the agent told its model — e.g. the text a tool read. Streaming requests get
server-sent events in OpenAI's chunk format; others get one JSON answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agents import scripted_http
from agents.scripted_http import Answer, Reply, Script, ScriptedServer, sse, text_of

USAGE = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}


class ModelServer(ScriptedServer):
    base_path = "/v1"

    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    def tool_results(self) -> list[str]:
        """The content of every tool message the agent sent its model, in order, once each."""
        seen: list[str] = []
        for body in self.posted("/chat/completions"):
            for message in body.get("messages", []):
                if message.get("role") == "tool":
                    text = text_of(message.get("content"))
                    if text not in seen:
                        seen.append(text)
        return seen

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        if method != "POST" or not path.endswith("/chat/completions"):
            return super().answer(method, path, body)
        reply = self.script(body.get("messages") or [])
        model = body.get("model", "scripted")
        streaming = bool(body.get("stream"))
        delta, finish = _delta(reply, self.next_id("call"), streaming)
        if not streaming:
            choice = {"index": 0, "message": delta, "finish_reason": finish}
            return Answer(_completion("chat.completion", model, choice, usage=True))
        chunks = [
            _completion("chat.completion.chunk", model, {"index": 0, "delta": delta}),
            _completion(
                "chat.completion.chunk",
                model,
                {"index": 0, "delta": {}, "finish_reason": finish},
                usage=True,
            ),
        ]
        return Answer(events=[*map(sse, chunks), sse("[DONE]")])


def _completion(kind: str, model: str, choice: dict[str, Any], usage: bool = False) -> dict:
    body: dict[str, Any] = {
        "id": "scripted",
        "object": kind,
        "created": 0,
        "model": model,
        "choices": [{"finish_reason": None, **choice}],
    }
    if usage:
        body["usage"] = USAGE
    return body


def _delta(reply: Reply, call_id: str, streaming: bool) -> tuple[dict[str, Any], str]:
    if reply.tool is None:
        return {"role": "assistant", "content": reply.text}, "stop"
    call: dict[str, Any] = {
        "id": call_id,
        "type": "function",
        "function": {"name": reply.tool, "arguments": json.dumps(reply.arguments)},
    }
    if streaming:
        call["index"] = 0
    return {"role": "assistant", "content": reply.text or None, "tool_calls": [call]}, "tool_calls"


def last_tool(messages: list[dict[str, Any]]) -> str | None:
    """The name of the tool whose result is the last message, if it is a tool result."""
    if not messages or messages[-1].get("role") != "tool":
        return None
    wanted = messages[-1].get("tool_call_id")
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            if call.get("id") == wanted:
                return call["function"]["name"]
    return None


def user_text(messages: list[dict[str, Any]]) -> str:
    """The last user message's text (the prompt this step answers)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


@contextmanager
def serving(script: Script) -> Iterator[ModelServer]:
    with scripted_http.serving(ModelServer(script)) as server:
        yield server
