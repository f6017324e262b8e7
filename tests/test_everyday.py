"""Everyday use, end to end in a real headless Neovim: setup's version check, :checkhealth,
permission rules, "always for this session", the permission timeout, :MiniMeSessions (load and
resume), :MiniMeInstall, and a third-party ACP agent driven through ``agent.cmd``."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.sessions_ui import WATCH_PROMPTS, stored_sessions
from helpers.shared_nvim import SharedNvim
from helpers.wire import permission_answers, trace
from nvim_harness import REPO, wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, running_with

FAKE_MM = REPO / "tests" / "fake_mm.py"
EXAMPLE_AGENT = REPO / "tests/interop/node_modules/@agentclientprotocol/sdk/dist/examples/agent.js"


def requests(directory: Path, method: str) -> list[dict[str, Any]]:
    """The params of each request the client sent with this method."""
    received = trace(directory, "in")
    return [m["params"] for m in received if m.get("method") == method and "id" in m]


def chrome(parts: Any) -> str:
    """A float's title or footer as text (Neovim returns it as [[text, hl], ...])."""
    if isinstance(parts, str):
        return parts
    return "".join(chunk[0] for chunk in parts or [])


SHARED = SharedNvim(WATCH_PROMPTS, each="_G.prompts, _G.picks, _G.pick = {}, {}, nil")


def editor_with(tmp_path: Path, opts: dict[str, Any], before: str = "", fresh: bool = False) -> Any:
    """A context manager: a Neovim set up with ``opts``, in ``tmp_path``; asks go through
    require('minime').ask; waits up to 20 s (30 s for MiniMeTurnDone)."""
    return SHARED.editor_with(
        tmp_path,
        opts,
        before,
        fresh=fresh,
        timeout=20.0,
        done_timeout=30.0,
        ask_command=False,
    )


def health(editor: Editor) -> str:
    editor.nvim.command("checkhealth minime")
    return "\n".join(editor.nvim.current.buffer[:])


needs_node = pytest.mark.skipif(
    not (shutil.which("node") and EXAMPLE_AGENT.exists()),
    reason="the npm example agent is not installed (scripts/setup installs it)",
)


# -- setup ---------------------------------------------------------------------------------------


def test_setup_refuses_an_older_neovim_plainly(tmp_path: Path) -> None:
    with editor_with(tmp_path, {}, "require('minime').min_version = '99.0'") as ed:
        version = ed.lua(
            "local v = vim.version() return ('%d.%d.%d'):format(v.major, v.minor, v.patch)"
        )
        assert ed.notes() == [
            f"minime needs Neovim 99.0 or newer; this is {version}. "
            "Upgrade Neovim (:h minime-setup)."
        ]


# -- :checkhealth minime -------------------------------------------------------------------------


def test_checkhealth_reports_versions_the_agent_and_a_live_initialize(tmp_path: Path) -> None:
    config = agent_file(tmp_path)
    with editor_with(tmp_path, {"mm": FAKE_MM_BIN, "config": config}) as ed:
        text = health(ed)
    version = ".".join(map(str, sys.version_info[:3]))
    from importlib import metadata

    assert "OK Neovim 0.1" in text and "(needs 0.11 or newer)" in text
    assert f"OK Python {version}: {REPO}/.venv/bin/python — the plugin's own .venv" in text
    assert f"OK pynvim {metadata.version('pynvim')}" in text
    assert "OK the ACP SDK (agent-client-protocol) 0.12.1" in text
    assert f"OK msgspec {metadata.version('msgspec')}" in text
    assert f"OK mm: {FAKE_MM_BIN}" in text
    assert f"OK agent file: {config} (discovery request: acp.clientTools.discovery)" in text
    assert "OK live check: mm 0.0.0-fake (mini-me (fake)) answered initialize in" in text
    assert "capabilities: loadSession" in text
    assert "ERROR" not in text and "WARNING" not in text
    sent = [m.get("method") for m in trace(tmp_path, "in") if "method" in m]
    assert sent == ["initialize", "session/new"], "the live check opens a session, no more"
    assert "opened a session in" in text
    assert running_with(config) == [], "the live check stopped the agent"


def test_checkhealth_warns_when_discovery_disagrees_with_the_agent_file(tmp_path: Path) -> None:
    config = agent_file(tmp_path)
    with editor_with(tmp_path, {"mm": FAKE_MM_BIN, "config": config, "discovery": "meta"}) as ed:
        text = health(ed)
    assert 'WARNING discovery = "meta" in setup() disagrees with the agent file ("request")' in text
    assert "Remove `discovery` from setup()," in text
    assert f"or set acp.clientTools.discovery: meta in {config}." in text


