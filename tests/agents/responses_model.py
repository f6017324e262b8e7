"""A scripted model behind OpenAI's Responses API (``POST /v1/responses``, server-sent events)
on loopback, so that codex (through codex-acp, with a ``model_provider`` whose ``base_url`` is
this server and ``wire_api = "responses"``) acts without a model.

The test gives ``script(items) -> Reply``: the request's ``input`` items in (messages,
``function_call`` and ``function_call_output`` items), the model's next step out (text, or one
function call). Every request, whatever its path, is kept (scripted_http.py), so a test can
assert what codex told its model, e.g. a command's output. A request other than ``POST
…/responses`` gets an empty JSON answer (``{"data": [], "models": []}`` for a model list).

A request that asks for a JSON answer (``text.format`` a ``json_schema``: codex's "Auto review"
asks its reviewer model whether a command may run) gets ``review`` as its text, if given.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agents import scripted_http
from agents.scripted_http import Answer, Reply, Script, ScriptedServer, sse, text_of

USAGE = {
    "input_tokens": 12,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 17,
}


class ModelServer(ScriptedServer):
    base_path = "/v1"

    def __init__(self, script: Script, review: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.script = script
        self.review = review

    def turns(self) -> list[dict[str, Any]]:
        """The bodies of the ``POST …/responses`` requests of the agent's own turns, in order."""
        return [body for body in self.posted("/responses") if not _wants_json(body)]

    def reviews(self) -> list[dict[str, Any]]:
        """The bodies of the requests that asked for a JSON answer (a reviewer's)."""
        return [body for body in self.posted("/responses") if _wants_json(body)]

    def outputs(self) -> list[str]:
        """The output of every function call codex sent its model, in order, once each."""
        seen: list[str] = []
        for body in self.turns():
            for item in body.get("input") or []:
                if item.get("type") == "function_call_output":
                    text = text_of(item.get("output"))
                    if text not in seen:
                        seen.append(text)
        return seen

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        if method == "GET":
            return Answer({"object": "list", "data": [], "models": []})
        if method != "POST" or not path.endswith("/responses"):
            return Answer({})
        if self.review is not None and _wants_json(body):
            reply = Reply(text=json.dumps(self.review))
        else:
            reply = self.script(body.get("input") or [])
        events = _events(self, body.get("model", "scripted"), reply)
        return Answer(events=[sse(event, event["type"]) for event in events])


def _events(server: ModelServer, model: str, reply: Reply) -> Iterator[dict[str, Any]]:
    """One reply as a Responses stream: created, its items (text as deltas), completed."""
    response_id = server.next_id("resp")
    response = {"id": response_id, "object": "response", "model": model, "status": "in_progress"}
    yield {"type": "response.created", "response": response}
    index = 0
    if reply.text:
        item_id = server.next_id("msg")
        item: dict[str, Any] = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        half = len(reply.text) // 2
        for delta in (reply.text[:half], reply.text[half:]):
            if delta:
                yield {
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": index,
                    "content_index": 0,
                    "delta": delta,
                }
        done = {
            **item,
            "status": "completed",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
        }
        yield {"type": "response.output_item.done", "output_index": index, "item": done}
        index += 1
    if reply.tool is not None:
        call = {
            "type": "function_call",
            "id": server.next_id("fc"),
            "call_id": server.next_id("call"),
            "name": reply.tool,
            "arguments": json.dumps(reply.arguments),
            "status": "completed",
            **({"namespace": reply.namespace} if reply.namespace else {}),
        }
        yield {"type": "response.output_item.added", "output_index": index, "item": call}
        yield {"type": "response.output_item.done", "output_index": index, "item": call}
    completed = {**response, "status": "completed", "usage": USAGE}
    yield {"type": "response.completed", "response": completed}


def _wants_json(body: dict[str, Any]) -> bool:
    form = (body.get("text") or {}).get("format") or {}
    return isinstance(form, dict) and form.get("type") == "json_schema"


def last_call(items: list[dict[str, Any]]) -> str | None:
    """The name of the function whose output is the last input item, if it is one."""
    if not items or items[-1].get("type") != "function_call_output":
        return None
    wanted = items[-1].get("call_id")
    for item in reversed(items):
        if item.get("type") == "function_call" and item.get("call_id") == wanted:
            return str(item.get("name"))
    return None


def user_text(items: list[dict[str, Any]]) -> str:
    """The last user message's text (the prompt this step answers)."""
    for item in reversed(items):
        if item.get("type", "message") == "message" and item.get("role") == "user":
            return text_of(item.get("content"))
    return ""


@contextmanager
def serving(script: Script, review: dict[str, Any] | None = None) -> Iterator[ModelServer]:
    with scripted_http.serving(ModelServer(script, review)) as server:
        yield server
