#!/usr/bin/env python3
"""mm with a clock on its own pipe: the scripted mm (demo/scripted_mm), timing tool calls.

    python bench/mm_clock.py -acp -config agent.yaml

The agent a user's mm is, as far as the editor can tell (demo/scripted_mm: mm's Go wire, mm's
updates around each client-tool call, each result cut to the agent file's ``maxOutput`` and
reported whole in the call's completed ``tool_call_update``), with two bench commands:

``/calls N WARMUP OUT NAME [JSON]``  WARMUP then N model steps, each one call of client tool
                                     NAME as mm makes it (``tool_call`` pending, ``in_progress``,
                                     the request, the completed update carrying the result).
``/bare N WARMUP OUT NAME [JSON]``   the same requests with no update around them.

Each call is timed on this process's side of the pipe, as mm would see it: from the moment the
request's last byte was handed to the pipe (writes wait until the pipe took every byte, as
Go's blocking writes do: the request queues behind an update the editor has not read yet)
to the moment the answer's line was read off it, before decoding. ``time.monotonic_ns()``
(CLOCK_MONOTONIC, the clock of ``vim.uv.hrtime()``). OUT gets ``{"ns": [...], "starts": [...],
"read_chars": <what the model read of the last answer>}``. The loop detector is not run: a
model that calls one tool 60 times in a row is what the bench wants, not what mm allows.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

DEMO = str(Path(__file__).resolve().parent.parent / "demo")
if DEMO not in sys.path:
    sys.path.insert(0, DEMO)

from scripted_mm import cli, wire  # noqa: E402
from scripted_mm.agent import ScriptedMM, Turn  # noqa: E402
from scripted_mm.client_tools import SESSION_META  # noqa: E402
from scripted_mm.script import COMMANDS, Command, split_args  # noqa: E402


class ClockedConnection(wire.Connection):
    """mm's wire, stamping each request when the pipe has taken it and each answer as read."""

    sent: dict[str, int]
    answered: dict[str, int]
    _read_at = 0

    def stamps(self) -> None:
        self.sent, self.answered = {}, {}
        transport = self.writer.transport
        transport.set_write_buffer_limits(high=0)  # drain() returns once the pipe took it all

    async def _write(self, message: dict[str, Any]) -> None:
        await super()._write(message)
        if "method" in message and "id" in message:
            self.sent[wire.id_key(message["id"])] = time.monotonic_ns()

    def _line(self, raw: bytes) -> None:
        self._read_at = time.monotonic_ns()
        super()._line(raw)

    def _response(self, message: dict[str, Any]) -> None:
        self.answered[wire.id_key(message["id"])] = self._read_at
        super()._response(message)


def write_json(path: str, value: Any) -> None:
    """Whole or not at all: a reader polling for the file never sees half of it."""
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(value, f)
    os.replace(path + ".tmp", path)


async def timed(mm: ScriptedMM, turn: Turn, rest: str, updates: bool) -> None:
    n, warmup, out, rest = rest.split(" ", 3)
    name, args = split_args(rest)
    tool = turn.session.find_tool(name)
    if tool is None:
        await mm.say(turn, f"{name} -> [unknown tool]")
        return
    conn = mm.wire
    assert isinstance(conn, ClockedConnection)
    params = {**args, "_meta": {SESSION_META: turn.session.id}}
    times, starts, read = [], [], ""
    for i in range(int(warmup) + int(n)):
        before = set(conn.sent)
        if updates:
            read = await mm.call_tool(turn, tool, args)
        else:
            read, _failed = await mm.invoke(tool.method, params)
        (key,) = set(conn.sent) - before
        if i >= int(warmup):
            starts.append(conn.sent[key])
            times.append(conn.answered[key] - conn.sent[key])
    write_json(out, {"ns": times, "starts": starts, "read_chars": len(read)})
    await mm.say(turn, "done")


async def calls(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    await timed(mm, turn, rest, updates=True)


async def bare(mm: ScriptedMM, turn: Turn, rest: str) -> None:
    await timed(mm, turn, rest, updates=False)


class ClockedMM(ScriptedMM):
    commands: ClassVar[dict[str, Command]] = {**COMMANDS, "/calls": calls, "/bare": bare}


async def serve(agent: ScriptedMM) -> str:
    reader, writer = await wire.stdio()
    agent.wire = conn = ClockedConnection(reader, writer, agent.handle, agent.notified)
    conn.stamps()
    why = await conn.run()
    await agent.closed(why)
    return why


if __name__ == "__main__":
    cli.serve = serve  # the same command line and start, this wire
    sys.exit(cli.main(sys.argv[1:], ClockedMM))
