"""A scripted model behind OpenAI's Responses API (``POST /v1/responses``, server-sent events)
on loopback, so that codex (through codex-acp, with a ``model_provider`` whose ``base_url`` is
this server and ``wire_api = "responses"``) acts without a model.

The test gives ``script(items) -> Reply``: the request's ``input`` items in (messages,
``function_call`` and ``function_call_output`` items), the model's next step out (text, or one
function call). Every request, whatever its path, is kept in ``requests`` as (method, path,
body), so a test can assert what codex told its model, e.g. a command's output. A request
other than ``POST …/responses`` gets an empty JSON answer (``{"data": [], "models": []}`` for a
model list).

A request that asks for a JSON answer (``text.format`` a ``json_schema``: codex's "Auto review"
asks its reviewer model whether a command may run) gets ``review`` as its text, if given.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE = {
    "input_tokens": 12,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 17,
}


@dataclass
class Reply:
    """The model's next step: ``text``, or a call of function ``tool`` with ``arguments``."""

    text: str = ""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


Script = Callable[[list[dict[str, Any]]], Reply]


class ModelServer:
    def __init__(self, script: Script, review: dict[str, Any] | None = None) -> None:
        self.script = script
        self.review = review
        self.requests: list[tuple[str, str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._http.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def turns(self) -> list[dict[str, Any]]:
        """The bodies of the ``POST …/responses`` requests of the agent's own turns, in order."""
        with self._lock:
            bodies = [b for m, p, b in self.requests if m == "POST" and p.endswith("/responses")]
        return [body for body in bodies if not _wants_json(body)]

    def reviews(self) -> list[dict[str, Any]]:
        """The bodies of the requests that asked for a JSON answer (a reviewer's)."""
        with self._lock:
            return [b for _, _, b in self.requests if _wants_json(b)]

    def _reply(self, body: dict[str, Any]) -> Reply:
        if self.review is not None and _wants_json(body):
            return Reply(text=json.dumps(self.review))
        return self.script(body.get("input") or [])

    def outputs(self) -> list[str]:
        """The output of every function call codex sent its model, in order, once each."""
        seen: list[str] = []
        for body in self.turns():
            for item in body.get("input") or []:
                if item.get("type") == "function_call_output":
                    text = _text(item.get("output"))
                    if text not in seen:
                        seen.append(text)
        return seen

    def next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_{next(self._ids)}"

    def _record(self, method: str, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append((method, path, body))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:  # http.server calls it by this name
                server._record("GET", self.path, {})
                self._json({"object": "list", "data": [], "models": []})

            def do_POST(self) -> None:  # http.server calls it by this name
                size = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(size) if size else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                server._record("POST", self.path, body)
                if not self.path.rstrip("/").endswith("/responses"):
                    self._json({})
                    return
                self._stream(body.get("model", "scripted"), server._reply(body))

            def _json(self, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, model: str, reply: Reply) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for event in _events(server, model, reply):
                    data = json.dumps(event).encode()
                    self.wfile.write(b"event: " + event["type"].encode() + b"\ndata: " + data)
                    self.wfile.write(b"\n\n")
                    self.wfile.flush()
                self.close_connection = True

        return Handler


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
        }
        yield {"type": "response.output_item.added", "output_index": index, "item": call}
        yield {"type": "response.output_item.done", "output_index": index, "item": call}
    completed = {**response, "status": "completed", "usage": USAGE}
    yield {"type": "response.completed", "response": completed}


def _wants_json(body: dict[str, Any]) -> bool:
    form = (body.get("text") or {}).get("format") or {}
    return isinstance(form, dict) and form.get("type") == "json_schema"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return json.dumps(content)


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
            return _text(item.get("content"))
    return ""


@contextmanager
def serving(script: Script, review: dict[str, Any] | None = None) -> Iterator[ModelServer]:
    server = ModelServer(script, review)
    thread = threading.Thread(target=server._http.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server._http.shutdown()
        server._http.server_close()