def test_checkhealth_says_how_to_fix_a_missing_python(tmp_path: Path) -> None:
    config = agent_file(tmp_path)
    opts = {"python": str(tmp_path / "no-python"), "mm": FAKE_MM_BIN, "config": config}
    with editor_with(tmp_path, opts) as ed:
        text = health(ed)
    assert f"ERROR {tmp_path}/no-python cannot run the host's health check" in text
    assert "Run :MiniMeInstall (or ./scripts/setup in the plugin's directory)." in text


def test_checkhealth_says_how_to_fix_a_missing_mm_and_agent_file(tmp_path: Path) -> None:
    with editor_with(tmp_path, {"mm": str(tmp_path / "no-mm")}) as ed:
        text = health(ed)
    assert f"ERROR mm not found: {tmp_path}/no-mm is not executable" in text
    assert "Fix `mm` in setup(), or remove it to use $MM_BIN, then `mm` on PATH" in text
    assert f"ERROR no agent file found for {os.path.realpath(tmp_path)}" in text
    assert "Set `config` in setup() to mm's agent file" in text


def test_checkhealth_reports_an_agent_that_dies_and_one_that_never_answers(
    tmp_path: Path,
) -> None:
    dying = agent_file(tmp_path, name="dying.yaml", fake={"exit_before_initialize": 3})
    with editor_with(tmp_path, {"mm": FAKE_MM_BIN, "config": dying}) as ed:
        text = health(ed)
    assert "ERROR live check: the agent did not start:" in text
    assert "exit status 3" in text and "fatal: cannot reach the model server" in text
    assert f"Run `{FAKE_MM_BIN} -acp -config {dying}` in a shell to see what it says" in text

    deaf = agent_file(tmp_path, name="deaf.yaml", fake={"never_initialize": True})
    before = "package.loaded['minime.health'] = nil; require('minime.health').live_timeout = 2"
    with editor_with(tmp_path, {"mm": FAKE_MM_BIN, "config": deaf}, before) as ed:
        text = health(ed)
    assert "did not answer initialize within 2 s" in text
    assert running_with(deaf) == []


def test_checkhealth_with_agent_cmd(tmp_path: Path) -> None:
    """A third-party agent: no mm, no agent file; the live check still runs."""
    if not (shutil.which("node") and EXAMPLE_AGENT.exists()):
        pytest.skip("the npm example agent is not installed")
    opts = {"agent": {"cmd": ["node", str(EXAMPLE_AGENT)]}}
    with editor_with(tmp_path, opts) as ed:
        text = health(ed)
    assert f"OK agent.cmd: node {EXAMPLE_AGENT} ({shutil.which('node')})" in text
    assert "mm and its agent file are not used: `agent.cmd` is set" in text
    assert "OK live check: the agent (it sent no agentInfo) answered initialize" in text


# -- permissions ---------------------------------------------------------------------------------


def test_rules_answer_without_a_float(tmp_path: Path) -> None:
    rules = [
        {"pattern": "bash: git status*", "decision": "allow"},
        {"pattern": "client: *", "decision": "allow"},
        {"pattern": "bash: rm *", "decision": "reject"},
    ]
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path), "permission_rules": rules}
    with editor_with(tmp_path, opts) as ed:
        ed.ask("/bash git status -s\n/tool open_buffers\n/bash rm -rf build")
        assert ed.wait_done()["stop_reason"] == "end_turn"
        text = ed.turn_text()
        assert "bash -> ran: git status -s" in text
        assert "client_open_buffers ->" in text
        assert "bash -> [bash rejected by user]" in text  # the agent's words, and ours:
        assert "permission 'bash: rm -rf build': rejected by rule 'bash: rm *'" in text
        assert ed.prompts() == [], "no float opened"
    assert permission_answers(tmp_path) == [
        ("bash: git status -s", "allow"),
        ("client: open_buffers", "allow"),
        ("bash: rm -rf build", "reject"),
    ]


def test_a_remembers_always_for_this_session_on_the_client_side(tmp_path: Path) -> None:
    with editor_with(tmp_path, {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}) as ed:
        ed.ask("/bash make\n/bash make\n/bash make test")
        win = ed.permission_win()
        assert "a allow again" in chrome(ed.float_config(win)["footer"])
        ed.press(win, "a")
        win = ed.permission_win(other_than=win)  # another title: asked again
        assert ed.float_lines(win)[0] == "bash: make test"
        ed.press(win, "1")
        ed.wait_done()
        assert ed.prompts() == ["bash: make", "bash: make test"]
        # Remembered per session: a new conversation asks again.
        ed.nvim.command("MiniMeReset")
        ed.ask("/bash make")
        ed.press(ed.permission_win(), "3")
        ed.wait_done(2)
        assert ed.prompts() == ["bash: make", "bash: make test", "bash: make"]
    # The agent got its allow-once option each time: the memory is the client's.
    assert permission_answers(tmp_path) == [
        ("bash: make", "allow"),
        ("bash: make", "allow"),
        ("bash: make test", "allow"),
        ("bash: make", "reject"),
    ]


