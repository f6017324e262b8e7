"""Interop with Gemini CLI (npm ``@google/gemini-cli`` 0.61, ``gemini --acp``), a real agent
nobody here wrote, started by the shipped definition (lua/minime/agents/gemini.lua) and driven
by a scripted model on loopback (tests/agents/gemini_model.py, reached through
``GOOGLE_GEMINI_BASE_URL`` with ``GEMINI_API_KEY`` and ``security.auth.selectedType =
"gemini-api-key"`` in its settings, under ``GEMINI_CLI_HOME``).

What Gemini CLI 0.61 does, seen here: it starts in its mode ``default`` (it asks before a
command, options ``proceed_always``, ``proceed_once``, ``cancel``); it sends no ``messageId``;
it advertises ``loadSession`` but no ``session/list`` (``sessionCapabilities: {}``); it shows
the editor's MCP tools to its model as ``mcp_minime_<tool>`` — but only in a folder it trusts:
with folder trust on (its default) and this folder not trusted, it drops the client's
``mcpServers`` without a word. scripts/setup installs it (``npm install`` in tests/interop);
without node or the package the tests are skipped, except in CI.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agents.gemini_model import ModelServer, Reply, last_call, serving, user_text
from nvim_harness import REPO, wait_for
from plugin_harness import (
    MCP_BRIDGE,
    Editor,
    editor_with,
    quit_leaves_no_bridge,
    quit_with_one_agent,
    running_with,
    wait_tree_gone,
)

BIN = REPO / "tests/interop/node_modules/.bin"
GEMINI = BIN / "gemini"
NODE = shutil.which("node")

if not (NODE and GEMINI.exists()) and not os.environ.get("CI"):
    pytest.skip(
        "needs node and the npm packages of tests/interop (./scripts/setup)",
        allow_module_level=True,
    )

MCP_READ = "mcp_minime_read_buffer"  # Gemini CLI's name for the editor's read_buffer


def prompt_of(contents: list[dict[str, Any]]) -> str:
    """The user's prompt: Gemini CLI puts its session context before it, in the same turn."""
    return user_text(contents).rsplit("</session_context>", 1)[-1]


def script(contents: list[dict[str, Any]]) -> Reply:
    """Asked "run …": that command (its run_shell_command); "read …": the editor's read_buffer
    of that path; "plan first": its enter_plan_mode; after a function's response, or for
    anything else: "All done."."""
    step, prompt = last_call(contents), prompt_of(contents)
    if step is None and prompt.startswith("run "):
        command = prompt.removeprefix("run ")
        return Reply(text="Running it.", tool="run_shell_command", arguments={"command": command})
    if step is None and prompt.startswith("read "):
        return Reply(tool=MCP_READ, arguments={"path": prompt.removeprefix("read ")})
    if step is None and prompt == "plan first":
        return Reply(tool="enter_plan_mode", arguments={"reason": "to think first"})
    return Reply(text="All done.")


def settings(trust_check: bool) -> dict[str, Any]:
    """Gemini CLI's settings: the API key's auth, nothing else from the network; folder trust
    as asked (off: it trusts every folder)."""
    return {
        "security": {
            "auth": {"selectedType": "gemini-api-key"},
            "folderTrust": {"enabled": trust_check},
        },
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }


@contextlib.contextmanager
def gemini_editor(
    tmp_path: Path,
    next_step: Callable[[list[dict[str, Any]]], Reply] = script,
    trust_check: bool = False,
    **opts: Any,
) -> Iterator[tuple[Editor, ModelServer]]:
    """Neovim with ``agent = "gemini"`` (the shipped definition), gemini on PATH, its home
    (``GEMINI_CLI_HOME``) a fresh directory whose settings name the scripted model's auth."""
    cwd = tmp_path / "project"
    home = tmp_path / "gemini"
    cwd.mkdir()
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings(trust_check)))
    (cwd / "notes.txt").write_text("saved text\n")
    with serving(next_step) as model:
        before = (
            f"vim.env.PATH = [==[{BIN}]==] .. ':' .. vim.env.PATH\n"
            f"vim.env.GEMINI_CLI_HOME = [==[{home}]==]\n"
            f"vim.env.GOOGLE_GEMINI_BASE_URL = [==[{model.base_url}]==]\n"
            "vim.env.GEMINI_API_KEY = 'scripted'\n"
        )
        opts.setdefault("agent", "gemini")
        with editor_with(cwd, opts, before, timeout=60.0) as ed:
            yield ed, model


