"""One file per agent (lua/minime/agents/<name>.lua), end to end in a real headless Neovim:
the default "mm" (its binary from $MM_BIN, the offline demo when there is none), an inline
`{ cmd, env }`, a definition of your own dropped on 'runtimepath' and picked by name, a shipped
one by name, and the errors for a name nobody defined or a binary not installed. :checkhealth
reports the agent the same resolver gives an ask."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from nvim_harness import REPO, wait_for
from plugin_harness import ALLOW_CLIENT_TOOLS, DEMO_MM, Editor, agent_file, editor_with

FAKE_MM = REPO / "tests" / "fake_mm.py"
EXAMPLE_AGENT = REPO / "tests/interop/node_modules/@agentclientprotocol/sdk/dist/examples/agent.js"
SHIPPED = "claude, codex, gemini, mm, opencode, qwen, sdk_example"

# A definition of one's own: the fake mm (marking), its agent file and env computed from ctx.
MINE = """
return {
  label = "My agent",
  cmd = function(ctx)
    return { [==[%(mm)s]==], "-acp", "-config", ctx.cwd .. "/agent.yaml" }
  end,
  env = function(ctx)
    return { MINIME_MARK = "mine at " .. ctx.cwd .. " window " .. ctx.config.window.border }
  end,
  agent_file = function(ctx)
    return ctx.cwd .. "/agent.yaml"
  end,
}
"""

# Records $MINIME_MARK next to itself, then is the fake mm.
MARKING_MM = """#!/bin/sh
printf '%%s' "$MINIME_MARK" > "$(dirname "$0")/mark.txt"
exec %(python)s %(fake)s "$@"
"""


def health(ed: Editor) -> str:
    ed.nvim.command("checkhealth minime")
    return "\n".join(ed.nvim.current.buffer[:])


def marking_mm(directory: Path) -> Path:
    script = directory / "marking-mm"
    script.write_text(MARKING_MM % {"python": sys.executable, "fake": FAKE_MM})
    script.chmod(0o755)
    return script


def host_started(ed: Editor) -> bool:
    return ed.lua("return require('minime.host').chan ~= nil")


def test_the_default_agent_is_mm_found_through_mm_bin(tmp_path: Path) -> None:
    config = agent_file(tmp_path)
    with editor_with(tmp_path, {"config": config}) as ed:
        ed.nvim.command(f"let $MM_BIN = '{DEMO_MM}'")
        assert ed.lua("return require('minime.config').options.agent") == "mm"
        done, text = ed.turn("hello")
        assert done["stop_reason"] == "end_turn"
        assert "echo: hello" in text
        assert not any("demo" in n for n in ed.notes()), "mm was found: no demo"
        text = health(ed)
    assert f'OK agent "mm": mm ({REPO}/lua/minime/agents/mm.lua)' in text
    assert f"OK mm: {DEMO_MM} -acp -config {config} ({DEMO_MM})" in text
    assert (tmp_path / "trace.jsonl").exists(), "the fake mm ran with that agent file"


def test_no_mm_anywhere_falls_back_to_the_labelled_offline_demo(tmp_path: Path) -> None:
    with editor_with(tmp_path, {}) as ed:
        ed.nvim.command("let $MM_BIN = ''")
        ed.nvim.command("let $PATH = '/usr/bin:/bin'")
        done, text = ed.turn("/say hello from the demo")
        assert done["stop_reason"] == "end_turn"
        assert "hello from the demo" in text
        assert ed.notes() == ["minime: no mm found — using the offline demo agent"]
        _, text = ed.turn("/say again")
        assert "again" in text
        assert ed.notes() == ["minime: no mm found — using the offline demo agent"], "said once"
        text = health(ed)
    assert (
        f'OK agent "mm": the offline demo agent (demo/mm) ({REPO}/lua/minime/agents/mm.lua)' in text
    )
    assert (
        "WARNING mm not found ($MM_BIN, PATH): asks go to the offline demo agent (demo/mm)" in text
    )
    assert f"OK agent file: {REPO}/demo/agent.yaml (discovery request" in text
    assert "OK live check: mm 0.0.0-scripted" in text


def test_an_inline_definition_runs_its_cmd_with_its_env(tmp_path: Path) -> None:
    script = marking_mm(tmp_path)
    config = agent_file(tmp_path, trace=False)
    agent = {"cmd": [str(script), "-acp", "-config", config], "env": {"MINIME_MARK": "inline"}}
    with editor_with(tmp_path, {"agent": agent}) as ed:
        done, text = ed.turn("hello")
        assert done["stop_reason"] == "end_turn" and "echo: hello" in text
        assert (tmp_path / "mark.txt").read_text() == "inline"
        text = health(ed)
    assert 'OK agent "inline": agent.cmd (inline, from setup())' in text
    assert "mm and its agent file are not used: `agent.cmd` is set" in text


def test_a_definition_dropped_on_the_runtimepath_is_picked_by_name(tmp_path: Path) -> None:
    """Adding an agent is adding a file: lua/minime/agents/mine.lua in a directory on 'rtp'."""
    plugin = tmp_path / "my-plugin"
    (plugin / "lua/minime/agents").mkdir(parents=True)
    mine = plugin / "lua/minime/agents/mine.lua"
    mine.write_text(MINE % {"mm": marking_mm(tmp_path)})
    project = tmp_path / "project"
    project.mkdir()
    agent_file(project, acp={"clientTools": {"discovery": "request"}})
    before = f"vim.opt.runtimepath:prepend([==[{plugin}]==])"
    opts = {"agent": "mine", "permission_rules": ALLOW_CLIENT_TOOLS}
    with editor_with(project, opts, before) as ed:
        done, text = ed.turn("/tool open_buffers")
        assert done["stop_reason"] == "end_turn"
        assert "client_open_buffers ->" in text, "request discovery, read from its agent_file"
        cwd = ed.cwd
        assert (tmp_path / "mark.txt").read_text() == f"mine at {cwd} window rounded"
        names = ed.lua("return require('minime.agents').names()")
        assert names == [
            "claude",
            "codex",
            "gemini",
            "mine",
            "mm",
            "opencode",
            "qwen",
            "sdk_example",
        ]
        text = health(ed)
    assert f'OK agent "mine": My agent ({mine})' in text
    assert f"OK My agent: {tmp_path}/marking-mm -acp -config {cwd}/agent.yaml" in text
    assert f"OK agent file: {cwd}/agent.yaml (discovery request" in text
    assert "OK live check: mm 0.0.0-fake" in text
    assert "ERROR" not in text


def test_an_unknown_agent_name_is_a_clear_error_listing_the_agents(tmp_path: Path) -> None:
    with editor_with(tmp_path, {"agent": "nope"}) as ed:
        ed.nvim.command("MiniMeAsk hello")
        notes = wait_for(ed.notes, 10, message="for a notification")
        said = (
            'unknown agent "nope": the agents are ' + SHIPPED + " (or add "
            "lua/minime/agents/nope.lua, see :h minime-agents)"
        )
        assert notes == ["minime: " + said]
        assert not host_started(ed), "nothing started"
        assert ed.lua("return require('minime.ui.turn').get(...)", ed.cwd) is None, "no float"
        text = health(ed)
    assert 'ERROR unknown agent "nope": the agents are ' + SHIPPED in text
    assert "Set `agent` in setup() to one of them" in text
    assert "live check" not in text


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("return 42\n", "it returns number, not a table"),
        ("return {\n", "unexpected symbol near '<eof>'"),
        ("error('boom', 0)\n", "boom"),
        (
            "return { cmd = function(ctx) return ctx.nope.x end }\n",
            "attempt to index field 'nope' (a nil value)",
        ),
    ],
)
def test_a_broken_definition_is_said_plainly(tmp_path: Path, body: str, why: str) -> None:
    plugin = tmp_path / "p"
    (plugin / "lua/minime/agents").mkdir(parents=True)
    path = plugin / "lua/minime/agents/broken.lua"
    path.write_text(body)
    before = f"vim.opt.runtimepath:prepend([==[{plugin}]==])"
    with editor_with(tmp_path, {"agent": "broken"}, before) as ed:
        ed.nvim.command("MiniMeAsk hello")
        notes = wait_for(ed.notes, 10, message="for a notification")
        assert len(notes) == 1 and why in notes[0], notes
        assert (
            notes[0].startswith(f'minime: agent "broken" ({path}): ') or "broken.lua:1:" in notes[0]
        )
        assert not host_started(ed)


def test_a_shipped_agent_whose_adapter_is_not_installed_says_how_to_install_it(
    tmp_path: Path,
) -> None:
    with editor_with(tmp_path, {"agent": "claude"}) as ed:
        ed.nvim.command("let $PATH = '/usr/bin:/bin'")
        ed.nvim.command("MiniMeAsk hello")
        notes = wait_for(ed.notes, 10, message="for a notification")
        said = "Claude Code (claude-agent-acp): claude-agent-acp is not executable"
        assert notes == ["minime: " + said]
        assert not host_started(ed)
        resolved = ed.lua(
            "local ok, a, problems = pcall(require('minime.agents').resolve, vim.fn.getcwd(),"
            " { collect = true }) return { a.cmd, a.mode }"
        )
        assert resolved == [["claude-agent-acp"], "default"]
        text = health(ed)
    assert "ERROR " + said in text
    assert "Install it: npm install -g @agentclientprotocol/claude-agent-acp" in text


@pytest.mark.parametrize(
    ("name", "cmd"),
    [("codex", ["codex-acp"]), ("qwen", ["qwen", "--acp"]), ("claude", ["claude-agent-acp"])],
)
def test_the_shipped_npm_adapters_resolve_to_their_commands(
    tmp_path: Path, name: str, cmd: list[str]
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / cmd[0]).write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / cmd[0]).chmod(0o755)
    with editor_with(tmp_path, {"agent": name}) as ed:
        ed.nvim.command(f"let $PATH = '{bin_dir}:/usr/bin:/bin'")
        resolved = ed.lua("return require('minime.agents').resolve(vim.fn.getcwd())")
    assert resolved["cmd"] == cmd
    assert resolved["exe"] == str(bin_dir / cmd[0])
    assert resolved["name"] == name and "agent_file" not in resolved


@pytest.mark.skipif(
    not (shutil.which("node") and EXAMPLE_AGENT.exists()),
    reason="the npm example agent is not installed (scripts/setup installs it)",
)
def test_the_sdk_example_agent_by_name(tmp_path: Path) -> None:
    with editor_with(tmp_path, {"agent": "sdk_example"}) as ed:
        ed.ask("change the config")
        ed.wait_text("I'll help you with that.")
        ed.answer_permission("1")
        assert ed.wait_done()["stop_reason"] == "end_turn"
        assert "Perfect! I've successfully updated the configuration." in ed.turn_text()
        text = health(ed)
    assert f"OK the ACP SDK's example agent: node {EXAMPLE_AGENT}" in text
    assert "OK live check: the agent (it sent no agentInfo) answered initialize" in text


@pytest.mark.parametrize(
    ("agent", "said"),
    [
        (42, "`agent` must be a name or { cmd = {...}, env = {...} }, got 42"),
        ({"cmd": "node"}, 'agent.cmd: cmd must be a list of strings, got "node"'),
        (
            {"cmd": ["node"], "env": {"A": 1}},
            "agent.cmd: env must be a table of strings, got { A = 1 }",
        ),
        ({"env": {"A": "b"}}, "agent.cmd: no cmd: the agent's command line is needed"),
        (
            {"cmd": ["node"], "discovery": "push"},
            'discovery must be "meta" or "request", got "push"',
        ),
    ],
)
def test_a_malformed_inline_definition_is_a_clear_error(
    tmp_path: Path, agent: object, said: str
) -> None:
    with editor_with(tmp_path, {"agent": agent}) as ed:
        ed.nvim.command("MiniMeAsk hello")
        assert wait_for(ed.notes, 10, message="for a notification") == ["minime: " + said]
        assert not host_started(ed)
