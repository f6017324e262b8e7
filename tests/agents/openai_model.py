"""A scripted model behind an OpenAI-compatible ``POST /v1/chat/completions`` on loopback, so
that a real agent that talks to a model over HTTP (qwen-code with ``--auth-type openai`` and
``OPENAI_BASE_URL``) acts without one.

The test gives ``script(messages) -> Reply``: each request's chat messages in, the assistant's
next step out (text, or one tool call). Every request body is kept in ``requests``, so a test
can assert what the agent told its model — e.g. the text a tool read. Streaming requests get
server-sent events in OpenAI's chunk format; others get one JSON answer.
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

USAGE = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}


@dataclass
class Reply:
    """The model's next step: ``text``, or a call of tool ``tool`` with ``arguments``."""

    text: str = ""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


Script = Callable[[list[dict[str, Any]]], Reply]


class ModelServer:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._calls = itertools.count(1)
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._http.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def tool_results(self) -> list[str]:
        """The content of every tool message the agent sent its model, in order, once each."""
        seen: list[str] = []
        with self._lock:
            bodies = list(self.requests)
        for body in bodies:
            for message in body.get("messages", []):
                if message.get("role") == "tool":
                    text = _text(message.get("content"))
                    if text not in seen:
                        seen.append(text)
        return seen

    def _reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
        return self.script(body.get("messages") or [])

    def call_id(self) -> str:
        with self._lock:
            return f"call_{next(self._calls)}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_POST(self) -> None:  # http.server calls it by this name
                size = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}")
                reply = server._reply(body)
                model = body.get("model", "scripted")
                if body.get("stream"):
                    self._stream(model, reply)
                else:
                    self._whole(model, reply)

            def _stream(self, model: str, reply: Reply) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                delta, finish = _delta(reply, server.call_id(), streaming=True)
                for choice in (
                    {"delta": delta, "finish_reason": None},
                    {"delta": {}, "finish_reason": finish},
                ):
                    chunk = {
                        "id": "scripted",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": model,
                        "choices": [{"index": 0, **choice}],
                    }
                    if choice["finish_reason"]:
                        chunk["usage"] = USAGE
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")

            def _whole(self, model: str, reply: Reply) -> None:
                message, finish = _delta(reply, server.call_id(), streaming=False)
                data = json.dumps(
                    {
                        "id": "scripted",
                        "object": "chat.completion",
                        "created": 0,
                        "model": model,
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": USAGE,
                    }
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


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


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return json.dumps(content)


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
            return _text(message.get("content"))
    return ""


@contextmanager
def serving(script: Script) -> Iterator[ModelServer]:
    server = ModelServer(script)
    thread = threading.Thread(target=server._http.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server._http.shutdown()
        server._http.server_close()
