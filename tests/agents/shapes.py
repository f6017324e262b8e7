"""A minimal ACP agent (JSON lines on stdio) that sends what real agents send and the plugin
once mishandled, for tests/test_agent_shapes.py. It sends no ``agentInfo`` (as the SDK's
example agent) and runs no model: each prompt's words pick what it sends.

- ``messages``: two messages in one turn, told apart only by ``messageId`` (codex-acp 2.6,
  claude-agent-acp), and a thought that starts with blank lines (codex);
- ``qwen``: a read whose text is in ``content`` and whose ``rawOutput`` is "" (qwen-code), after
  a vendor notification without a leading ``_`` (``qwen/notify/…``) and one with (``_qwen/hello``);
- ``codex``: a command whose ``rawOutput`` is a JSON object (``formatted_output``, ``stdout``);
- ``edit``: an edit with diff content under the session's cwd and a 252 KB JSON rawOutput;
- ``terminal``: terminal content without the client's terminal capability, one call with its
  output in ``_meta`` (codex-acp), one without, one whose output came in earlier updates'
  ``_meta.terminal_output_delta`` chunks (codex-acp 2.6);
- ``ready``: a ``tool_call`` that arrives already ``completed``, its text in ``content`` and
  ``rawOutput`` "" (qwen-code);
- ``usage N COST``: a ``usage_update`` (N tokens used of 200,000, COST dollars) and a
  ``session_info_update`` titling the session ``Parser fix N``;
- ``nokind``: a ``tool_call_update`` that omits the call's kind and title;
- ``fields``: a ``tool_call`` naming no kind (ACP's default: "other"), a ``tool_call_update``
  titling a call ``""`` (said: the title is now empty), and a call whose first word is a
  ``tool_call_update`` naming neither title nor kind;
- ``locations``: a read whose ``locations`` come with its ``tool_call`` (claude-agent-acp: the
  path and a 1-based line), move in a ``tool_call_update``, stay when an update names none, and
  a call naming 60 locations, one of them a 5,000-character path;
- ``unended``: tool calls still pending / in progress when the turn ends;
- ``gemini``: text, a command, more text, none of it with a ``messageId`` (gemini-cli);
- ``mcpresult``: two MCP tool calls whose only output is ``rawOutput`` holding the MCP
  ``CallToolResult`` as codex-acp wraps it (``{"result": {"content": …}, "error": null}``), and
  one that failed with ``error`` alone;
- ``late``: after the turn's answer, a ``tool_call_update`` and a chunk for the ended turn;
- ``stale``: in this turn, a ``tool_call_update`` for ``late``'s call (``l1``), then ``fresh``;
- anything else: ``pong``.

``session/load`` replays two user messages and two agent messages (``messageId`` each), a
command whose output comes in ``_meta.terminal_output_delta`` chunks of updates without a
status (codex-acp 2.6's replay), another that arrives already ``completed`` and whose output
and exit come after it in one update without a status (codex-acp 2.6's replay of a finished
command), an MCP tool's ``CallToolResult`` (codex-acp), answers,
then sends a late chunk ``LATE-AFTER-LOAD``. After late updates it sends ``_shapes/flushed``.
Environment: ``SHAPES_FAIL_NEW`` (text): session/new fails with it (the health check's case);
``SHAPES_NO_SESSIONS=1``: no session/list nor load; ``SHAPES_SESSIONS=load``: load advertised,
no list (gemini-cli), and a session/list answered "Method not found";
``SHAPES_SESSIONS=broken``: list advertised, and answered with a JSON-RPC error;
``SHAPES_AUTH`` (a path): ``authMethods`` ``token`` (``authenticate`` logs in) and ``cli`` (a
terminal method: this script run with ``--login`` logs in), and session/new fails with ACP's
auth-required error until that path exists (the login writes it); ``SHAPES_MANAGE`` (a path):
``sessionCapabilities.close`` and ``delete`` advertised, each such request written to that file
as a line ``<method> <id>`` (a deleted session leaves the list); ``SHAPES_DIRS=1``:
``additionalDirectories`` advertised, and the prompt ``dirs`` answers ``DIRS <the session/new
additionalDirectories as JSON>``.
"""

from __future__ import annotations

import json
import os
import sys

from jsonl import requests, send

