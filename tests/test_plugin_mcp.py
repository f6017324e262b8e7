"""The editor tools over MCP in the plugin, end to end: a real Neovim, the host, the bridge the
agent spawns, the Lua tools; the agent is tests/agents/mcp_agent.py, an MCP client of the
servers each session is given. What the agent reports reading is what a model would read."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from plugin_harness import MCP_BRIDGE as BRIDGE
from plugin_harness import Editor, editor_with, process_gone, running_with, wait_for

AGENT = Path(__file__).with_name("agents") / "mcp_agent.py"


@contextlib.contextmanager
def mcp_editor(cwd: Path, **opts: Any) -> Iterator[Editor]:
    agent = {"cmd": [sys.executable, str(AGENT)], "label": "mcp-agent", **opts.pop("agent", {})}
    with editor_with(cwd, {"agent": agent, **opts}, timeout=30.0, ask_command=False) as ed:
        yield ed


def said(ed: Editor, prompt: Any, word: str) -> Any:
    done, _ = ed.turn(prompt if isinstance(prompt, str) else json.dumps(prompt))
    assert not done.get("error"), done
    text = "".join(ed.turn_lines())
    assert f"{word} " in text, text
    return json.JSONDecoder().raw_decode(text.rsplit(f"{word} ", 1)[1])[0]


def call(ed: Editor, tool: str, **arguments: Any) -> dict[str, Any]:
    return said(ed, {"tool": tool, "arguments": arguments}, "MCP")


def project(tmp_path: Path) -> Path:
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "a.txt").write_text("on disk\n")
    (tmp_path / "outside.txt").write_text("OUTSIDE_SECRET\n")
    return cwd


def test_the_agent_reads_the_unsaved_buffer_over_mcp_and_nothing_outside(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    with mcp_editor(cwd) as ed:
        ed.nvim.command(f"edit {cwd / 'a.txt'}")
        ed.nvim.current.buffer[:] = ["unsaved text"]
        ed.nvim.command(f"badd {tmp_path / 'outside.txt'}")
        tools = said(ed, "tools", "TOOLS")
        read = call(ed, "read_buffer", path="a.txt")
        outside = call(ed, "read_buffer", path=str(tmp_path / "outside.txt"))
        listed = call(ed, "open_buffers")
        caps = said(ed, "caps", "CAPS")
    assert "read_buffer" in tools["minime"] and "open_buffers" in tools["minime"]
    assert read["result"]["isError"] is False
    assert json.loads(read["result"]["content"][0]["text"])["text"] == "unsaved text"
    assert outside["result"]["isError"] is True
    assert "OUTSIDE_SECRET" not in json.dumps(outside) and "outside.txt" not in json.dumps(listed)
    assert "org.mini-me/tools" not in json.dumps(caps)  # no model sees a tool twice


def test_user_and_definition_servers_reach_every_session_in_acp_shape(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    own = {"name": "mine", "command": "/bin/true", "args": ["x"], "env": {"K": "v"}}
    defs = {"name": "defs", "command": "/bin/true"}
    web = {"name": "web", "url": "http://127.0.0.1:9/mcp", "headers": {"A": "b"}}
    with mcp_editor(cwd, agent={"mcp_servers": [defs]}, mcp_servers=[own, web]) as ed:
        servers = said(ed, "servers", "SERVERS")
        note = ed.wait_note("'web' was not passed")
    by_name = {s["name"]: s for s in servers}
    assert by_name["mine"] == {
        "name": "mine",
        "command": "/bin/true",
        "args": ["x"],
        "env": [{"name": "K", "value": "v"}],
    }
    assert by_name["defs"]["command"] == "/bin/true" and "web" not in by_name
    assert "minime" in by_name
    assert "http" in note


def test_editor_tools_client_or_none_gives_no_mcp_server(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    for how in ("client", "none"):
        with mcp_editor(cwd, editor_tools=how) as ed:
            servers = said(ed, "servers", "SERVERS")
            caps = said(ed, "caps", "CAPS")
        assert [s["name"] for s in servers] == [], how
        assert ("org.mini-me/tools" in json.dumps(caps)) == (how == "client"), caps


def test_no_bridge_is_left_after_stop_or_quit(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    with mcp_editor(cwd) as ed:
        said(ed, "tools", "TOOLS")
        assert running_with(BRIDGE), "the bridge runs while its session does"
        (agent,) = map(int, ed.lua("return vim.tbl_keys(require('minime.host').agents)"))
        ed.nvim.command("MiniMeStop")
        wait_for(lambda: not running_with(BRIDGE), 10, message="for the bridge to end (stop)")
        wait_for(lambda: process_gone(agent), 10, message="for the agent to end (stop)")
        ed.wait_note("agent stopped")  # the stop is over: an ask now starts a new agent
        said(ed, "tools", "TOOLS")  # a new agent, a new session, a new bridge
        assert running_with(BRIDGE)
        with contextlib.suppress(OSError, EOFError):
            ed.nvim.command("qa!")
    wait_for(lambda: not running_with(BRIDGE), 10, message="for the bridge to end (:qa!)")


def health(ed: Editor) -> str:
    ed.nvim.command("checkhealth minime")
    return "\n".join(ed.nvim.current.buffer[:])


def test_checkhealth_says_which_path_each_agent_takes_and_starts_the_bridge(
    tmp_path: Path,
) -> None:
    cwd = project(tmp_path)
    web = {"name": "web", "url": "http://127.0.0.1:9/mcp"}
    with mcp_editor(cwd, mcp_servers=[web]) as ed:
        text = health(ed)
    assert 'agent "inline" gets the editor tools over an MCP server of each session' in text
    per_agent = "claude: mcp, codex: mcp, gemini: mcp, mm: client, opencode: mcp, qwen: mcp"
    assert f"per agent: {per_agent}, sdk_example: mcp" in text
    assert "the editor's MCP server starts: tools/list answered in" in text, text
    assert "MCP server web is not passed: the agent does not take http servers" in text
    with mcp_editor(cwd, editor_tools="client") as ed:
        text = health(ed)
    assert "over mm's client-tools extension" in text and "from setup{ editor_tools }" in text
    assert "MCP server starts" not in text


def test_reset_ends_the_old_sessions_server_and_the_new_session_gets_its_own(
    tmp_path: Path,
) -> None:
    cwd = project(tmp_path)
    with mcp_editor(cwd) as ed:
        said(ed, "tools", "TOOLS")
        (old,) = said(ed, "pids", "PIDS")
        ed.nvim.command("MiniMeReset")
        wait_for(lambda: process_gone(old), 10, message="for the old session's bridge to end")
        (new,) = said(ed, "pids", "PIDS")  # the same agent, a new session
        assert new != old and not process_gone(new)
        read = call(ed, "open_buffers")
    assert read["result"]["isError"] is False


def test_stop_while_the_agent_starts_its_server_leaves_no_bridge(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    with mcp_editor(cwd, agent={"env": {"MCP_AGENT_SLOW_NEW": "30"}}) as ed:
        ed.ask("tools")
        wait_for(lambda: running_with(BRIDGE), 20, message="for the agent to start the bridge")
        assert not ed.done(), "the session is still opening"
        ed.nvim.command("MiniMeStop")
        wait_for(lambda: not running_with(BRIDGE), 10, message="for the bridge to end")
        assert ed.wait_done(1)["stop_reason"] == "stopped"


def test_a_bad_editor_tools_or_server_is_a_plain_message_and_nothing_starts(
    tmp_path: Path,
) -> None:
    cwd = project(tmp_path)
    with mcp_editor(cwd, editor_tools="both") as ed:
        ed.ask("tools")
        note = ed.wait_note("editor_tools")
        assert 'editor_tools must be "client", "mcp" or "none", got "both"' in note
        assert not ed.lua("return require('minime.host').chan ~= nil"), "no host was started"
    with mcp_editor(cwd, mcp_servers=[{"name": "x"}]) as ed:
        ed.ask("tools")
        done = ed.wait_done(1)
    assert "mcp_servers[1] (x): a server needs a command (stdio) or a url (http)" in done["error"]


USER_TOOLS = """
local options = vim.deepcopy(require('minime.config').options)
options.tools = { {
  name = "git_branch", description = "The current git branch.",
  input_schema = { type = "object", properties = { x = { type = "string" } } },
  handler = function(args, ctx) return "branch in " .. ctx.cwd .. " " .. (args.x or "") end,
}, {
  name = "broken", handler = function() error("no branch here") end,
} }
require('minime').setup(options)
"""


def test_your_own_tools_go_over_mcp_with_their_schema_and_failures(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    with mcp_editor(cwd) as ed:
        ed.lua(USER_TOOLS)
        tools = said(ed, "tools", "TOOLS")
        ok = call(ed, "git_branch", x="main")
        failed = call(ed, "broken")
    assert {"git_branch", "broken", "read_buffer"} <= set(tools["minime"])
    assert ok["result"] == {
        "content": [{"type": "text", "text": f"branch in {ed.cwd} main"}],
        "isError": False,
    }
    assert failed["result"]["isError"] is True
    assert "no branch here" in failed["result"]["content"][0]["text"]


STOP_SETUP_ASK = """
require('minime').stop()
local options = vim.deepcopy(require('minime.config').options)
options.editor_tools = ...
require('minime').setup(options)
require('minime').ask("servers")
"""


def test_an_ask_right_after_stop_and_setup_gets_a_session_of_the_new_setup(
    tmp_path: Path,
) -> None:
    """:MiniMeStop, setup{ editor_tools = … }, and an ask at once (one Lua call: the host reads
    them back to back, the stop still ending the old agent): the ask's session is a new one, of
    the new setup, every time. It once joined the session being closed ("the agent connection
    is closed", or no editor server), or the stop SIGTERMed the agent being started for it (as
    an orphan of the old one): about one run in three, from outside."""
    cwd = project(tmp_path)
    with mcp_editor(cwd, editor_tools="client") as ed:
        assert said(ed, "servers", "SERVERS") == []
        for run, how in enumerate(["mcp", "client", "mcp", "client", "mcp", "mcp"], start=2):
            ed.lua(STOP_SETUP_ASK, how)
            done = ed.wait_done(run)
            text = "".join(ed.turn_lines())
            assert not done.get("error") and "SERVERS " in text, (run, done, text)
            servers = json.JSONDecoder().raw_decode(text.rsplit("SERVERS ", 1)[1])[0]
            names = [server["name"] for server in servers]
            assert names == (["minime"] if how == "mcp" else []), (run, how, servers)
