"""The Lua → host boundary (nvim/ops.py): each operation's payload decoded once; a malformed one
is logged and said plainly, never a traceback, and the host goes on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from minime.nvim import ops
from nvim_harness import wait_for
from plugin_harness import DEMO_MM, Editor, agent_file, editor_with

NOTIFY = "require('minime.host').notify(...)"


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[Editor]:
    opts = {"mm": DEMO_MM, "config": agent_file(tmp_path, trace=False)}
    with editor_with(tmp_path, opts) as ed:
        yield ed


def test_decode_reads_what_lua_sends() -> None:
    # An empty Lua table crosses msgpack as an array: {} for stop and agent_env.
    assert ops.decode("stop", []) == ops.Stop()
    ask = ops.decode("ask", {"cwd": "/p", "thread": "t1", "prompt": "hi", "agent_env": [],
                             "disabled_tools": [], "ask_id": 3, "ready_timeout": 5,
                             "agent_cmd": ["mm"]})  # fmt: skip
    assert isinstance(ask, ops.Ask)
    assert (ask.cwd, ask.thread, ask.prompt, ask.agent_env) == ("/p", "t1", "hi", {})
    assert ask.disabled_tools == []
    assert (ask.ask_id, ask.ready_timeout, ask.agent_cmd) == (3, 5.0, ["mm"])
    answer = ops.decode("permission_answer", {"id": 2, "option_id": None})
    assert answer == ops.PermissionAnswer(id=2, option_id=None, remember=False)
    setup = ops.decode("setup", {"builtin_tools": [{"name": "x", "input_schema": "{}"}],
                                 "user_tools": []})  # fmt: skip
    assert isinstance(setup, ops.Setup) and setup.builtin_tools == [
        ops.ToolDecl(name="x", input_schema="{}")
    ]
    # A user tool's `input_schema = {}` arrives as []: no schema, as before typing.
    setup = ops.decode("setup", {"user_tools": [{"name": "u", "input_schema": []}]})
    assert isinstance(setup, ops.Setup) and setup.user_tools[0].input_schema is None


@pytest.mark.parametrize(
    ("op", "payload", "says"),
    [
        ("ask", {"prompt": "no cwd"}, "missing required field `cwd`"),
        ("ask", {"cwd": 42}, "Expected `str`, got `int` - at `$.cwd`"),
        ("ask", "not a table", "Expected `object`, got `str`"),
        ("load_session", {"cwd": "/p", "thread": "t"}, "missing required field `session_id`"),
        ("cancel", {"cwd": "/p"}, "missing required field `thread`"),
        ("permission_answer", {"id": "one"}, "Expected `int`, got `str` - at `$.id`"),
        ("tool_result", {"answer": {}}, "missing required field `id`"),
        ("nope", {}, "unknown operation 'nope'"),
        ("setup", {"user_tools": [{"name": "u", "input_schema": [1]}]}, "input_schema must be"),
    ],
)
def test_decode_names_what_is_wrong(op: str, payload: object, says: str) -> None:
    with pytest.raises(ops.Malformed) as info:
        ops.decode(op, payload)
    assert says in str(info.value)


def test_a_malformed_request_is_said_plainly_and_the_host_goes_on(editor: Editor) -> None:
    editor.lua(NOTIFY, "ask", {"cwd": 42, "prompt": "x"})
    note = editor.wait_note("malformed ask request")
    assert note == (
        "minime: a malformed ask request from Lua was ignored: "
        "Expected `str`, got `int` - at `$.cwd`"
    )
    editor.lua(NOTIFY, "permission_answer", {"id": "one"})
    editor.wait_note("malformed permission_answer request")
    editor.ask("still here")
    assert editor.wait_done()["stop_reason"] == "end_turn"
    assert "echo: still here" in editor.turn_text()
    stderr = "\n".join(editor.lua("return require('minime.host').stderr"))
    assert "Traceback" not in stderr
    editor.nvim.command("MiniMeLog")
    wait_for(lambda: editor.lua("return vim.b.minime") == "log", 10)
    log = "\n".join(editor.nvim.current.buffer[:])
    assert "a malformed ask request from Lua: Expected `str`, got `int` - at `$.cwd`" in log


def test_every_operation_has_a_handler_on_the_host() -> None:
    """ops.OPS is the one dispatch table: each handler it names resolves on a real Host (a
    typo would only show when a user ran that command)."""
    import logging
    import operator

    from minime.nvim.host import Host

    handlers = list(logging.getLogger("minime").handlers)
    host = Host(nvim=None)
    try:
        for op, route in ops.OPS.items():
            assert callable(operator.attrgetter(route.handler)(host)), op
    finally:
        host.shutdown()
        logging.getLogger("minime").handlers[:] = handlers


RECORD = """
local host = require('minime.host')
_G.sent = {}
local send = host.notify
host.notify = function(op, payload)
  table.insert(_G.sent, { op = op, keys = vim.tbl_keys(payload), payload = payload })
  return send(op, payload)
end
"""


def test_what_crosses_is_what_the_host_reads(tmp_path: Path) -> None:
    """State stays where it is born: an ask carries the tools turned off (the one field of
    the tools' context the host reads), not the whole context; setup carries no permission
    timeout (the float's, read in Lua)."""
    opts = {"mm": DEMO_MM, "config": agent_file(tmp_path, trace=False),
            "disabled_tools": ["hover"], "permission": {"timeout": 7}}  # fmt: skip
    with editor_with(tmp_path, opts) as editor:
        editor.lua(RECORD)
        editor.lua("require('minime.host').send_setup()")
        editor.ask("hello")
        assert editor.wait_done()["stop_reason"] == "end_turn"
        sent = {s["op"]: s for s in editor.lua("return _G.sent")}
    assert "permission_timeout" not in sent["setup"]["keys"]
    ask = sent["ask"]
    assert "tool_ctx" not in ask["keys"] and "demo" not in ask["keys"], sorted(ask["keys"])
    assert ask["payload"]["disabled_tools"] == ["hover"]
