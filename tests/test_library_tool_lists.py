"""What the library makes of the tools a program gives and of what their handlers return.

Against the fake mm over real pipes: what the model reads is what the fake says after
``<model name> ->``; the library's own log lines (logger ``minime``) come through caplog.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

import minime
import pytest
from conftest import FakeMM
from helpers.handlers import Recorder
from minime import tools as tools_mod

SHARED = "_com.example/shared"


def request_mode(mm: FakeMM) -> str:
    return mm.config(yolo=True, client_tools={"discovery": "request"})


def names_seen(text: str) -> list[str]:
    return [tool["name"] for tool in json.loads(text)]


async def list_error(mm: FakeMM) -> dict[str, Any]:
    """The error the client answered to mm's (only) list request."""
    (listed,) = mm.sent("_org.mini-me/tools/list")
    answer = await mm.until(lambda: mm.answer_to(listed["id"]), what="the list answer")
    return answer["error"]


def skipped(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]


# --- one method per tool ---------------------------------------------------------------------


def test_two_tools_on_one_method_are_refused_before_spawning(mm: FakeMM) -> None:
    # mm's call names only the method: the client could not tell which tool the model called.
    tools = [
        minime.Tool("first", Recorder("1"), method=SHARED),
        minime.Tool("second", Recorder("2"), method=SHARED),
    ]

    async def main() -> None:
        with pytest.raises(minime.Error) as caught:
            await minime.start(mm.config(), mm=mm.bin, cwd=str(mm.dir), tools=tools)
        assert str(caught.value) == (
            f"tool 1 ('second'): method \"{SHARED}\" is already another tool's: "
            "a call names only its method, so each tool needs its own"
        )

    asyncio.run(main())
    assert mm.trace() == []  # nothing was spawned


