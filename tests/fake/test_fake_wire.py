"""The fake speaks mm's Go wire, asserted on the bytes it wrote (its ``trace`` holds each line).

mm is built on github.com/coder/acp-go-sdk; the library on the Python SDK. Each test names the
Go convention it pins, so a fake that drifts back to the Python SDK's habits fails here.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import fake_mm
import minime
from conftest import FakeMM
from raw_client import RawClient, run


def out_lines(trace: Path) -> list[str]:
    """The ``msg`` of each line mm wrote, as the bytes it wrote (the trace embeds them as is)."""
    prefix = '{"dir":"out","msg":'
    return [
        line[len(prefix) : -1]
        for line in trace.read_text(encoding="utf-8").splitlines()
        if line.startswith(prefix)
    ]


def echo(request: minime.ToolRequest) -> str:
    return "ok"


def test_mm_numbers_its_own_requests_from_1(mm: FakeMM) -> None:
    """Go's ``nextID.Add(1)``: list request, permission, tool calls are 1, 2, 3, … in order."""

    async def main() -> None:
        config = mm.config(client_tools={"discovery": "request"})
        tools = [minime.Tool("t", echo)]
        allow = lambda call: minime.ALLOW  # noqa: E731
        async with mm.agent(config, tools=tools, discovery="request", on_permission=allow) as agent:
            await agent.complete("/tool t {}\n/tool t {}\n/bash ls")

    asyncio.run(main())
    requests = [json.loads(line) for line in out_lines(mm.trace_path)]
    requests = [m for m in requests if "method" in m and "id" in m]
    assert [m["id"] for m in requests] == [1, 2, 3, 4, 5, 6]
    assert [m["method"] for m in requests] == [
        "_org.mini-me/tools/list",
        "session/request_permission",
        "_minime.py/tools/t",
        "session/request_permission",
        "_minime.py/tools/t",
        "session/request_permission",
    ]
    first = next(line for line in out_lines(mm.trace_path) if '"method":"_org' in line)
    assert first.startswith('{"jsonrpc":"2.0","id":1,"method":"_org.mini-me/tools/list"')


def go_error(text: str) -> str:
    return '{"code":-32603,"message":"Internal error","data":{"error":"' + text + '"}}'


def test_every_error_of_mm_own_carries_data_error(mm: FakeMM) -> None:
    """A plain Go error from a handler: -32603 ``Internal error``, the words in ``data.error``
    (never the Python SDK's ``data.details``, never the words in ``message``)."""
    config = mm.config(yolo=True)

    async def main() -> None:
        raw = await RawClient.start(mm, config)
        await raw.initialize()
        session = await raw.new_session()
        failed = await raw.call("session/new", {"cwd": "/tmp"})  # no mcpServers: Go validates
        _, model = await raw.prompt(session, "/error the model server said 503")
        _, loop = await raw.prompt(session, "\n".join(["/bash ls"] * 6))
        unknown = await raw.call("session/prompt", {"sessionId": "nope", "prompt": []})
        load = await raw.call("session/load", {"sessionId": "gone", "cwd": "/", "mcpServers": []})
        other = await raw.call("_vendor/thing", {})
        await raw.close()
        assert failed["error"] == {
            "code": -32602,
            "message": "Invalid params",
            "data": {"error": "mcpServers is required"},
        }
        assert model["error"]["data"] == {"error": "the model server said 503"}
        assert loop["error"]["data"] == {"error": "the model repeated the same bash call 6 times"}
        assert unknown["error"]["data"] == {"error": "unknown session nope"}
        assert load["error"]["data"] == {"error": "session gone not found"}
        assert other["error"] == {
            "code": -32601,
            "message": "Method not found",
            "data": {"method": "_vendor/thing"},
        }

    run(main())
    errors = [line for line in out_lines(mm.trace_path) if '"error":{' in line]
    assert len(errors) == 6
    assert all('"details"' not in line for line in errors)
    for text in (
        "the model server said 503",
        "the model repeated the same bash call 6 times",
        "unknown session nope",
        "session gone not found",
    ):
        assert any(line.endswith(f',"error":{go_error(text)}}}') for line in errors), text


