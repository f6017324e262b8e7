"""The Python side of the editor tools: declarations, binding to sessions, encoding, errors.

``call_lua`` is a stand-in recording what it was asked; Neovim is started once, only for the
built-in tools' declarations (they live in their Lua files).
"""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

import pytest
from minime import tools as tools_mod
from minime.model import ToolRequest
from minime.nvim.editor_tools import METHOD_PREFIX, ToolError, encode
from minime.nvim.editor_tools import editor_tools as _editor_tools
from nvim_harness import REPO, start


@functools.cache
def builtin_specs() -> list[dict[str, Any]]:
    """The declarations of lua/minime/tools/*.lua, as the host gets them with setup."""
    with start() as nvim:
        return nvim.exec_lua("return require('minime.tools').builtin_specs()")


def editor_tools(call_lua: Any, **kw: Any) -> Any:
    kw.setdefault("builtin_tools", builtin_specs())
    return _editor_tools(call_lua, **kw)


class FakeLua:
    def __init__(self, answer: Any = None, fail: Exception | None = None) -> None:
        self.answer = answer if answer is not None else {"ok": True, "value": {"x": 1}}
        self.fail = fail
        self.calls: list[tuple[str, dict[str, Any], str]] = []
        self.names: list[str] = []

    async def __call__(
        self, name: str, args: dict[str, Any], cwd: str, _sid: Any = None, names: str = ""
    ) -> Any:
        self.names.append(names)
        self.calls.append((name, args, cwd))
        if self.fail:
            raise self.fail
        return self.answer


def run(tool: Any, arguments: dict[str, Any] | None = None, cwd: str | None = None) -> str:
    request = ToolRequest(session_id="s1", arguments=arguments or {}, cwd=cwd)
    return asyncio.run(tool.handle(request))


def by_name(tools: list[Any]) -> dict[str, Any]:
    return {tool.name: tool for tool in tools}


def test_declarations() -> None:
    tools = editor_tools(FakeLua())("s1", "/p")
    assert [t.name for t in tools] == sorted(
        p.stem for p in (REPO / "lua" / "minime" / "tools").glob("*.lua") if p.stem != "init"
    )
    assert tools_mod.validate(tools) == tools  # what mm would accept
    for tool in tools:
        assert (
            tool.wire_method == f"{METHOD_PREFIX}{tool.name}" == f"_minime.nvim/tools/{tool.name}"
        )
        assert tool.input_schema["type"] == "object"
        assert 80 < len(tool.description) < 420, tool.name
        assert "Returns JSON" in tool.description
    tools = by_name(tools)
    assert tools["read_buffer"].input_schema["required"] == ["path"]
    assert set(tools["read_buffer"].input_schema["properties"]) == {
        "path",
        "start_line",
        "end_line",
    }
    severity = tools["diagnostics"].input_schema["properties"]["severity"]
    assert severity["enum"] == ["error", "warn", "info", "hint"]
    assert tools["open_buffers"].input_schema["properties"] == {}
    described = tools_mod.descriptions(tools.values())
    read = [d["method"] for d in described].index("_minime.nvim/tools/read_buffer")
    assert described[read]["inputSchema"]["required"] == ["path"]
    # The schema's fields in a fixed order (Lua tables have none): start_line before end_line.
    assert list(described[read]["inputSchema"]["properties"]) == ["path", "start_line", "end_line"]


def test_call_passes_arguments_and_cwd_and_sends_luas_json_text_as_is() -> None:
    # A built-in tool's answer comes as JSON text, its fields in the order its file declares.
    text = (
        '{"path":"a.py","start_line":1,"end_line":2,"total_lines":3,"modified":false,"text":"é\\n"}'
    )
    lua = FakeLua({"ok": True, "value": text})
    tool = by_name(editor_tools(lua)("s1", "/proj"))["read_buffer"]
    assert run(tool, {"path": "a.py", "_meta": {"org.mini-me/sessionId": "s1"}}) == text
    # Lua builds the rest of the context (options, selection) from the cwd.
    assert lua.calls == [("read_buffer", {"path": "a.py"}, "/proj")]
    # A table (Lua could not encode it) is encoded compact, as it came.
    lua = FakeLua({"ok": True, "value": {"text": "é\n", "path": "a.py"}})
    tool = by_name(editor_tools(lua)("s1", "/proj"))["read_buffer"]
    assert run(tool, {"path": "a.py"}) == '{"text":"é\\n","path":"a.py"}'


def all_texts(tool: Any) -> str:
    return json.dumps([tool.description, tool.input_schema])


