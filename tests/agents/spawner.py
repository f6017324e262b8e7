"""A minimal ACP agent (JSON lines on stdio) whose every prompt starts a tool command that
escapes its process group, as claude's and codex's shell tools do, for tests/test_process_tree.py.

Each prompt starts, in the prompt's text:

- ``setsid``: a child in a session (and process group) of its own, by setsid();
- ``orphan``: a child that starts such a grandchild and exits at once, so the grandchild is
  re-parented (to init, or to the nearest subreaper) before anyone stops anything;
- ``scrubbed``: like ``orphan``, but the grandchild runs with an empty environment;
- ``stubborn``: like ``setsid``, but the command ignores SIGTERM;
- ``disguised``: like ``setsid``, run through a link named ``x) Z 1 1 1 (``: its name in
  /proc/<pid>/stat fakes the fields that follow it (a zombie state, parent 1).

Each such command writes ``$SPAWNER_MARKER.<pid>`` after $SPAWNER_DELAY seconds (default 60):
if that file exists the command outlived whoever should have ended it. The turn's text is one
line ``spawned <pid>`` per command. On the end of stdin the agent exits (as real agents do),
leaving its commands behind unless someone ends them.
"""

from __future__ import annotations

import os
import subprocess
import sys

from jsonl import requests, send

# The command (started in a session of its own, by setsid() before exec, so it is there when
# its pid is told): the marker after the delay. argv: marker path, delay[, "stubborn"].
COMMAND = (
    "import os, signal, sys, time\n"
    "if sys.argv[3:] == ['stubborn']: signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "time.sleep(float(sys.argv[2]))\n"
    "open(sys.argv[1] + '.' + str(os.getpid()), 'w').close()\n"
)
# The middle process: start COMMAND detached, print its pid, exit. argv: env ('keep'|'empty'),
# marker, delay.
MIDDLE = (
    "import subprocess, sys\n"
    "env = None if sys.argv[1] == 'keep' else {}\n"
    "p = subprocess.Popen([sys.executable, '-c', sys.argv[2], sys.argv[3], sys.argv[4]],"
    " env=env, start_new_session=True, stdin=subprocess.DEVNULL,"
    " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "print(p.pid, flush=True)\n"
)


def spawn(kind: str) -> int:
    marker = os.environ.get("SPAWNER_MARKER", "/nonexistent/marker")
    delay = os.environ.get("SPAWNER_DELAY", "60")
    quiet = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
    }
    if kind == "disguised":
        link = os.path.join(os.path.dirname(marker), "x) Z 1 1 1 (")
        if not os.path.exists(link):
            os.symlink(sys.executable, link)
        argv = [link, "-c", COMMAND, marker, delay]
        return subprocess.Popen(argv, start_new_session=True, **quiet).pid
    if kind in ("setsid", "stubborn"):
        argv = [sys.executable, "-c", COMMAND, marker, delay, kind]
        return subprocess.Popen(argv, start_new_session=True, **quiet).pid
    env = "keep" if kind == "orphan" else "empty"
    out = subprocess.run(
        [sys.executable, "-c", MIDDLE, env, COMMAND, marker, delay],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return int(out)


def answer(request: dict) -> dict | None:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
    if method == "session/new":
        return {"sessionId": "spawner-1"}
    if method == "session/prompt":
        text = " ".join(
            b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text"
        )
        kinds = [
            k
            for k in ("setsid", "orphan", "scrubbed", "stubborn", "disguised")
            if k in text.split()
        ]
        lines = "".join(f"spawned {spawn(kind)}\n" for kind in kinds)
        update = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": lines},
        }
        send(
            {
                "method": "session/update",
                "params": {"sessionId": params["sessionId"], "update": update},
            }
        )
        return {"stopReason": "end_turn"}
    return None


def main() -> None:
    for request in requests():
        result = answer(request)
        if result is None:
            send({"id": request["id"], "error": {"code": -32601, "message": "Method not found"}})
        else:
            send({"id": request["id"], "result": result})


if __name__ == "__main__":
    main()