def test_an_unanswered_prompt_is_rejected_after_the_timeout(tmp_path: Path) -> None:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path), "permission": {"timeout": 2}}
    with editor_with(tmp_path, opts) as ed:
        ed.ask("/bash rm -rf build")
        win = ed.permission_win()
        seen = {chrome(ed.float_config(win)["title"])}

        def counted_down() -> bool:
            if ed.lua("return vim.api.nvim_win_is_valid(...)", win):
                seen.add(chrome(ed.float_config(win)["title"]))
            return any("rejected in 1 s" in t for t in seen)

        wait_for(counted_down, 5, message="for the countdown")
        assert any("rejected in 2 s" in t for t in seen)
        assert ed.wait_done()["stop_reason"] == "end_turn"
        assert "bash -> [bash rejected by user]" in ed.turn_text()  # the agent's words; ours:
        assert "permission 'bash: rm -rf build': rejected, no answer within 2 s" in ed.turn_text()
        assert ed.lua("return require('minime.ui.permission').win()") is None
        ed.wait_note("no answer within 2 s — rejected: bash: rm -rf build")
    assert permission_answers(tmp_path) == [("bash: rm -rf build", "reject")]


def test_no_timeout_by_default(tmp_path: Path) -> None:
    with editor_with(tmp_path, {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}) as ed:
        ed.ask("/bash ls")
        win = ed.permission_win()
        title = chrome(ed.float_config(win)["title"])
        assert "rejected in" not in title
        ed.press(win, "1")
        ed.wait_done()


def test_a_timeout_from_a_second_setup_applies_to_the_next_prompt(tmp_path: Path) -> None:
    """setup() again while the host runs: the host gets the new permission options, so the
    next prompt counts down without a restart. Catches options copied once at host start."""
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}
    with editor_with(tmp_path, opts) as ed:
        ed.ask("/bash ls")
        win = ed.permission_win()
        assert "rejected in" not in chrome(ed.float_config(win)["title"])
        ed.press(win, "1")
        ed.wait_done()
        ed.lua("require('minime').setup(...)", {**opts, "permission": {"timeout": 30}})
        ed.ask("/bash ls -a")
        win = ed.permission_win()
        assert "rejected in 30 s" in chrome(ed.float_config(win)["title"])
        ed.press(win, "1")
        ed.wait_done()


# -- :MiniMeSessions -----------------------------------------------------------------------------


def test_sessions_lists_and_loads_one_with_its_history(tmp_path: Path) -> None:
    cwd = os.path.realpath(tmp_path)
    config = agent_file(tmp_path, fake={"load_sessions": stored_sessions(cwd)})
    with editor_with(tmp_path, {"mm": FAKE_MM_BIN, "config": config}) as ed:
        ed.nvim.command("MiniMeSessions")
        picks = wait_for(lambda: ed.lua("return _G.picks"), 20, message="for vim.ui.select")
        assert picks == [
            {
                "prompt": "Reopen a session (its history replays):",
                "labels": [
                    "Fix the parser · 2025-01-02T10:00:00Z · sess-parser",
                    "Docs · sess-docs",
                ],
            }
        ]
        ed.lua("_G.pick(1)")
        ed.wait_done()
        text = ed.turn_text()
        assert text.index("(loaded session Fix the parser)") < text.index(
            "why does the parser drop comments?"
        )
        assert text.index("look at the lexer first") < text.index(
            "The lexer skips them before the parser sees them."
        )
        assert "the next ask here continues it" in text
        # The next ask continues the loaded session.
        ed.ask("and now?")
        assert ed.wait_done(2)["session_id"] == "sess-parser"
        assert "echo: and now?" in ed.turn_text()
    loads = requests(tmp_path, "session/load")
    assert [(p["sessionId"], p["cwd"]) for p in loads] == [("sess-parser", cwd)]
    assert [p["sessionId"] for p in requests(tmp_path, "session/prompt")] == ["sess-parser"]
    assert requests(tmp_path, "session/new") == [], "no new session was opened"


def test_sessions_says_so_when_there_are_none(tmp_path: Path) -> None:
    with editor_with(tmp_path, {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path)}) as ed:
        ed.nvim.command("MiniMeSessions")
        ed.wait_note(f"minime: no earlier sessions of mini-me (fake) for {ed.cwd}")
        assert ed.lua("return _G.picks") == []