def test_the_model_reads_an_error_answer_with_its_data(mm: FakeMM) -> None:
    """Go's ``RequestError.Error()``: ``{"code","message","data"}``, data keys sorted."""
    data = {"why": "locked", "path": "a.txt"}

    def answer(msg: dict[str, Any]) -> dict[str, Any]:
        return {"error": {"code": -32000, "message": "Busy", "data": data}}

    async def main() -> None:
        raw = await RawClient.start(mm, mm.config(yolo=True), answer)
        await raw.initialize([{"name": "t", "method": "_x/t"}])
        session = await raw.new_session()
        text, _ = await raw.prompt(session, "/tool t {}")
        await raw.close()
        read = (
            '[client tool error: {"code":-32000,"message":"Busy",'
            '"data":{"path":"a.txt","why":"locked"}}]'
        )
        assert text == f"client_t -> {read}"
        (end,) = [
            n["params"]["update"]
            for n in raw.notifications
            if n["params"]["update"].get("status") == "failed"
        ]
        assert end["rawOutput"] == {"output": read}

    run(main())


def test_max_output_is_exactly_what_the_model_reads(mm: FakeMM) -> None:
    """The cut keeps head and tail and its marker within ``maxOutput``: not one character more."""
    long = "".join(chr(0x61 + i % 26) for i in range(5000))

    async def main() -> None:
        tools = [minime.Tool("big", lambda request: long)]
        async with mm.agent(mm.config(yolo=True, max_output=300), tools=tools) as agent:
            await agent.complete("/tool big {}")

    asyncio.run(main())
    ends = [
        json.loads(line)["params"]["update"]
        for line in out_lines(mm.trace_path)
        if '"status":"completed"' in line
    ]
    (output,) = [end["rawOutput"]["output"] for end in ends]
    assert len(output) == 300
    assert output.startswith(long[:100]) and output.endswith(long[-100:])
    assert output == fake_mm.truncate(long, 300)


def test_json_is_written_as_go_writes_it(mm: FakeMM) -> None:
    """encoding/json escapes <, > and &: the client must decode, not match raw text."""

    async def main() -> None:
        async with mm.agent() as agent:
            assert (await agent.complete("/say <b> & ok")).text == "<b> & ok"

    asyncio.run(main())
    (chunk,) = [line for line in out_lines(mm.trace_path) if "agent_message_chunk" in line]
    assert '"text":"\\u003cb\\u003e \\u0026 ok"' in chunk


def test_a_line_over_10_mib_ends_the_connection(mm: FakeMM) -> None:
    """bufio.Scanner's 10 MiB buffer: a longer line from the client ends mm's side of it."""

    async def main() -> None:
        raw = await RawClient.start(mm, mm.config())
        await raw.initialize()
        big = {"jsonrpc": "2.0", "method": "_x/n", "params": {"pad": "x" * fake_mm.MAX_LINE}}
        raw.write(json.dumps(big).encode() + b"\n")
        status = await asyncio.wait_for(raw.proc.wait(), 20)
        await raw.close()
        assert status == 0
        assert any("bufio.Scanner: token too long" in line for line in raw.stderr), raw.stderr

    run(main())


def test_a_lone_surrogate_is_what_go_makes_of_it(mm: FakeMM) -> None:
    """Go strings hold no lone surrogate: the escape ``\\ud800`` decodes to U+FFFD, once."""

    async def main() -> None:
        raw = await RawClient.start(mm, mm.config(yolo=True), lambda msg: {"result": "ok"})
        await raw.initialize([{"name": "t", "method": "_x/t"}])
        session = await raw.new_session()
        text, _ = await raw.prompt(session, '/say a\ud800b\n/tool t {"k\\ud800": "\\udfff"}')
        await raw.close()
        assert text == "a\ufffdb\nclient_t -> ok"
        (request,) = raw.requests
        assert request["params"]["k\ufffd"] == "\ufffd"

    run(main())
