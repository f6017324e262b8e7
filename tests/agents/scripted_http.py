"""What the scripted model servers share (openai_model.py, anthropic_model.py,
responses_model.py): an HTTP server on loopback, on a thread of the test process, that keeps
every request (method, path, JSON body) and answers each one as the subclass's ``answer`` says:
one JSON value, or server-sent events written as they come. Each module states only its API's
shapes."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar


@dataclass
class Reply:
    """The model's next step: ``text``, or a call of tool ``tool`` with ``arguments`` (the
    OpenAI APIs; Anthropic's has its own, with ``input``)."""

    text: str = ""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    # The Responses API's tool namespace (codex offers an MCP server's tools as one).
    namespace: str | None = None


Script = Callable[[list[dict[str, Any]]], Reply]


@dataclass
class Request:
    method: str
    path: str
    body: dict[str, Any]


@dataclass
class Answer:
    """A JSON answer (``value`` with ``status``), or an event stream (``events``: each the
    bytes of one server-sent event, see ``sse``)."""

    value: Any = None
    status: int = 200
    events: Iterable[bytes] | None = None


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: ``data`` as JSON (a str as it is: OpenAI's ``[DONE]``)."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


def text_of(content: Any) -> str:
    """A message's or a tool result's text: a string, or the text of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return json.dumps(content)


class ScriptedServer:
    """Subclasses give ``answer`` (and ``base_path``, what the agent's base URL ends with)."""

    base_path = ""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._http.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}{self.base_path}"

    def next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_{next(self._ids)}"

    def posted(self, path_end: str) -> list[dict[str, Any]]:
        """The bodies of the POSTs to a path ending with ``path_end``, in order."""
        with self._lock:
            return [
                r.body
                for r in self.requests
                if r.method == "POST" and r.path.split("?", 1)[0].rstrip("/").endswith(path_end)
            ]

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        return Answer({"error": "not scripted"}, status=404)

    def _take(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        with self._lock:
            self.requests.append(Request(method, path, body))
        return self.answer(method, path.split("?", 1)[0].rstrip("/"), body)


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: Any) -> None:
            pass

        def do_GET(self) -> None:  # http.server calls each by its method's name
            self._send(server._take("GET", self.path, {}))

        def do_HEAD(self) -> None:
            server._take("HEAD", self.path, {})
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(size) if size else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"unparsed": raw.decode("utf-8", "replace")}
            self._send(server._take("POST", self.path, body))

        def _send(self, answer: Answer) -> None:
            if answer.events is None:
                data = json.dumps(answer.value).encode()
                self.send_response(answer.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(answer.status)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            for event in answer.events:
                self.wfile.write(event)
                self.wfile.flush()

    return Handler


Server = TypeVar("Server", bound=ScriptedServer)


@contextmanager
def serving(server: Server) -> Iterator[Server]:
    """``server`` answering on its thread for the duration."""
    thread = threading.Thread(target=server._http.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server._http.shutdown()
        server._http.server_close()