def tool_lines(ed: Editor) -> list[str]:
    return [line for line in ed.turn_lines() if line.startswith("⚙ ")]


def test_gemini_streams_asks_runs_and_cancels(tmp_path: Path) -> None:
    with gemini_editor(tmp_path) as (ed, model):
        done, text = ed.turn("hello")
        assert done["stop_reason"] == "end_turn", done
        assert "hello" in [prompt_of(body["contents"]) for body in model.turns()]
        assert text.rstrip().endswith("All done.\n\n■ done (end_turn)"), text

        ed.ask("run touch made.txt")
        shown = ed.permission_text().splitlines()
        assert shown[0] == "touch made.txt", shown
        assert [x for x in shown if x[:2] in ("1.", "2.", "3.")] == [
            "1. Allow for this session — Gemini CLI (gemini --acp) will not ask again for this"
            " kind of request — its own rule",
            "2. Allow — allow once",
            "3. Reject — reject once",
        ], shown
        assert not Path(ed.cwd, "made.txt").exists(), "nothing ran before the answer"
        ed.answer_permission("2")
        assert ed.wait_done(2, timeout=60)["stop_reason"] == "end_turn"
        assert Path(ed.cwd, "made.txt").exists()
        assert tool_lines(ed) == ["⚙ touch made.txt  [execute] completed"]
        # Gemini CLI sends no messageId: its text after the command is a message of its own,
        # not glued to the one before it ("Running it.All done.").
        lines = ed.turn_lines()
        assert "Running it." in lines and "All done." in lines, lines
        assert ed.turn_errors() == []

        # :MiniMeCancel while its prompt is open: the prompt goes, the turn ends cancelled,
        # and the command it asked about never runs.
        ed.ask("run touch never.txt")
        ed.permission_win()
        ed.nvim.command("MiniMeCancel")
        assert ed.wait_done(3, timeout=60)["stop_reason"] == "cancelled"
        wait_for(lambda: not ed.permission_open(), 10, message="for the prompt to close")
        assert not Path(ed.cwd, "never.txt").exists()

        # It can load a session but lists none: no session/list is sent (I5).
        ed.nvim.command("MiniMeSessions")
        note = ed.wait_note("does not list its sessions")
        assert note.startswith("minime: Gemini CLI does not list its sessions"), note
        assert not [n for n in ed.notes() if "failed" in n or "Method not found" in n]

        pid = quit_with_one_agent(ed)
    wait_tree_gone(pid, "gemini")


