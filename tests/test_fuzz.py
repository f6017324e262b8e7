"""Properties (hypothesis) over what crosses the boundaries.

- Tool lists: the client's validation (``minime.tools.validate``) refuses exactly what mm
  would skip (the spec's rules, as tests/fake_mm.py implements them), and what it accepts
  reaches mm whole.
- Tool arguments: whatever JSON object the model sends reaches a client tool as it was sent
  (over the wire, through the fake mm); the editor tools answer any arguments with a result or
  a clear error, never an internal one.
- ``session/update`` payloads: whatever valid update an agent sends, the renderer shows it
  without an exception and without a failure recorded by the turn float.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import string
import threading
from collections.abc import Iterator
from typing import Any

import minime
import msgspec
import pytest
import yaml
from fake_mm import validate_tools
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from minime import tools as tools_mod
from minime.model import ToolRequest
from minime.nvim.editor_tools import editor_tools
from minime.nvim.render import to_lua
from minime.updates import to_event
from nvim_harness import REPO, start

# The built-in tools: one Lua file each.
BUILTIN_NAMES = sorted(
    p.stem for p in (REPO / "lua" / "minime" / "tools").glob("*.lua") if p.stem != "init"
)

# Text with what agents and models really send: newlines, CRs, NULs, markdown, emoji, and
# lone surrogates (a JSON escape such as "\ud800" decodes to one).
ODD = ["", "\n", "\r\n", "a\nb", "```lua", "\x00", "\ud800", "x\udfffy", "😀", "é", " ", "\t"]
TEXT = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=24),
    st.sampled_from(ODD),
)
INT64 = st.integers(-(2**63), 2**63 - 1)
JSON_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    INT64,
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
JSON = st.recursive(
    JSON_SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


# ---------------------------------------------------------------------------------------------
# Tool descriptions and lists


def _handle(request: ToolRequest) -> str:
    return "ok"


NAMES = st.one_of(
    st.sampled_from(["open buffers", "open_buffers", "open-buffers", "a", "A", "_", " ", ""]),
    st.text(string.ascii_letters + string.digits + " _-./", max_size=6),
    TEXT,
    st.integers(),
)
METHODS = st.one_of(
    st.none(),
    st.sampled_from(["", "_", "_com.example/x", "com.example/x", "x", "_x y"]),
    TEXT,
    st.integers(),
)
SCHEMAS = st.one_of(
    st.none(),
    st.just({}),
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["object", "array", "string", None, ["object"], 1]),
            "properties": st.dictionaries(TEXT, JSON, max_size=2) | JSON,
            "required": st.lists(TEXT, max_size=2) | JSON,
        },
    ),
    JSON,
)
TOOLS = st.builds(
    minime.Tool,
    name=NAMES,
    handle=st.sampled_from([_handle, None, "not callable"]),
    description=st.one_of(st.none(), TEXT, st.integers()),
    input_schema=SCHEMAS,
    method=METHODS,
)


def raw_entry(tool: minime.Tool) -> dict[str, Any]:
    """The tool's description as it would travel, built by hand (any field of any type)."""
    entry: dict[str, Any] = {"name": tool.name, "method": tool.wire_method}
    if tool.description is not None:
        entry["description"] = tool.description
    if tool.input_schema is not None:
        entry["inputSchema"] = tool.input_schema
    return entry


@FUZZ
@given(st.lists(TOOLS, max_size=5))
def test_the_client_refuses_exactly_what_mm_would_skip(tools: list[minime.Tool]) -> None:
    handles_ok = all(callable(tool.handle) for tool in tools)
    _, skipped = validate_tools([raw_entry(tool) for tool in tools])
    try:
        accepted = tools_mod.validate(tools)
    except minime.Error as exc:
        assert str(exc), "a refusal says why"
        # mm keeps two tools on one method; the client refuses them (a call names only its
        # method, so it could not tell which tool the model called).
        shared = "is already another tool's" in str(exc)
        assert skipped or not handles_ok or shared, f"refused, but mm keeps every entry: {exc}"
        return
    assert handles_ok, "a tool without a handle is refused"
    assert skipped == [], "accepted, but mm would skip an entry"
    # What is accepted reaches mm whole: every entry kept, under the names the model sees.
    sent = json.loads(json.dumps(tools_mod.descriptions(accepted)))
    kept, lines = validate_tools(sent)
    assert lines == []
    # The fake says "client_" for a name with no ASCII letter or digit where mm says "client".
    seen_by_mm = sorted(t.model_name.rstrip("_") for t in kept)
    assert seen_by_mm == sorted(tools_mod.model_name(t.name) for t in tools)