LATE = "LATE-AFTER-TURN"
LATE_LOAD = "LATE-AFTER-LOAD"
SCENARIOS = {
    "messages",
    "qwen",
    "codex",
    "edit",
    "terminal",
    "ready",
    "usage",
    "nokind",
    "fields",
    "locations",
    "unended",
    "stale",
    "gemini",
    "mcpresult",
}
# An MCP tool's result as codex-acp 2.6 sends it: only rawOutput, the CallToolResult wrapped.
MCP_RESULT = {
    "result": {
        "content": [{"type": "text", "text": '{"text":"unsaved words"}'}],
        "structuredContent": None,
        "_meta": None,
    },
    "error": None,
}
BIG = 126_000  # characters of each of old and new in the edit's rawOutput (252 KB)


def update(session_id: str, body: dict) -> None:
    send({"method": "session/update", "params": {"sessionId": session_id, "update": body}})


def chunk(session_id: str, kind: str, text: str, message_id: str | None) -> None:
    body = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        body["messageId"] = message_id
    update(session_id, body)


def call(session_id: str, call_id: str, **fields: object) -> None:
    update(session_id, {"sessionUpdate": "tool_call", "toolCallId": call_id, **fields})


def call_update(session_id: str, call_id: str, **fields: object) -> None:
    update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields})


def prompt(sid: str, words: list[str], cwd: str) -> None:
    if "messages" in words:
        chunk(sid, "agent_thought_chunk", "\n\n", "t1")
        chunk(sid, "agent_thought_chunk", "**Planning**\n\nwrite the file", "t1")
        chunk(sid, "agent_message_chunk", "I wrote ", "m1")
        chunk(sid, "agent_message_chunk", "hello.txt.", "m1")
        chunk(sid, "agent_message_chunk", "\nAll done", "m2")
        chunk(sid, "agent_message_chunk", ", bye.", "m2")
    if "qwen" in words:
        send({"method": "qwen/notify/usage", "params": {"sessionId": sid, "tokens": 3}})
        send({"method": "_qwen/hello", "params": {"sessionId": sid}})
        call(sid, "q1", title="ReadFile a.txt", kind="read", status="pending")
        text = {"type": "content", "content": {"type": "text", "text": "line one\nline two\n"}}
        call_update(sid, "q1", status="completed", rawOutput="", content=[text])
    if "codex" in words:
        call(sid, "c1", title="Run ls", kind="execute", status="in_progress")
        raw = {"stdout": "a.txt\n", "stderr": "", "exit_code": 0, "formatted_output": "a.txt\n"}
        call_update(sid, "c1", status="completed", rawOutput=raw)
    if "edit" in words:
        diff = {
            "type": "diff",
            "path": os.path.join(cwd, "src", "app.py"),
            "oldText": "a = 1\nb = 2\n",
            "newText": "a = 1\nb = 20\n",
        }
        call(sid, "e1", title="Edit src/app.py", kind="edit", status="pending", content=[diff])
        raw = {"old": "o" * BIG, "new": "n" * BIG}
        call_update(sid, "e1", status="completed", rawOutput=raw)
    if "terminal" in words:
        for call_id, meta in (
            ("x1", {"terminal_output": {"terminal_id": "term-1", "data": "built ok\n"}}),
            ("x2", None),
        ):
            content = [{"type": "terminal", "terminalId": f"term-{call_id}"}]
            call(sid, call_id, title=f"Run {call_id}", kind="execute", content=content)
            done = {"status": "completed", "content": content}
            if meta is not None:
                done["_meta"] = meta
            call_update(sid, call_id, **done)
        # codex-acp 2.6: the output in terminal_output_delta chunks of in-progress updates,
        # the final update with the exit code alone; the terminal content on the first only.
        content = [{"type": "terminal", "terminalId": "x3"}]
        call(sid, "x3", title="Run x3", kind="execute", status="in_progress", content=content)
        for data in ("one\n", "two\n"):
            delta = {"terminal_output_delta": {"data": data, "terminal_id": "x3"}}
            call_update(sid, "x3", _meta=delta)
        ended = {"terminal_exit": {"exit_code": 2, "signal": None, "terminal_id": "x3"}}
        call_update(sid, "x3", status="failed", name="exec_command", _meta=ended)
    if "ready" in words:
        text = {"type": "content", "content": {"type": "text", "text": "found it\nat line 3\n"}}
        call(
            sid,
            "r1",
            title="Grep needle",
            kind="search",
            status="completed",
            rawOutput="",
            content=[text],
        )
    if "usage" in words:
        used, cost = int(words[1]), float(words[2])
        cost_of = {"amount": cost, "currency": "USD"}
        update(
            sid, {"sessionUpdate": "usage_update", "used": used, "size": 200_000, "cost": cost_of}
        )
        update(sid, {"sessionUpdate": "session_info_update", "title": f"Parser fix {used}"})
        chunk(sid, "agent_message_chunk", "counted", None)
    if "nokind" in words:
        call(sid, "k1", title="Find needle", kind="search", status="pending")
        call_update(sid, "k1", status="in_progress")
        call_update(sid, "k1", status="completed", rawOutput={"output": "found"})
    if "fields" in words:
        call(sid, "f1", title="Plan the change", status="pending")
        call_update(sid, "f1", status="in_progress")
        call(sid, "f2", title="Run tests", kind="execute", status="pending")
        call_update(sid, "f2", title="")
        call_update(sid, "f3", status="in_progress")
        for call_id in ("f1", "f2", "f3"):
            call_update(sid, call_id, status="completed", rawOutput={"output": "ok"})
    if "locations" in words:
        a, b = os.path.join(cwd, "a.py"), os.path.join(cwd, "b.py")
        call(sid, "r1", title="Read a.py", kind="read", status="pending", locations=[{"path": a}])
        call_update(sid, "r1", status="in_progress", locations=[{"path": b, "line": 7}])
        call_update(sid, "r1", status="completed", rawOutput={"output": "read"})
        many = [{"path": f"{cwd}/f{i}.py", "line": i} for i in range(60)]
        many.insert(1, {"path": "/" + "x" * 5000})
        call(sid, "r2", title="Grep", kind="search", status="in_progress", locations=many)
        call_update(sid, "r2", status="completed", rawOutput={"output": "found"})
    if "unended" in words:
        call(sid, "u1", title="Waits for ever", kind="fetch", status="pending")
        call(sid, "u2", title="Runs for ever", kind="execute", status="in_progress")
        chunk(sid, "agent_message_chunk", "giving up", None)
    if "gemini" in words:
        chunk(sid, "agent_message_chunk", "Running it.", None)
        call(sid, "g1", title="touch made.txt", kind="execute", status="pending")
        call_update(sid, "g1", status="completed", content=[])
        chunk(sid, "agent_message_chunk", "All done.", None)
    if "mcpresult" in words:
        mcp = {"is_mcp_tool_call": True}
        for call_id, status, raw in (
            ("m1", "completed", MCP_RESULT),
            ("m2", "failed", {"result": None, "error": "tool call failed: the server is gone"}),
        ):
            call(sid, call_id, title="mcp.minime.read_buffer", kind="execute", status="pending")
            call_update(sid, call_id, status=status, rawOutput=raw, _meta=mcp)
    if "stale" in words:  # the earlier turn's call l1 ends now, in this turn
        call_update(sid, "l1", status="completed", rawOutput={"output": LATE})
        chunk(sid, "agent_message_chunk", "fresh", None)
    if not set(words) & SCENARIOS or words == ["late"]:
        chunk(sid, "agent_message_chunk", "pong", None)
    if "late" in words:
        call(sid, "l1", title="Slow", kind="execute", status="in_progress")


