"""The wire of the small test agents (fs_agent, shapes, spawner, modes): JSON-RPC messages, one
JSON object per line on stdio. Each agent is run as a script, so it imports this as ``jsonl``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def messages() -> Iterator[dict[str, Any]]:
    """Every JSON object the client sends, until it closes stdin (other lines are skipped)."""
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            yield message


def requests() -> Iterator[dict[str, Any]]:
    """The client's requests (notifications such as session/cancel, and answers, skipped)."""
    for message in messages():
        if "id" in message and "method" in message:
            yield message