def test_the_texts_name_the_tools_as_the_receiving_agents_model_sees_them() -> None:
    """I1: mm's model sees client_open_buffers; claude's mcp__minime__open_buffers: the
    descriptions and errors say the name the agent's model can call, and a value (a file's
    text) is never rewritten."""
    mm_tools = by_name(editor_tools(FakeLua())("s1", "/p"))
    assert "client_open_buffers" in all_texts(mm_tools["read_buffer"])
    assert "client_definition" in all_texts(mm_tools["symbols"])

    value = '{"text":"see client_open_buffers"}'
    failing = FakeLua({"ok": False, "error": "not open; call client_open_buffers for the list"})
    for names, open_buffers in [
        ("mcp__minime__%s", "mcp__minime__open_buffers"),
        ("minime_%s", "minime_open_buffers"),
        ("%s", "open_buffers"),
    ]:
        tools = by_name(
            editor_tools(FakeLua({"ok": True, "value": value}), names=names)("s1", "/p")
        )
        texts = "".join(all_texts(tool) for tool in tools.values())
        assert "client_" not in texts, names
        assert f"from {open_buffers}" in tools["read_buffer"].description, names
        read = tools["read_buffer"].input_schema["properties"]["path"]["description"]
        assert read == f"Path of an open file, as {open_buffers} lists it.", names
        assert names.replace("%s", "definition") in tools["symbols"].description
        assert run(tools["read_buffer"], {"path": "a"}) == value, "a value is the file's own"
        lua = FakeLua({"ok": True, "value": value})
        run(by_name(editor_tools(lua, names=names)("s1", "/p"))["read_buffer"], {"path": "a"})
        assert lua.names == [names], "Lua writes its notes with the agent's names"
        failed = by_name(editor_tools(failing, names=names)("s1", "/p"))["read_buffer"]
        with pytest.raises(ToolError) as info:
            run(failed, {"path": "x"})
        assert str(info.value) == f"not open; call {open_buffers} for the list", names


def test_failures_become_tool_errors_with_short_messages() -> None:
    tools = by_name(editor_tools(FakeLua({"ok": False, "error": "bad \udcff"}))("s", "/p"))
    with pytest.raises(ToolError) as info:
        run(tools["quickfix"])
    assert str(info.value) == "bad \ufffd"

    crashing = FakeLua(fail=RuntimeError("Lua: stack traceback: /home/u/x.lua:1"))
    tools = by_name(editor_tools(crashing)("s", "/p"))
    with pytest.raises(ToolError) as info:
        run(tools["quickfix"])
    assert str(info.value) == "the editor could not run quickfix"

    tools = by_name(editor_tools(FakeLua([1, 2]))("s", "/p"))
    with pytest.raises(ToolError, match="no answer"):
        run(tools["quickfix"])


def test_the_library_reports_a_failure_as_is_error() -> None:
    tool = by_name(editor_tools(FakeLua({"ok": False, "error": "nope"}))("s", "/p"))["selection"]
    request = ToolRequest(session_id="s", arguments={})
    assert asyncio.run(tools_mod.run(tool, request)) == {
        "content": [{"type": "text", "text": "nope"}],
        "isError": True,
    }


def test_meta_discovery_takes_the_cwd_from_each_request() -> None:
    lua = FakeLua()
    tools = by_name(editor_tools(lua)(None, None))
    run(tools["open_buffers"], cwd="/from/request")
    assert lua.calls[-1][2] == "/from/request"
    with pytest.raises(ToolError, match="working directory is not known"):
        run(tools["open_buffers"])


def test_enabled_and_user_tools() -> None:
    lua_specs = [
        # as user_tool_specs() arrives from Lua (fix_schema made its empty tables objects)
        {
            "name": "todo",
            "description": "The to-do list.",
            "input_schema": {"type": "object", "properties": {}},
        },
        {"name": "bare", "description": None, "input_schema": None},
        {"name": "read_buffer", "description": "shadow", "input_schema": None},
    ]
    lua = FakeLua({"ok": True, "value": {"z": 1, "a": [2]}})
    source = editor_tools(lua, user_tools=lambda: lua_specs)
    tools = by_name(source("s", "/p"))
    assert list(tools)[-2:] == ["todo", "bare"]
    assert tools["read_buffer"].description != "shadow"  # built-in names are reserved
    assert tools["todo"].input_schema == {"type": "object", "properties": {}}
    assert tools["bare"].input_schema is None and tools["bare"].description is None
    assert tools["todo"].wire_method == "_minime.nvim/tools/todo"
    assert run(tools["todo"]) == '{"z":1,"a":[2]}'  # a user tool's keys keep their order
    tools_mod.validate(tools.values())

    only = editor_tools(lua, enabled=lambda s, c: {"selection", "todo"},
                        user_tools=lua_specs)  # fmt: skip
    assert [t.name for t in only("s", "/p")] == ["selection", "todo"]


def test_encode() -> None:
    assert encode("plain text, not JSON") == "plain text, not JSON"
    assert encode({"a": "x\udcffy", "b": [None, True]}) == '{"a":"x\ufffdy","b":[null,true]}'
    assert json.loads(encode({"t": "\x00\n"})) == {"t": "\x00\n"}
    assert encode("lone \udce9") == "lone \ufffd"


def test_builtin_specs_are_plain_data() -> None:
    names = [spec["name"] for spec in builtin_specs()]
    assert len(names) == len(set(names))