def test_in_request_mode_the_second_tool_on_a_method_is_skipped_and_the_first_runs(
    mm: FakeMM, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = Recorder("from first"), Recorder("from second")

    def source(session_id: str, cwd: str) -> list[minime.Tool]:
        return [
            minime.Tool("first", first, method=SHARED),
            minime.Tool("second", second, method=SHARED),
        ]

    async def main() -> None:
        async with mm.agent(request_mode(mm), tools=source, discovery="request") as agent:
            assert names_seen((await agent.complete("/tools")).text) == ["client_first"]
            assert (await agent.complete("/tool first {}")).text == "client_first -> from first"
            assert [m for m in skipped(caplog)] == [
                f"tools for session {agent.session_id!r}: tool 1 ('second') skipped: "
                f'method "{SHARED}" is already another tool\'s: a call names only its method, '
                "so each tool needs its own"
            ]
        assert (len(first.requests), len(second.requests)) == (1, 0)

    with caplog.at_level(logging.WARNING, logger="minime"):
        asyncio.run(main())


# --- a tool source's list, entry by entry (mm's rule) ------------------------------------------


def test_in_request_mode_each_bad_entry_is_skipped_and_the_others_kept(
    mm: FakeMM, caplog: pytest.LogCaptureFixture
) -> None:
    good, other = Recorder("good"), Recorder("other")

    def source(session_id: str, cwd: str) -> list[Any]:
        return [
            minime.Tool("good", good),
            minime.Tool("", Recorder()),
            "not a tool",
            minime.Tool("nohandle", None),
            minime.Tool("ext", Recorder(), method="com.example/x"),
            minime.Tool("schema", Recorder(), input_schema={"type": "array"}),
            minime.Tool("good!", Recorder()),
            minime.Tool("other", other),
        ]

    async def main() -> None:
        async with mm.agent(request_mode(mm), tools=source, discovery="request") as agent:
            text = (await agent.complete("/tools\n/tool good {}\n/tool other {}")).text
            first, *calls = text.split("\n")
            assert names_seen(first) == ["client_good", "client_other"]
            assert calls == ["client_good -> good", "client_other -> other"]
            where = f"tools for session {agent.session_id!r}"
        assert skipped(caplog) == [
            f"{where}: tool 1 skipped: no name",
            f"{where}: tool 2 skipped: not a minime.Tool: 'not a tool'",
            f"{where}: tool 3 ('nohandle') skipped: no handle",
            f'{where}: tool 4 (\'ext\') skipped: method "com.example/x" must start with "_" '
            "(an ACP extension method)",
            f"{where}: tool 5 ('schema') skipped: inputSchema.type must be \"object\", got 'array'",
            f"{where}: tool 6 ('good!') skipped: duplicate tool name \"client_good\"",
        ]
        # mm saw a clean list: it skipped nothing itself.
        assert not [line for line in mm.stderr if "skipped" in line]

    with caplog.at_level(logging.WARNING, logger="minime"):
        asyncio.run(main())


@pytest.mark.parametrize(
    ("returned", "words"),
    [(42, "it returned int, not a list of minime.Tool"), ("abc", "it returned str")],
)
def test_a_source_that_returns_no_list_gives_a_session_without_tools(
    mm: FakeMM, caplog: pytest.LogCaptureFixture, returned: Any, words: str
) -> None:
    async def main() -> None:
        tools = lambda session_id, cwd: returned  # noqa: E731
        async with mm.agent(request_mode(mm), tools=tools, discovery="request") as agent:
            assert (await agent.complete("/tools\n/say alive")).text == "[]\nalive"
            assert words in (await list_error(mm))["data"]["details"]
        assert len([line for line in mm.stderr if "tools/list failed" in line]) == 1
        assert any(words in r.getMessage() for r in caplog.records)

    with caplog.at_level(logging.WARNING, logger="minime"):
        asyncio.run(main())


def test_a_source_that_raises_is_logged_and_the_session_opens_without_tools(
    mm: FakeMM, caplog: pytest.LogCaptureFixture
) -> None:
    def source(session_id: str, cwd: str) -> list[minime.Tool]:
        raise RuntimeError("no editor state")

    async def main() -> None:
        async with mm.agent(request_mode(mm), tools=source, discovery="request") as agent:
            assert (await agent.complete("/tools\n/say alive")).text == "[]\nalive"
            logged = [
                r.getMessage() for r in caplog.records if "tool source failed" in r.getMessage()
            ]
            assert logged == [
                f"tool source failed for session {agent.session_id!r}: no editor state"
            ]
            error = await list_error(mm)
            assert error["data"]["details"] == "the tool source failed: no editor state"
        assert len([line for line in mm.stderr if "tools/list failed" in line]) == 1

    with caplog.at_level(logging.WARNING, logger="minime"):
        asyncio.run(main())


# --- what a handler returns ------------------------------------------------------------------


class Opaque:
    pass


@pytest.mark.parametrize(
    ("reply", "read", "is_error"),
    [
        (None, "", False),
        ({"n": [1, 2]}, '{"n":[1,2]}', False),
        (7, "7", False),
        (
            Opaque(),
            "[client tool error: the handler returned a value of type Opaque, which cannot be "
            "sent as JSON (Encoding objects of type Opaque is unsupported)]",
            True,
        ),
        (
            {"deep": object()},
            "[client tool error: the handler returned a value of type dict, which cannot be "
            "sent as JSON (Encoding objects of type object is unsupported)]",
            True,
        ),
    ],
    ids=["none", "dict", "int", "opaque", "nested-opaque"],
)
def test_what_a_handler_returns_is_what_the_model_reads(
    mm: FakeMM, reply: Any, read: str, is_error: bool
) -> None:
    async def main() -> None:
        tools = [minime.Tool("t", Recorder(reply))]
        async with mm.agent(mm.config(yolo=True), tools=tools) as agent:
            events = [e async for e in agent.stream("/tool t {}")]
            assert (await agent.complete("/say alive")).text == "alive"
        assert events[-1].text == f"client_t -> {read}"
        (wire,) = mm.sent("_minime.py/tools/t")
        answer = mm.answer_to(wire["id"])
        assert answer is not None and answer["result"]["isError"] is is_error

    asyncio.run(main())


# --- the name the model sees -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "seen"),
    [
        ("open buffers", "client_open_buffers"),
        ("--weird..name--", "client_weird_name"),
        ("a/b.c", "client_a_b_c"),
        ("Plain9", "client_Plain9"),
        ("_", "client"),
        ("???", "client"),
        ("été", "client_t"),
        ("日本", "client"),
        ("client", "client_client"),
        ("_x_", "client_x"),
    ],
)
def test_the_model_name_is_made_as_mm_makes_it(name: str, seen: str) -> None:
    # mm sanitises "client_<name>" as a whole: a name with no ASCII letter or digit is "client".
    assert tools_mod.model_name(name) == seen


def test_two_names_with_no_letter_or_digit_are_one_name(mm: FakeMM) -> None:
    tools = [minime.Tool("!!", Recorder()), minime.Tool("??", Recorder())]

    async def main() -> None:
        with pytest.raises(
            minime.Error, match=re.escape("tool 1 ('??'): duplicate tool name \"client\"") + "$"
        ):
            await minime.start(mm.config(), mm=mm.bin, cwd=str(mm.dir), tools=tools)

    asyncio.run(main())
