"""A minimal ACP agent (JSON lines on stdio) that uses the client's file system, for
tests/test_fs.py and tests/test_library_fs.py. It runs no model: each prompt is JSON.

- a prompt ``{"method": "fs/read_text_file", "params": {...}}`` (or a list of them; any client
  method: ``elicitation/create`` too, for tests/test_elicitation.py) sends each
  request to the client (``sessionId`` filled in unless given) and answers with one text chunk
  per request: ``FS {"result": ...}`` or ``FS {"error": ...}``, the client's answer as JSON;
  an entry's ``"say"`` is sent as a text chunk just before its request, its ``"diff"`` (an ACP
  diff item) as a completed edit tool call carrying it (qwen-code's write_file shows the
  change it then writes), its ``"diff_after"`` the same call announced in progress with no
  content before the request and completed with the diff after it (qwen-code in auto-edit
  mode, where no permission is asked), and ``"repeat": n`` makes its ``params.content`` n
  times itself (a large write without a large prompt);
- the prompt ``caps`` answers ``CAPS <the clientCapabilities it received at initialize>``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from jsonl import messages, requests, send

_ids = iter(range(1000, 10**9))


def say(session_id: str, text: str) -> None:
    body = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    send({"method": "session/update", "params": {"sessionId": session_id, "update": body}})


def tool_with_diff(session_id: str, item: dict, status: str = "completed") -> str:
    body = {
        "sessionUpdate": "tool_call",
        "toolCallId": f"edit-{next(_ids)}",
        "title": f"Edit {item.get('path')}",
        "kind": "edit",
        "status": status,
        "content": [{"type": "diff", **item}] if status == "completed" else [],
    }
    send({"method": "session/update", "params": {"sessionId": session_id, "update": body}})
    return body["toolCallId"]


def diff_result(session_id: str, call_id: str, item: dict) -> None:
    body = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": "completed",
        "content": [{"type": "diff", **item}],
    }
    send({"method": "session/update", "params": {"sessionId": session_id, "update": body}})


def ask(method: str, params: dict) -> dict:
    """Send a request to the client and read until its answer (the client sends us nothing
    else while we wait: the prompt is ours)."""
    rid = next(_ids)
    send({"id": rid, "method": method, "params": params})
    for message in messages():
        if message.get("id") == rid and "method" not in message:
            return {k: message[k] for k in ("result", "error") if k in message}
    raise SystemExit(0)


def serve(session_id: str, run: Callable[[str, list[dict]], None]) -> None:
    """The agent's side of the wire until stdin closes: ``initialize`` (its
    clientCapabilities kept), ``session/new`` (``session_id``), and each prompt: ``caps``
    answers ``CAPS <them>``, any other text is read as JSON (one step or a list) and given to
    ``run(session_id, steps)``; every other request: method not found."""
    caps: dict = {}
    for request in requests():
        method, params, rid = request["method"], request.get("params") or {}, request["id"]
        if method == "initialize":
            caps = params.get("clientCapabilities") or {}
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            send({"id": rid, "result": {"sessionId": session_id}})
        elif method == "session/prompt":
            sid = params["sessionId"]
            texts = [b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text"]
            text = texts[0].strip() if texts else ""  # the editor may add context blocks
            if text == "caps":
                say(sid, "CAPS " + json.dumps(caps, sort_keys=True))
            else:
                try:
                    steps = json.loads(text)
                except ValueError:
                    steps = []
                run(sid, steps if isinstance(steps, list) else [steps])
            send({"id": rid, "result": {"stopReason": "end_turn"}})
        else:
            send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})


def run_asks(sid: str, asks: list[dict]) -> None:
    for one in asks:
        one_params = {"sessionId": sid, **one.get("params", {})}
        if "repeat" in one:
            one_params["content"] = one_params["content"] * one["repeat"]
        if "say" in one:
            say(sid, one["say"])
        if "diff" in one:
            tool_with_diff(sid, one["diff"])
        later = one.get("diff_after")
        call_id = tool_with_diff(sid, later, "in_progress") if later else ""
        say(sid, "FS " + json.dumps(ask(one["method"], one_params)))
        if later:
            diff_result(sid, call_id, later)


def main() -> None:
    serve("fs-1", run_asks)


if __name__ == "__main__":
    main()
