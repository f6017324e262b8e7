#!/usr/bin/env python3
"""An adversarial ACP agent: it writes whatever JSON lines its script says, raw, on stdout.

Not mm: a stand-in for an agent that sends anything JSON-RPC allows (and some it does not),
to prove the client survives it and gives nothing away. No SDK: it speaks JSON lines itself.

Usage::

    python tests/adversary.py script.json

The script (JSON object):

``session_id``   the id ``session/new`` answers (default ``adv-1``).
``on_open``      steps run before ``session/new``, ``session/load`` or ``session/resume`` is
                 answered (``@SID@`` is the id being opened, ``@CWD@`` the cwd the client sent).
``trace``        a file: every line the client wrote, as JSON lines ``{"in": message}``.
``replies``      ``{METHOD: {"result": …} or {"error": …}}``: the answer to METHOD instead of
                 the usual one (for ``session/prompt``, after its steps).
``delays``       ``{METHOD: SECONDS}``: the answer to METHOD is sent that much later (an agent
                 slow to start: ``initialize``, ``session/new``).
``exit_on``      ``{METHOD: {"status": N, "stderr": LINE, "hold": BOOL}}``: on METHOD, LINE on
                 stderr and exit N unanswered; with ``hold``, a ``sleep`` child keeps its stdin
                 and stdout open (no end of the pipe tells the client).

A ``session/prompt``'s text is a JSON list of steps (``@SID@`` is the prompt's session):

``{"raw": LINE}``           LINE written as is (a string; newline added).
``{"ask": REQUEST}``        REQUEST sent to the client (``id`` added if absent); its answer is
                            then said as an agent_message_chunk: the answer's JSON, compact.
``{"say": TEXT}``           one agent_message_chunk.
``{"close_stdout": true}``  stdout closed; the process lives on until killed.
``{"stderr": LINE}``        LINE on stderr.
``{"fail": ERROR}``         the prompt is answered with this JSON-RPC ``error`` object.

The prompt is answered ``end_turn`` after its last step.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
from typing import Any


class Fail(Exception):
    """A step that ends the prompt with a JSON-RPC error."""


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class Adversary:
    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.ids = itertools.count(1000)
        self.waiting: dict[Any, asyncio.Future[Any]] = {}
        self.trace = open(script["trace"], "a", buffering=1) if script.get("trace") else None  # noqa: SIM115
        self.out = sys.stdout.buffer

    def write(self, line: str) -> None:
        self.out.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.out.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write(compact({"jsonrpc": "2.0", **message}))

    def say(self, session_id: str, text: str) -> None:
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        params = {"sessionId": session_id, "update": update}
        self.send({"method": "session/update", "params": params})

    async def run_steps(self, steps: list[dict[str, Any]], sid: str, cwd: str = "") -> None:
        for step in steps:
            if "raw" in step:
                self.write(step["raw"].replace("@SID@", sid).replace("@CWD@", cwd))
            elif "ask" in step:
                text = compact(step["ask"]).replace("@SID@", sid).replace("@CWD@", cwd)
                request = json.loads(text)
                request.setdefault("id", next(self.ids))
                future = asyncio.get_running_loop().create_future()
                self.waiting[request["id"]] = future
                self.send(request)
                self.say(sid, compact(await future))
            elif "say" in step:
                self.say(sid, step["say"])
            elif "stderr" in step:
                sys.stderr.write(step["stderr"] + "\n")
                sys.stderr.flush()
            elif "fail" in step:
                raise Fail(step["fail"])
            elif step.get("close_stdout"):
                self.out.close()
                os.close(1)
                await asyncio.Event().wait()

    async def handle(self, message: dict[str, Any]) -> None:
        method, params, rid = message.get("method"), message.get("params") or {}, message.get("id")
        death = self.script.get("exit_on", {}).get(method)
        if death is not None:
            sys.stderr.write(death.get("stderr", "") + "\n")
            sys.stderr.flush()
            if death.get("hold"):
                subprocess.Popen(["sleep", "1000"], stderr=subprocess.DEVNULL)
            os._exit(death.get("status", 1))
        result: Any = {}
        if method == "initialize":
            result = {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}
        elif method in ("session/new", "session/load", "session/resume"):
            sid = params.get("sessionId") or self.script.get("session_id", "adv-1")
            await self.run_steps(self.script.get("on_open", []), sid, params.get("cwd", ""))
            result = {"sessionId": sid} if method == "session/new" else {}
        elif method == "session/prompt":
            text = "".join(block.get("text", "") for block in params.get("prompt", []))
            try:
                await self.run_steps(json.loads(text), params["sessionId"])
            except Fail as fail:
                self.send({"id": rid, "error": fail.args[0]})
                return
            result = {"stopReason": "end_turn"}
        elif rid is None:
            return
        if rid is not None:
            await asyncio.sleep(self.script.get("delays", {}).get(method, 0))
            reply = self.script.get("replies", {}).get(method, {"result": result})
            self.send({"id": rid, **reply})

    async def main(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 26)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        tasks = set()
        while line := await reader.readline():
            message = json.loads(line)
            if self.trace is not None:
                self.trace.write(compact({"in": message}) + "\n")
            if "method" not in message:
                future = self.waiting.pop(message.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(message)
                continue
            task = asyncio.ensure_future(self.handle(message))
            tasks.add(task)
            task.add_done_callback(tasks.discard)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        asyncio.run(Adversary(json.load(f)).main())
