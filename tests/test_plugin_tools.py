"""Editor tools through the whole stack: fake mm → library → host → Lua readers → back."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.plugin_tools import demo_options, yolo_agent_file
from helpers.shared_nvim import SharedNvim
from nvim_harness import REPO
from plugin_harness import Editor

# The built-in tools as the model sees them: one Lua file each (lua/minime/tools/).
BUILTIN = sorted(
    "client_" + p.stem
    for p in (REPO / "lua" / "minime" / "tools").glob("*.lua")
    if p.stem != "init"
)


SHARED = SharedNvim()


@contextlib.contextmanager
def open_editor(project: Path, file_discovery: str | None, **opts: Any) -> Iterator[Any]:
    """The shared Neovim, its agent file naming `file_discovery`; `opts` go to setup()."""
    with SHARED.editor_with(project, demo_options(project, file_discovery, **opts)) as ed:
        yield ed.nvim


@contextlib.contextmanager
def lua_editor(project: Path, file_discovery: str, setup_lua: str) -> Iterator[Editor]:
    """An Editor in `project` whose setup() also gets `setup_lua` (Lua functions and all)."""
    config = yolo_agent_file(project, file_discovery)
    options = f"mm = [==[{REPO / 'demo' / 'mm'}]==], config = [==[{config}]==], {setup_lua}"
    with SHARED.editor_with(project, "{" + options + "}") as ed:
        yield ed


def ask(ed: Editor, text: str, count: int) -> str:
    ed.ask(text)
    ed.wait_done(count)
    return ed.turn_text()


def model_read(text: str, tool: str) -> str:
    """What the fake mm says the model read from `tool` (one line `client_x -> ...`)."""
    marker = f"{tool} -> "
    line = text.split(marker, 1)[1].split("\n■", 1)[0]
    return line.strip()


def listed_tools(text: str) -> list[dict[str, Any]]:
    start_at = text.index("[")
    body = text[start_at : text.rindex("]") + 1]
    return json.loads(body)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "main.py").write_text("print('hello')\n")
    (tmp_path / "outside.txt").write_text("TOP SECRET OUTSIDE\n")
    (root / ".env").write_text("API_KEY=hunter2\n")
    (root / "link.txt").symlink_to(tmp_path / "outside.txt")
    return root


@pytest.mark.parametrize("discovery", ["request", "meta"])
def test_both_discovery_modes_offer_the_editor_tools(project: Path, discovery: str) -> None:
    with open_editor(project, discovery) as nvim:
        nvim.command(f"cd {project}")
        ed = Editor(nvim, project)
        nvim.command(f"edit {project / 'main.py'}")
        tools = listed_tools(ask(ed, "/tools", 1))
        assert [t["name"] for t in tools] == BUILTIN
        read = next(t for t in tools if t["name"] == "client_read_buffer")
        assert "Required parameters: path" in read["description"]
        diag = next(t for t in tools if t["name"] == "client_diagnostics")
        assert "One of: error, warn, info, hint." in json.dumps(diag["inputSchema"])
        answer = json.loads(model_read(ask(ed, "/tool open_buffers", 2), "client_open_buffers"))
        assert answer["cwd"] == os.path.realpath(project)
        assert [b["path"] for b in answer["buffers"]] == ["main.py"]
        stderr = "\n".join(nvim.exec_lua("return require('minime.host').stderr"))
        assert "Traceback" not in stderr


def test_the_agent_file_decides_discovery_and_a_conflict_is_a_warning(project: Path) -> None:
    with open_editor(project, "meta", discovery="request") as nvim:
        nvim.command(f"cd {project}")
        ed = Editor(nvim, project)
        tools = listed_tools(ask(ed, "/tools", 1))
        assert [t["name"] for t in tools] == BUILTIN, "meta mode, as the agent file says"
        notes = ed.notes()
        assert any("conflicts with the agent file" in n for n in notes), notes


def test_two_cwds_get_their_own_tool_sets(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    disabled = (
        "disabled_tools = function(cwd) "
        "if cwd:match('other$') then return { 'quickfix', 'diagnostics' } end return {} end"
    )
    with lua_editor(project, "request", disabled) as ed:
        nvim = ed.nvim
        first = [t["name"] for t in listed_tools(ask(ed, "/tools", 1))]
        nvim.command(f"tcd {other}")
        ed.ask("/tools")
        ed.wait_done(2)
        second = [t["name"] for t in listed_tools(ed.turn_text(os.path.realpath(other)))]
    assert first == BUILTIN
    assert second == [n for n in BUILTIN if n not in ("client_quickfix", "client_diagnostics")]


def test_meta_mode_enforces_disabled_tools_per_call(project: Path) -> None:
    disabled = "disabled_tools = { 'quickfix' }"
    with lua_editor(project, "meta", disabled) as ed:
        text = ask(ed, "/tool quickfix", 1)
        assert model_read(text, "client_quickfix") == (
            "[client tool error: quickfix is turned off in this directory]"
        )
        text = ask(ed, "/tool open_buffers", 2)
        assert model_read(text, "client_open_buffers").startswith('{"cwd"')


def test_a_user_tool_defined_in_lua(project: Path) -> None:
    tool = (
        "tools = { { name = 'word count', description = 'Count the words of a text.',"
        " input_schema = { type = 'object', properties = { text = { type = 'string' } },"
        " required = { 'text' } },"
        " handler = function(args, ctx) return { words = #vim.split(args.text, ' '),"
        " cwd = ctx.cwd } end } }"
    )
    with lua_editor(project, "request", tool) as ed:
        names = [t["name"] for t in listed_tools(ask(ed, "/tools", 1))]
        assert "client_word_count" in names
        text = ask(ed, '/tool client_word_count {"text": "one two three"}', 2)
        answer = json.loads(model_read(text, "client_word_count"))
        assert answer == {"words": 3, "cwd": os.path.realpath(project)}
        text = ask(ed, "/tool client_word_count {}", 3)
        assert "missing required parameters: text" in model_read(text, "client_word_count")


def test_every_schema_reaches_the_agent_with_objects_where_json_schema_wants_them(
    project: Path,
) -> None:
    """An empty Lua table crosses msgpack as an array: lua/minime/tools/init.lua's fix_schema
    (the one fix, for built-in and user tools) makes `properties` and `items` objects."""
    tool = (
        "tools = { { name = 'bare', input_schema = { type = 'object', properties = {} },"
        " handler = function() return 'ok' end },"
        " { name = 'nested', input_schema = { type = 'object', properties = {"
        " opts = { type = 'object', properties = {} }, list = { type = 'array', items = {} } } },"
        " handler = function() return 'ok' end } }"
    )
    with lua_editor(project, "request", tool) as ed:
        tools = {t["name"]: t["inputSchema"] for t in listed_tools(ask(ed, "/tools", 1))}
    assert set(BUILTIN) <= set(tools)
    for name in BUILTIN:
        assert isinstance(tools[name]["properties"], dict), (name, tools[name])
    assert tools["client_open_buffers"]["properties"] == {}
    assert tools["client_bare"]["properties"] == {}
    nested = tools["client_nested"]["properties"]
    assert nested["opts"]["properties"] == {} and nested["list"]["items"] == {}


def test_nothing_outside_the_cwd_reaches_the_agent(project: Path, tmp_path: Path) -> None:
    with open_editor(project, "request") as nvim:
        nvim.command(f"cd {project}")
        ed = Editor(nvim, project)
        for name in ("main.py", "link.txt", ".env", "../outside.txt"):
            nvim.command(f"edit {project / name}")
        nvim.command(f"edit {tmp_path / 'outside.txt'}")
        nvim.command(f"edit {project / 'main.py'}")
        text = ask(ed, "/tool open_buffers", 1)
        answers = [model_read(text, "client_open_buffers")]
        for n, path in enumerate(
            ["../outside.txt", "link.txt", ".env", str(tmp_path / "outside.txt")], 2
        ):
            text = ask(ed, f'/tool read_buffer {{"path": "{path}"}}', n)
            answers.append(model_read(text, "client_read_buffer"))
        everything = "\n".join(answers)
    assert "TOP SECRET" not in everything and "hunter2" not in everything
    assert "outside.txt" not in everything and ".env" not in everything
    assert "link.txt" not in everything.split("client tool error")[0]
    assert json.loads(answers[0])["buffers"] == [
        {
            "path": "main.py",
            "filetype": "python",
            "lines": 1,
            "modified": False,
            "current": True,
            "visible": True,
        }
    ]
    assert all(a.startswith("[client tool error:") for a in answers[1:])


def test_a_tool_call_waits_on_no_one(project: Path) -> None:
    """Neovim answers a probe while the agent runs 50 tool calls at once."""
    with open_editor(project, "request") as nvim:
        nvim.command(f"cd {project}")
        nvim.command(f"edit {project / 'main.py'}")
        ed = Editor(nvim, project)
        bound = ed.probe_bound()
        ed.ask("/parallel 50 open_buffers")
        latencies = ed.probes_while_running()
        print(f"probes: {len(latencies)}, slowest {max(latencies):.3f} s, bound {bound:.3f} s")
        assert max(latencies) < bound, f"Neovim was frozen for {max(latencies):.1f} s"
        lines = [x for x in ed.turn_lines() if x.startswith("client_open_buffers -> ")]
        assert len(lines) == 50
        assert all('"path":"main.py"' in x for x in lines)


def test_a_refused_ask_leaves_the_running_turn_its_selection(project: Path) -> None:
    """The selection is the accepted ask's (kept in Lua where it was made): a refused ask
    changes nothing; the options are read at each call, so a deny added mid-turn holds at once."""
    (project / "ten.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    (project / "notes.md").write_text("notes\n")
    with open_editor(project, "request") as nvim:
        nvim.command(f"cd {project}")
        nvim.command("edit notes.md | edit ten.txt")
        ed = Editor(nvim, project)
        ed.lua("require('minime').ask(...)", "/slow 40\n/tool selection\n/tool open_buffers")
        ed.wait_text("slow 1")
        # Mid-turn the user denies *.md and asks about lines 2-3: that ask is refused.
        ed.lua("require('minime.config').options.deny = { '*.md' }")
        ed.lua("require('minime.config').options.queue = false")
        nvim.command("2,3MiniMeAsk x")
        ed.wait_note("a turn is already running")
        ed.wait_done(1)
        got = [x.split(" -> ", 1)[1] for x in ed.turn_lines() if x.startswith("client_")]
        assert json.loads(got[0])["mode"] == "none", got
        assert [b["path"] for b in json.loads(got[1])["buffers"]] == ["ten.txt"], got
        # An accepted ask with a range: its turn's selection tool answers that range.
        nvim.command("4,5MiniMeAsk /tool selection")
        ed.wait_done(2)
        got = [x.split(" -> ", 1)[1] for x in ed.turn_lines() if x.startswith("client_")]
    answer = json.loads(got[0])
    assert (answer["mode"], answer["start"]["line"], answer["end"]["line"]) == ("line", 4, 5)


def test_a_user_tool_may_wait_without_holding_the_editor(project: Path) -> None:
    """async.wait: the handler waits on a process; its answer reaches the model afterwards."""
    tool = (
        "tools = { { name = 'later', handler = function(args, ctx)"
        " local out = require('minime.editor.async').wait(function(done)"
        " vim.system({ 'sh', '-c', 'sleep 0.3; echo waited' }, {}, done) end)"
        " return vim.trim(out.stdout) .. ' in ' .. vim.fs.basename(ctx.cwd) end } }"
    )
    with lua_editor(project, "request", tool) as ed:
        ed.ask("/tool later")
        while not ed.done():
            assert ed.nvim.eval("1") == 1  # the editor answers while the tool waits
        text = ed.turn_text()
    assert model_read(text, "client_later") == "waited in project"
