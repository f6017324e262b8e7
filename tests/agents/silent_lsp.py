#!/usr/bin/env python3
"""A language server that starts and never publishes a diagnostic: it answers ``initialize``
(full text sync) and ``shutdown``, ends on ``exit``, and reads every other message without a
word — a server that never answers, for tests/test_feedback_diagnostics.py and
bench/diagnostics_wait.py.

    silent_lsp.py
"""

from __future__ import annotations

import json
import sys


def read() -> dict | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))


def send(message: dict) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def main() -> None:
    while (message := read()) is not None:
        method = message.get("method")
        if method == "initialize":
            result = {"capabilities": {"textDocumentSync": 1}, "serverInfo": {"name": "silent"}}
            send({"id": message["id"], "result": result})
        elif method == "shutdown":
            send({"id": message["id"], "result": None})
        elif method == "exit":
            return


if __name__ == "__main__":
    main()
