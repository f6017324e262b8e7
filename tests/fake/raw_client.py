"""A bare ACP client for the fake's own tests: JSON lines on its stdio, nothing of the library.

The library refuses what mm would skip, so to see what mm itself does with bad lists and
answers the fake is driven by this client instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
from collections.abc import Callable
from typing import Any

import fake_mm
from conftest import FakeMM

Answer = Callable[[dict[str, Any]], Any]


class RawClient:
    """A minimal ACP client: JSON lines on the fake's stdio, mm's requests answered by ``answer``.

    ``answer(message)`` returns the response body ({"result": …} or {"error": …}), or None to
    leave the request unanswered.
    """

    def __init__(self, proc: asyncio.subprocess.Process, answer: Answer | None) -> None:
        self.proc = proc
        self.answer = answer or (lambda msg: {"error": {"code": -32601, "message": "nope"}})
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        self.lines: list[bytes] = []  # every stdout line, as it came
        self.ids = iter(range(1000, 10**6))
        self.tasks = [asyncio.ensure_future(self._read()), asyncio.ensure_future(self._drain())]

    @classmethod
    async def start(cls, mm: FakeMM, config: str, answer: Answer | None = None) -> RawClient:
        proc = await asyncio.create_subprocess_exec(
            mm.bin,
            "-acp",
            "-config",
            config,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            limit=1 << 24,
        )
        return cls(proc, answer)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        async for line in self.proc.stdout:
            self.lines.append(line)
            msg = json.loads(line)
            if "method" not in msg:
                self.pending.pop(msg["id"]).set_result(msg)
            elif "id" in msg:
                self.requests.append(msg)
                body = self.answer(msg)
                if asyncio.iscoroutine(body):
                    body = await body
                if body is not None:
                    self.send({"jsonrpc": "2.0", "id": msg["id"], **body})
            else:
                self.notifications.append(msg)

    async def _drain(self) -> None:
        assert self.proc.stderr is not None
        async for line in self.proc.stderr:
            self.stderr.append(line.decode().rstrip("\n"))

    def send(self, msg: dict[str, Any]) -> None:
        self.write(json.dumps(msg).encode() + b"\n")

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await asyncio.wait_for(future, 20)

    async def initialize(self, tools: Any = None) -> dict[str, Any]:
        capabilities = {} if tools is None else {"_meta": {fake_mm.META_TOOLS: tools}}
        params = {"protocolVersion": 1, "clientCapabilities": capabilities}
        return await self.call("initialize", params)

    async def new_session(self, cwd: str = "/tmp") -> str:
        answer = await self.call("session/new", {"cwd": cwd, "mcpServers": []})
        return answer["result"]["sessionId"]

    async def prompt(self, session_id: str, text: str) -> tuple[str, dict[str, Any]]:
        start = len(self.notifications)
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        answer = await self.call("session/prompt", params)
        chunks = [
            n["params"]["update"]["content"]["text"]
            for n in self.notifications[start:]
            if n["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
        ]
        return "".join(chunks), answer

    async def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        status = await asyncio.wait_for(self.proc.wait(), 10)
        for task in self.tasks:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 5)
        return status

    def acp_lines(self) -> list[str]:
        return [line for line in self.stderr if line.startswith("[acp]")]


def run(coro: Any) -> Any:
    return asyncio.run(coro)