RESUME_ONLY = """
import sys

sys.path.insert(0, {tests!r})
import fake_mm


class ResumeOnly(fake_mm.FakeMM):
    async def initialize(self, *args, **kwargs):
        answer = await super().initialize(*args, **kwargs)
        caps = {{"loadSession": False, "sessionCapabilities": {{"list": {{}}, "resume": {{}}}}}}
        return {{**answer, "agentCapabilities": caps}}


fake_mm.FakeMM = ResumeOnly
sys.exit(fake_mm.main(sys.argv[1:]))
"""


def test_sessions_resume_when_the_agent_offers_resume_but_not_load(tmp_path: Path) -> None:
    """An ACP agent other than mm, through agent.cmd: session/resume, no history replayed."""
    script = tmp_path / "resume_only.py"
    script.write_text(RESUME_ONLY.format(tests=str(REPO / "tests")))
    cwd = os.path.realpath(tmp_path)
    config = agent_file(tmp_path, fake={"load_sessions": stored_sessions(cwd)})
    cmd = [sys.executable, str(script), "-acp", "-config", config]
    with editor_with(tmp_path, {"agent": {"cmd": cmd}}) as ed:
        ed.nvim.command("MiniMeSessions")
        picks = wait_for(lambda: ed.lua("return _G.picks"), 20, message="for vim.ui.select")
        assert picks[0]["prompt"] == "Resume a session:"
        ed.lua("_G.pick(2)")
        ed.wait_done()
        text = ed.turn_text()
        assert "(loaded session Docs)" in text
        assert "the agent does not replay history on resume" in text
        ed.ask("hello again")
        assert ed.wait_done(2)["session_id"] == "sess-docs"
    assert [p["sessionId"] for p in requests(tmp_path, "session/resume")] == ["sess-docs"]
    assert requests(tmp_path, "session/load") == []


# -- another ACP agent: the npm SDK's example, through agent.cmd ----------------------------------


@needs_node
def test_the_npm_example_agent_streams_calls_tools_and_asks_permission(tmp_path: Path) -> None:
    opts = {"agent": {"cmd": ["node", str(EXAMPLE_AGENT)], "env": {"MINIME_TEST": "1"}}}
    with editor_with(tmp_path, opts) as ed:
        ed.nvim.command("MiniMeAsk change the config")
        ed.wait_text("I'll help you with that.")
        ed.wait_text("Reading project files")
        win = ed.permission_win()
        lines = ed.float_lines(win)
        assert lines[0] == "Modifying critical configuration file"
        assert "1. Allow this change — allow once" in lines
        assert "2. Skip this change — reject once" in lines
        # Its options have no "always": `a` is the client's own memory.
        assert "a allow again" in chrome(ed.float_config(win)["footer"])
        ed.press(win, "1")
        done = ed.wait_done()
        assert done["stop_reason"] == "end_turn"
        text = ed.turn_text()
        assert "Perfect! I've successfully updated the configuration." in text
        assert "Reading project files" in text and "Modifying critical configuration file" in text


@needs_node
def test_the_npm_example_agent_cancel_and_a_rule(tmp_path: Path) -> None:
    rules = [{"pattern": "Modifying *", "decision": "reject"}]
    opts = {"agent": {"cmd": ["node", str(EXAMPLE_AGENT)]}, "permission_rules": rules}
    with editor_with(tmp_path, opts) as ed:
        ed.ask("first")
        ed.wait_text("I'll help you with that.")
        ed.nvim.command("MiniMeCancel")
        assert ed.wait_done()["stop_reason"] == "cancelled"
        ed.ask("second")
        assert ed.wait_done(2)["stop_reason"] == "end_turn"
        assert "I'll skip the configuration update." in ed.turn_text()
        assert ed.prompts() == [], "the rule answered: no float"


@needs_node
def test_sessions_say_plainly_when_the_agent_keeps_none(tmp_path: Path) -> None:
    with editor_with(tmp_path, {"agent": {"cmd": ["node", str(EXAMPLE_AGENT)]}}) as ed:
        ed.nvim.command("MiniMeSessions")
        note = ed.wait_note("keeps no sessions to reopen")
        assert "offers neither session/list nor session/load" in note


# -- :MiniMeInstall ------------------------------------------------------------------------------


def test_install_runs_the_setup_script_into_the_plugins_venv(tmp_path: Path) -> None:
    with editor_with(tmp_path, {}, fresh=True) as ed:  # no host runs yet
        ed.nvim.command("MiniMeInstall")
        assert ed.notes()[0] == f"minime: installing the Python host into {REPO}/.venv …"
        ed.wait_note("minime: installed:", timeout=300)
        assert ed.notes()[1] == f"minime: installed: {REPO}/.venv/bin/python"
        assert ed.lua("return require('minime.host').python()") == f"{REPO}/.venv/bin/python"