def test_geminis_model_reads_the_unsaved_buffer_over_mcp_and_sees_its_names(
    tmp_path: Path,
) -> None:
    """In a folder it trusts, Gemini CLI spawns the editor's MCP server and calls
    ``mcp_minime_read_buffer`` (asking first): what its model reads is the buffer's unsaved text;
    the tools' descriptions name each other as its model sees them (I1)."""
    (tmp_path / "outside.txt").write_text("OUTSIDE_SECRET\n")
    with gemini_editor(tmp_path) as (ed, model):
        ed.nvim.command("edit notes.txt")
        ed.nvim.current.buffer[:] = ["unsaved words"]
        ed.nvim.command(f"badd {tmp_path / 'outside.txt'}")
        ed.ask("read notes.txt")
        shown = ed.permission_text().splitlines()
        assert shown[0] == "read_buffer (minime MCP Server)", shown
        options = [x.split(" — ")[0] for x in shown if x[:2] in ("1.", "2.", "3.", "4.")]
        assert options == [
            "1. Allow all server tools for this session",
            "2. Allow tool for this session",
            "3. Allow",
            "4. Reject",
        ], shown
        ed.answer_permission("3")
        assert ed.wait_done(1, timeout=60)["stop_reason"] == "end_turn"
        read = model.function_responses()[-1]
        assert read["name"] == MCP_READ
        # Gemini CLI wraps what a tool answers in <untrusted_context>; the buffer's text in it.
        assert '"text":"unsaved words"' in read["response"]["output"], read

        offered = {
            tool["name"]: tool
            for body in model.turns()
            for group in body["tools"]
            for tool in group.get("functionDeclarations") or []
        }
        assert "mcp_minime_open_buffers" in offered[MCP_READ]["description"]
        mine = [tool for name, tool in offered.items() if name.startswith("mcp_minime_")]
        assert len(mine) > 5 and "client_" not in json.dumps(mine)

        ed.ask("read " + str(tmp_path / "outside.txt"))
        ed.answer_permission("3")
        assert ed.wait_done(2, timeout=60)["stop_reason"] == "end_turn"
        refused = json.dumps(model.function_responses()[-1])
        assert "not a file open" in refused and "OUTSIDE_SECRET" not in refused, refused
        assert "call mcp_minime_open_buffers" in refused, refused
        quit_leaves_no_bridge(ed)


def test_an_untrusted_folder_drops_the_editors_server_and_that_is_said_once(
    tmp_path: Path,
) -> None:
    """Folder trust on and this folder not trusted: Gemini CLI never starts the editor's MCP
    server. When the session's first turn ends without it, the user is told once, with what to
    check (the definition's mcp_hint), not at every turn."""
    with gemini_editor(tmp_path, trust_check=True) as (ed, model):
        done, _ = ed.turn("read notes.txt")
        assert done["stop_reason"] == "end_turn", done
        note = ed.wait_note("never started the editor's MCP server")
        assert note.startswith("minime: Gemini CLI never started the editor's MCP server"), note
        assert "folderTrust" in note and "trust" in note, note
        offered = json.dumps(model.turns()[0]["tools"])
        assert "mcp_minime_" not in offered, "no editor tool reached its model"
        assert not running_with(MCP_BRIDGE)
        ed.turn("hello")
        said = [n for n in ed.notes() if "never started the editor's MCP server" in n]
        assert said == [note], "said once"
        # :checkhealth's live check gives the session the editor's server and sees it unused.
        health = checkhealth(ed)
        warned = "the agent did not start the editor's MCP server when it opened a session"
        assert warned in health and "security.folderTrust.enabled = false" in health, health


def checkhealth(ed: Editor) -> str:
    """:checkhealth minime; the live check's time stretched for a loaded machine (gemini-cli
    starts in seconds, and the check waits for the editor's server after session/new)."""
    ed.lua("require('minime.health').live_timeout = 60")
    ed.nvim.command("checkhealth minime")
    return "\n".join(ed.nvim.current.buffer[:])


def test_checkhealth_sees_gemini_start_the_editors_server_in_a_trusted_folder(
    tmp_path: Path,
) -> None:
    with gemini_editor(tmp_path) as (ed, _):
        health = checkhealth(ed)
    assert "the agent started the editor's MCP server when it opened a session" in health, health
    assert "did not start the editor's MCP server" not in health


def test_gemini_entering_plan_mode_moves_the_mode_shown(tmp_path: Path) -> None:
    """Gemini CLI says its own change of mode only as agent text ``[MODE_UPDATE] plan`` (never
    current_mode_update): the mode shown follows it, and it is no line of the answer."""
    with gemini_editor(tmp_path) as (ed, _):
        ed.ask("plan first")
        ed.permission_win()
        ed.answer_permission("2")
        assert ed.wait_done(1, timeout=60)["stop_reason"] == "end_turn"
        state = ed.lua("return require('minime.modes').get(...)", ed.cwd)
        assert state["mode"] == "plan", state
        assert "mode: Plan" in ed.lua("return require('minime.modes').label(...)", ed.cwd)
        assert "[MODE_UPDATE]" not in ed.turn_text(), ed.turn_text()