# ---------------------------------------------------------------------------------------------
# Tool arguments over the wire: the model's arguments reach the tool as the model sent them.


class LoopThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture(scope="module")
def echo_agent(fake_mm_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The fake mm with one client tool that answers the arguments it got, as JSON."""
    directory = tmp_path_factory.mktemp("echo")
    config = directory / "agent.yaml"
    config.write_text(yaml.safe_dump({"yolo": True}))
    received: list[dict[str, Any]] = []

    def echo(request: ToolRequest) -> str:
        received.append(request.arguments)
        return json.dumps(request.arguments)

    loop = LoopThread()
    tool = minime.Tool("echo", echo, input_schema={"type": "object"})
    agent = loop.run(minime.start(str(config), mm=fake_mm_bin, cwd=str(directory), tools=[tool]))
    agent.received = received
    agent.loop = loop
    try:
        yield agent
    finally:
        with contextlib.suppress(Exception):
            loop.run(agent.close())
        loop.stop()


ARGS = st.dictionaries(TEXT, JSON, max_size=5)
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def go_value(value: Any) -> Any:
    """A JSON value as Go's decoder leaves it: each lone surrogate replaced by U+FFFD."""
    if isinstance(value, str):
        return LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [go_value(v) for v in value]
    if isinstance(value, dict):
        return {go_value(k): go_value(v) for k, v in value.items()}
    return value


@FUZZ
@given(ARGS, st.booleans())
def test_the_model_arguments_reach_the_tool_as_sent(
    echo_agent: Any, args: dict[str, Any], model_meta: bool
) -> None:
    if model_meta:  # a _meta the model put in its arguments is mm's to replace
        args = {**args, "_meta": {"org.mini-me/sessionId": "someone else's"}}
    # mm decodes the model's JSON with Go: a lone surrogate is U+FFFD by the time it is sent.
    expected = {k: v for k, v in go_value(args).items() if k != "_meta"}
    echo_agent.received.clear()
    result = echo_agent.loop.run(echo_agent.complete("/tool echo " + json.dumps(args)))
    assert result.stop_reason == "end_turn"
    assert echo_agent.received == [expected]
    read = result.text.split("client_echo -> ", 1)[1]
    assert json.loads(read) == expected


# ---------------------------------------------------------------------------------------------
# The editor tools, through the host's binding and a real Neovim: any arguments get a result or
# a clear error — never a failure of the editor.


@pytest.fixture(scope="module")
def nvim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    directory = tmp_path_factory.mktemp("tools")
    (directory / "a.txt").write_text("one\ntwo\nthree\n")
    (directory / "b.py").write_text("print('b')\n")
    with start("") as n:
        n.command(f"cd {directory}")
        n.command("edit a.txt | edit b.py")
        n.exec_lua(
            "vim.diagnostic.set(vim.api.nvim_create_namespace('fuzz'), 0,"
            " {{lnum = 0, col = 0, message = 'x', severity = 1}})"
        )
        n.cwd = str(directory)
        yield n


EDITOR_ARGS = st.dictionaries(
    st.sampled_from(["path", "start_line", "end_line", "severity", "other", "_meta"]) | TEXT,
    st.one_of(
        st.sampled_from(["a.txt", "b.py", "../a.txt", "/etc/passwd", "error", "warn", "HINT"]),
        st.integers(-5, 5),
        st.sampled_from([2**64, -(2**70), 10**400, 1e300, -0.0, 2.5]),
        JSON,
    ),
    max_size=4,
)


def run_now(coro: Any) -> Any:
    """Run a coroutine that never suspends (pynvim's own loop must not run inside asyncio's)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise AssertionError("the call suspended")


@FUZZ
@given(st.sampled_from(BUILTIN_NAMES), EDITOR_ARGS)
def test_editor_tools_answer_any_arguments_clearly(nvim: Any, name: str, args: Any) -> None:
    async def call_lua(
        tool: str, arguments: dict[str, Any], cwd: str, _sid: Any = None, names: str = ""
    ) -> Any:
        return nvim.exec_lua("return require('minime.tools').call(...)", tool, arguments, cwd)

    specs = nvim.exec_lua("return require('minime.tools').builtin_specs()")
    source = editor_tools(call_lua, builtin_tools=specs)
    tools = {t.name: t for t in source("s1", nvim.cwd)}
    request = ToolRequest(session_id="s1", arguments=args, cwd=nvim.cwd)
    answer = run_now(tools_mod.run(tools[name], request))
    text = answer["content"][0]["text"]
    assert isinstance(text, str) and text
    text.encode("utf-8")  # valid for the wire
    assert "internal error" not in text, text
    assert "could not run" not in text, text
    if not answer["isError"]:
        json.loads(text)


# ---------------------------------------------------------------------------------------------
# session/update payloads: parsed as the SDK does, turned into events, rendered in the float.

CONTENT_BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
    st.fixed_dictionaries({"type": st.just("resource_link"), "uri": TEXT, "name": TEXT}),
    st.fixed_dictionaries(
        {"type": st.just("image"), "data": st.just("aGk="), "mimeType": st.just("image/png")}
    ),
)
TOOL_CONTENT = st.one_of(
    st.fixed_dictionaries({"type": st.just("content"), "content": CONTENT_BLOCK}),
    st.fixed_dictionaries(
        {"type": st.just("diff"), "path": TEXT, "newText": TEXT},
        optional={"oldText": st.none() | TEXT},
    ),
    st.fixed_dictionaries({"type": st.just("terminal"), "terminalId": TEXT}),
)
KINDS = st.sampled_from(["read", "edit", "delete", "move", "search", "execute", "think", "other"])
STATUSES = st.sampled_from(["pending", "in_progress", "completed", "failed"])
CALL_IDS = st.sampled_from(["call_1", "call_2", "", "x" * 300]) | TEXT
CALL_FIELDS = {
    "title": TEXT,
    "kind": KINDS,
    "status": STATUSES,
    "rawInput": JSON,
    "rawOutput": JSON,
    "content": st.lists(TOOL_CONTENT, max_size=3),
    "locations": st.lists(st.fixed_dictionaries({"path": TEXT}), max_size=2),
}
UPDATES = st.one_of(
    st.fixed_dictionaries(
        {
            "sessionUpdate": st.sampled_from(
                ["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"]
            ),
            "content": CONTENT_BLOCK,
        }
    ),
    st.fixed_dictionaries(
        {"sessionUpdate": st.just("tool_call"), "toolCallId": CALL_IDS, "title": TEXT},
        optional={k: v for k, v in CALL_FIELDS.items() if k != "title"},
    ),
    st.fixed_dictionaries(
        {"sessionUpdate": st.just("tool_call_update"), "toolCallId": CALL_IDS},
        optional=CALL_FIELDS,
    ),
    st.fixed_dictionaries(
        {
            "sessionUpdate": st.just("plan"),
            "entries": st.lists(
                st.fixed_dictionaries(
                    {
                        "content": TEXT,
                        "priority": st.sampled_from(["high", "medium", "low"]),
                        "status": st.sampled_from(["pending", "in_progress", "completed"]),
                    }
                ),
                max_size=4,
            ),
        }
    ),
    st.fixed_dictionaries(
        {"sessionUpdate": st.just("session_info_update")}, optional={"title": TEXT}
    ),
    st.fixed_dictionaries(
        {"sessionUpdate": st.just("usage_update"), "used": INT64, "size": INT64},
    ),
)
USAGE = st.none() | st.dictionaries(
    st.sampled_from(["input_tokens", "output_tokens", "total_tokens", "thought_tokens"]),
    INT64 | TEXT,
)


@FUZZ
@given(st.lists(UPDATES, min_size=1, max_size=6), STATUSES | TEXT, USAGE)
def test_any_update_renders_without_an_error(
    nvim: Any, updates: list[dict[str, Any]], stop_reason: str, usage: Any
) -> None:
    from acp.schema import SessionNotification
    from pydantic import ValidationError

    items: list[dict[str, Any]] = [{"kind": "begin", "prompt": "fuzz", "cwd": "/fuzz"}]
    for update in updates:
        try:
            parsed = SessionNotification.model_validate({"sessionId": "s", "update": update})
        except ValidationError:
            assume(False)  # the SDK drops it before any of ours runs
            return
        event = to_event(parsed.update)
        if event is not None:
            items.append(msgspec.to_builtins(to_lua(event)))
    done = minime.model.Event(kind="done", stop_reason=stop_reason, usage=usage)
    items.append(msgspec.to_builtins(to_lua(done)))
    before = len(nvim.exec_lua("return require('minime.ui.turn').errors"))
    nvim.exec_lua("require('minime.ui.turn').apply('/fuzz', ...)", items)
    errors = nvim.exec_lua("return require('minime.ui.turn').errors")
    assert errors[before:] == []
    state = nvim.exec_lua("return require('minime.ui.turn').get('/fuzz')")
    assert state["running"] is False, "the turn ended"
