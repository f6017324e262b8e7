"""A minimal ACP agent (JSON lines on stdio) that advertises the ``promptCapabilities`` it is
given and records every prompt it receives, for tests/test_mentions.py (mm's spec says nothing
of promptCapabilities, so the fake mm advertises none, as mm does).

    prompt_agent.py <trace.jsonl> [embeddedContext,image,delay]

Each ``session/prompt``'s ``prompt`` (the content blocks, as they crossed the wire) is one line
of the trace file; the answer is one text chunk ``GOT <the blocks' types>``.
"""

from __future__ import annotations

import json
import sys
import time

from jsonl import requests, send


def main() -> None:
    trace = sys.argv[1]
    names = [n for n in (sys.argv[2] if len(sys.argv) > 2 else "").split(",") if n]
    delay = "delay" in names  # a slow start: initialize is answered 2 s late
    caps = {"promptCapabilities": dict.fromkeys((n for n in names if n != "delay"), True)}
    for request in requests():
        method, params, rid = request["method"], request.get("params") or {}, request["id"]
        if method == "initialize":
            if delay:
                time.sleep(2)
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": caps}})
        elif method == "session/new":
            send({"id": rid, "result": {"sessionId": "prompt-1"}})
        elif method == "session/prompt":
            blocks = params.get("prompt", [])
            with open(trace, "a", encoding="utf-8") as f:
                f.write(json.dumps(blocks) + "\n")
            kinds = " ".join(str(b.get("type")) for b in blocks)
            body = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": f"GOT {kinds}"},
            }
            send(
                {
                    "method": "session/update",
                    "params": {"sessionId": params["sessionId"], "update": body},
                }
            )
            send({"id": rid, "result": {"stopReason": "end_turn"}})
        else:
            send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