def flushed() -> None:
    """Tells a test the late updates before it were sent (the client logs it when read): a
    prompt sent earlier would receive them as its own, as it would from any agent."""
    send({"method": "_shapes/flushed", "params": {}})


def after_prompt(sid: str, words: list[str]) -> None:
    """Sent after the turn's answer: updates for a turn that ended."""
    if "late" in words:
        call_update(sid, "l1", status="completed", rawOutput={"output": LATE})
        chunk(sid, "agent_message_chunk", LATE, None)
        flushed()


def load(sid: str) -> None:
    chunk(sid, "user_message_chunk", "first question", "u1")
    chunk(sid, "agent_message_chunk", "first answer.", "a1")
    chunk(sid, "user_message_chunk", "second question", "u2")
    chunk(sid, "agent_message_chunk", "second answer.", "a2")
    call(sid, "h1", title="Old search", kind="search", status="completed")
    content = [{"type": "terminal", "terminalId": "h2"}]
    call(sid, "h2", title="Run make", kind="execute", status="in_progress", content=content)
    for data in ("compiled\n", "linked\n"):
        call_update(sid, "h2", _meta={"terminal_output_delta": {"data": data, "terminal_id": "h2"}})
    ended = {"terminal_exit": {"exit_code": 0, "signal": None, "terminal_id": "h2"}}
    call_update(sid, "h2", status="completed", _meta=ended)
    # codex-acp 2.6 replaying a finished command: the call comes completed, its output after.
    content = [{"type": "terminal", "terminalId": "h3"}]
    call(sid, "h3", title="Run tests", kind="execute", status="completed", content=content)
    output = {
        "terminal_output_delta": {"data": "3 passed\n", "terminal_id": "h3"},
        "terminal_exit": {"exit_code": 0, "signal": None, "terminal_id": "h3"},
    }
    call_update(sid, "h3", _meta=output)
    title = "mcp.minime.read_buffer"
    call(sid, "h4", title=title, kind="execute", status="completed", rawOutput=MCP_RESULT)


