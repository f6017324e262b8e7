"""A minimal ACP agent (JSON lines on stdio) that offers session modes and config options, as
claude-agent-acp and codex-acp do, for tests/test_modes.py and tests/test_library_modes.py.

Its sessions start in mode ``auto`` (modes ``auto``, ``default``, ``plan``) with two config
options: ``model`` (a select: ``fast``, ``smart``) and ``web`` (a boolean). Environment:

- ``MODES_LOG``: a file that gets one JSON line per message received (what crossed the wire);
- ``MODES_OFFER=none``: sessions offer neither modes nor options;
- ``MODES_OFFER=option``: no ACP modes; the modes are a config option ``mode`` of category
  ``mode`` (as opencode offers ``build`` and ``plan``), set with ``session/set_config_option``;
- ``MODES_SAY=text``: a change of mode is said only as agent text ``[MODE_UPDATE] <id>`` (as
  gemini-cli says it), never as ``current_mode_update``;
- ``MODES_SET_MODE=mute``: ``session/set_mode`` is never answered.

A prompt's text says what the turn does:

- ``switch <id>``: the agent changes its own mode (``current_mode_update``), then ends;
- ``model <value>``: the agent changes its model option (``config_option_update``), then ends;
- ``wait``: the turn waits for a ``session/set_mode`` (or a cancel), then says the new mode;
- anything else: the turn says ``mode is <current>``.

``session/set_mode`` with a mode it does not offer is a JSON-RPC error, as an agent answers.
"""

from __future__ import annotations

import json
import os
from typing import Any

from jsonl import messages, send

MODES = [
    {"id": "auto", "name": "Auto", "description": "Edits without asking"},
    {"id": "default", "name": "Ask", "description": "Asks before editing"},
    {"id": "plan", "name": "Plan", "description": "Reads only"},
]
MODELS = [{"value": "fast", "name": "Fast model"}, {"value": "smart", "name": "Smart model"}]


class Session:
    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.mode = "auto"
        self.model = "fast"
        self.web = False
        self.waiting: Any = None  # the id of a "wait" prompt not answered yet

    def options(self) -> list[dict[str, Any]]:
        modes = []
        if os.environ.get("MODES_OFFER") == "option":
            values = [{"value": m["id"], "name": m["name"]} for m in MODES]
            modes = [
                {
                    "id": "mode",
                    "name": "Session Mode",
                    "category": "mode",
                    "type": "select",
                    "currentValue": self.mode,
                    "options": values,
                }
            ]
        return [
            *modes,
            {
                "id": "model",
                "name": "Model",
                "category": "model",
                "type": "select",
                "currentValue": self.model,
                "options": MODELS,
            },
            {"id": "web", "name": "Web search", "type": "boolean", "currentValue": self.web},
        ]


sessions: dict[str, Session] = {}


def update(session: Session, body: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": session.id, "update": body}})


def say(session: Session, text: str) -> None:
    content = {"type": "text", "text": text}
    update(session, {"sessionUpdate": "agent_message_chunk", "content": content})


def log(message: dict[str, Any]) -> None:
    path = os.environ.get("MODES_LOG")
    if path:
        with open(path, "a") as handle:
            handle.write(json.dumps(message) + "\n")


def new_session(session_id: str | None = None) -> dict[str, Any]:
    """session/new, or session/load of ``session_id`` (any id: it starts afresh, in ``auto``)."""
    session = Session(session_id or f"modes-{len(sessions) + 1}")
    sessions[session.id] = session
    if os.environ.get("MODES_OFFER") == "none":
        return {"sessionId": session.id}
    if os.environ.get("MODES_OFFER") == "option":
        return {"sessionId": session.id, "configOptions": session.options()}
    return {
        "sessionId": session.id,
        "modes": {"currentModeId": session.mode, "availableModes": MODES},
        "configOptions": session.options(),
    }


def mode_said(session: Session) -> None:
    """The agent's own change of mode, as the environment says it is said."""
    if os.environ.get("MODES_SAY") == "text":
        say(session, f"[MODE_UPDATE] {session.mode}")
    elif os.environ.get("MODES_OFFER") == "option":
        update(
            session, {"sessionUpdate": "config_option_update", "configOptions": session.options()}
        )
    else:
        update(session, {"sessionUpdate": "current_mode_update", "currentModeId": session.mode})


def prompt(request: dict[str, Any], session: Session, text: str) -> dict[str, Any] | None:
    words = text.split()
    if words[:1] == ["switch"] and len(words) > 1:
        session.mode = words[1]
        mode_said(session)
        say(session, f"switched to {session.mode}")
    elif words[:1] == ["model"] and len(words) > 1:
        session.model = words[1]
        options = session.options()
        update(session, {"sessionUpdate": "config_option_update", "configOptions": options})
        say(session, f"model now {session.model}")
    elif words[:1] == ["wait"]:
        say(session, "waiting for a mode\n")
        session.waiting = request["id"]
        return None
    else:
        say(session, f"mode is {session.mode}")
    return {"stopReason": "end_turn"}


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    """The result of a request; None: answered later (a waiting prompt)."""
    method, params = request.get("method"), request.get("params") or {}
    session = sessions.get(params.get("sessionId", ""))
    if method == "initialize":
        info = {"name": "modes-agent", "version": "1.0"}
        caps = {"loadSession": True}
        return {"protocolVersion": 1, "agentCapabilities": caps, "agentInfo": info}
    if method == "session/new":
        return new_session()
    if method == "session/load":
        answer = new_session(params.get("sessionId"))
        answer.pop("sessionId")
        return answer
    if session is None:
        raise LookupError("unknown session")
    if method == "session/set_mode":
        if os.environ.get("MODES_SET_MODE") == "mute":
            return None
        if params.get("modeId") not in [m["id"] for m in MODES]:
            raise LookupError(f"no mode {params.get('modeId')}")
        session.mode = params["modeId"]
        if os.environ.get("MODES_SAY") == "text":
            say(session, f"[MODE_UPDATE] {session.mode}")
        if session.waiting is not None:
            say(session, f"mode now {session.mode}")
            send({"id": session.waiting, "result": {"stopReason": "end_turn"}})
            session.waiting = None
        return {}
    if method == "session/set_config_option":
        if params.get("configId") == "web":
            session.web = bool(params.get("value"))
        elif params.get("configId") == "mode":
            session.mode = params.get("value")
        else:
            session.model = params.get("value")
        return {"configOptions": session.options()}
    if method == "session/prompt":
        blocks = params.get("prompt", [])
        text = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        return prompt(request, session, text)
    raise NotImplementedError(method)


def main() -> None:
    for request in messages():
        if "method" in request:
            log(request)
        if request.get("method") == "session/cancel":
            session = sessions.get((request.get("params") or {}).get("sessionId", ""))
            if session is not None and session.waiting is not None:
                send({"id": session.waiting, "result": {"stopReason": "cancelled"}})
                session.waiting = None
            continue
        if "id" not in request or "method" not in request:
            continue  # an answer
        try:
            result = answer(request)
        except NotImplementedError:
            send({"id": request["id"], "error": {"code": -32601, "message": "Method not found"}})
            continue
        except LookupError as exc:
            send({"id": request["id"], "error": {"code": -32602, "message": str(exc)}})
            continue
        if result is not None:
            send({"id": request["id"], "result": result})


if __name__ == "__main__":
    main()
