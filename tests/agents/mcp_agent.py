"""A minimal ACP agent that is an MCP client of the servers it is given, as claude-agent-acp,
codex-acp and qwen-code are: on ``session/new`` (``load``, ``resume``) it spawns each stdio
entry of ``mcpServers`` with the entry's env, runs MCP's ``initialize`` and ``tools/list``
before it answers. It runs no model: each prompt is one word or JSON.

- ``{"tool": "read_buffer", "arguments": {...}}`` calls the tool on the editor's server
  (``"server"`` names another) and answers ``MCP {"result": ...}`` or ``MCP {"error": ...}``;
- ``tools`` answers ``TOOLS <the names tools/list gave, per server>``;
- ``servers`` answers ``SERVERS <the mcpServers it received>``; ``caps`` the client's
  capabilities; ``pids`` the pids of the servers it spawned;
- ``restart`` spawns the session's servers again with the same entries (a token reused);
- lines ``/tool NAME [JSON]`` (and ``/say TEXT``), as the fake mm's scripts: each calls NAME on
  the editor's server and says ``client_NAME -> <text>``, a failed call's text as mm shows it
  (``[client tool error: <text>]``), so the tests read both paths alike.

With ``MCP_AGENT_HTTP=1`` it advertises ``mcpCapabilities.http``; with
``MCP_AGENT_SLOW_NEW=<seconds>`` it waits that long after starting a session's servers before
it answers ``session/new`` (a stop mid-start-up). A server that exits before
it answers is reported as ``MCP {"exited": status, "stderr": ...}``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from jsonl import requests, send

PROTOCOL = "2025-06-18"


def say(session_id: str, text: str) -> None:
    body = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    send({"method": "session/update", "params": {"sessionId": session_id, "update": body}})


class Server:
    """One spawned stdio MCP server and the lines exchanged with it."""

    def __init__(self, entry: dict) -> None:
        env = dict(os.environ, **{pair["name"]: pair["value"] for pair in entry.get("env", [])})
        self.name = entry["name"]
        self.proc = subprocess.Popen(
            [entry["command"], *entry.get("args", [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        self._ids = iter(range(1, 10**9))
        self.tools: list[str] = []

    def ask(self, method: str, params: dict) -> dict:
        rid = next(self._ids)
        try:
            self.proc.stdin.write(
                json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n"
            )
            self.proc.stdin.flush()
        except OSError:
            pass
        for line in self.proc.stdout:
            message = json.loads(line)
            if message.get("id") == rid:
                return {k: message[k] for k in ("result", "error") if k in message}
        status = self.proc.wait()
        return {"exited": status, "stderr": self.proc.stderr.read().strip()}

    def start(self) -> None:
        answer = self.ask(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "mcp_agent", "version": "0"},
            },
        )
        if "result" not in answer:
            self.failed = answer
            return
        self.proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
        )
        self.proc.stdin.flush()
        listed = self.ask("tools/list", {})
        self.tools = [t["name"] for t in listed.get("result", {}).get("tools", [])]
        self.failed = None if "result" in listed else listed


def script(sid: str, text: str, server: Server | None) -> None:
    for line in text.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word == "/say":
            say(sid, rest + "\n")
            continue
        name, _, arguments = rest.partition(" ")
        call = {"name": name, "arguments": json.loads(arguments) if arguments.strip() else {}}
        answer = server.ask("tools/call", call) if server else {"error": "no editor server"}
        result = answer.get("result") or {}
        shown = "".join(b.get("text", "") for b in result.get("content", [])) or json.dumps(answer)
        if result.get("isError") or "result" not in answer:
            shown = f"[client tool error: {shown}]"
        say(sid, f"client_{name} -> {shown}\n")


def main() -> None:
    caps: dict = {}
    given: dict[str, list[dict]] = {}
    running: dict[str, dict[str, Server]] = {}

    def spawn(session_id: str) -> None:
        servers = {}
        for entry in given[session_id]:
            if "command" in entry:
                server = Server(entry)
                server.start()
                servers[entry["name"]] = server
        running[session_id] = servers

    for request in requests():
        method, params, rid = request["method"], request.get("params") or {}, request["id"]
        if method == "initialize":
            caps = params.get("clientCapabilities") or {}
            mcp = {"http": True} if os.environ.get("MCP_AGENT_HTTP") == "1" else {}
            agent_caps = {
                "loadSession": True,
                "mcpCapabilities": mcp,
                "sessionCapabilities": {"resume": {}},
            }
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": agent_caps}})
        elif method in ("session/new", "session/load", "session/resume"):
            sid = params.get("sessionId") or f"mcp-{len(given) + 1}"
            for server in running.pop(sid, {}).values():
                server.proc.stdin.close()
            given[sid] = params.get("mcpServers") or []
            spawn(sid)
            time.sleep(float(os.environ.get("MCP_AGENT_SLOW_NEW") or 0))
            send({"id": rid, "result": {"sessionId": sid} if method == "session/new" else {}})
        elif method == "session/prompt":
            sid = params["sessionId"]
            texts = [b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text"]
            text = texts[0].strip() if texts else ""
            servers = running.get(sid, {})
            if text.startswith(("/tool", "/say")):
                script(sid, text, servers.get("minime"))
            elif text == "caps":
                say(sid, "CAPS " + json.dumps(caps, sort_keys=True))
            elif text == "servers":
                say(sid, "SERVERS " + json.dumps(given.get(sid), sort_keys=True))
            elif text == "tools":
                listed = {n: s.tools if s.failed is None else s.failed for n, s in servers.items()}
                say(sid, "TOOLS " + json.dumps(listed, sort_keys=True))
            elif text == "pids":
                say(sid, "PIDS " + json.dumps([s.proc.pid for s in servers.values()]))
            elif text == "restart":
                spawn(sid)
                say(sid, "RESTARTED " + json.dumps({n: s.failed for n, s in running[sid].items()}))
            else:
                ask = json.loads(text)
                server = servers.get(ask.get("server", "minime"))
                if server is None:
                    say(sid, "MCP " + json.dumps({"error": "no such server"}))
                else:
                    call = {"name": ask["tool"], "arguments": ask.get("arguments", {})}
                    say(sid, "MCP " + json.dumps(server.ask("tools/call", call)))
            send({"id": rid, "result": {"stopReason": "end_turn"}})
        else:
            send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
    sys.exit(0)