AUTH_METHODS = [
    {"id": "token", "name": "API token", "description": "the token in the environment"},
    {"id": "cli", "name": "Browser login", "type": "terminal", "args": ["--login"]},
]


def main() -> None:
    auth = os.environ.get("SHAPES_AUTH")
    if "--login" in sys.argv:  # the terminal login: says so, logs in, exits
        print("Logged in to shapes.", flush=True)
        if auth:
            open(auth, "w").close()
        return
    sessions = os.environ.get("SHAPES_NO_SESSIONS") != "1"
    kept = os.environ.get("SHAPES_SESSIONS")
    manage = os.environ.get("SHAPES_MANAGE")
    deleted: set[str] = set()
    roots: dict[str, object] = {}
    cwds: dict[str, str] = {}
    for request in requests():
        method, params = request["method"], request.get("params") or {}
        rid = request["id"]
        if method == "initialize":
            caps = {"loadSession": True, "sessionCapabilities": {"list": {}}} if sessions else {}
            if kept == "load":
                caps["sessionCapabilities"] = {}
            if manage:
                caps["sessionCapabilities"].update({"close": {}, "delete": {}})
            if os.environ.get("SHAPES_DIRS") == "1":
                caps.setdefault("sessionCapabilities", {})["additionalDirectories"] = {}
            result = {"protocolVersion": 1, "agentCapabilities": caps}
            if auth:
                result["authMethods"] = AUTH_METHODS
            send({"id": rid, "result": result})
        elif method == "authenticate" and auth:
            if params.get("methodId") == "token":
                open(auth, "w").close()
                send({"id": rid, "result": {}})
            else:
                send({"id": rid, "error": {"code": -32602, "message": "use the terminal"}})
        elif method == "session/new":
            if auth and not os.path.exists(auth):
                send({"id": rid, "error": {"code": -32000, "message": "Authentication required"}})
                continue
            failure = os.environ.get("SHAPES_FAIL_NEW")
            if failure:
                error = {"code": -32000, "message": failure}
                send({"id": rid, "error": error})
                continue
            sid = f"shapes-{len(cwds) + 1}"
            cwds[sid] = params.get("cwd", "")
            roots[sid] = params.get("additionalDirectories")
            send({"id": rid, "result": {"sessionId": sid}})
        elif method == "session/list" and kept == "broken":
            send({"id": rid, "error": {"code": -32603, "message": "the session store is locked"}})
        elif method == "session/list" and sessions and kept != "load":
            item = {"sessionId": "old-1", "cwd": params.get("cwd"), "title": "Old one"}
            opened = [{"sessionId": sid, "cwd": cwd} for sid, cwd in cwds.items()]
            listed = [x for x in [item, *opened] if x["sessionId"] not in deleted]
            send({"id": rid, "result": {"sessions": listed}})
        elif method in ("session/close", "session/delete") and manage:
            with open(manage, "a") as log:
                log.write(f"{method} {params.get('sessionId')}\n")
            if method == "session/delete":
                deleted.add(params.get("sessionId"))
                cwds.pop(params.get("sessionId"), None)
            send({"id": rid, "result": {}})
        elif method == "session/load" and sessions:
            sid = params["sessionId"]
            cwds[sid] = params.get("cwd", "")
            load(sid)
            send({"id": rid, "result": {}})
            chunk(sid, "agent_message_chunk", LATE_LOAD, "a2")
            call_update(sid, "h1", status="completed", rawOutput={"output": LATE_LOAD})
            flushed()
        elif method == "session/prompt":
            sid = params["sessionId"]
            text = " ".join(
                b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text"
            )
            words = text.split()
            if words == ["dirs"]:
                chunk(sid, "agent_message_chunk", "DIRS " + json.dumps(roots.get(sid)) + "\n", None)
            prompt(sid, words, cwds.get(sid, ""))
            send({"id": rid, "result": {"stopReason": "end_turn"}})
            after_prompt(sid, words)
        else:
            send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
