"""Interop with OpenCode (npm ``opencode-ai`` 1.18, its binary an optional dependency: ``opencode
acp``), a real agent nobody here wrote, started by the shipped definition
(lua/minime/agents/opencode.lua) and driven by a scripted model on loopback
(tests/agents/openai_model.py: a provider ``@ai-sdk/openai-compatible`` whose ``baseURL`` is
that server, given in ``OPENCODE_CONFIG_CONTENT``; ``OPENCODE_DISABLE_MODELS_FETCH`` keeps it
off the network).

What OpenCode 1.18 does, seen here: it asks before a command only when its permission config
says ``ask`` (the definition sets ``OPENCODE_PERMISSION``), with options ``once``, ``always``,
``reject``; it spawns the editor's MCP server from session/new's mcpServers and shows its tools
to the model as ``minime_<tool>``, calling them without asking; its modes (``build``,
``plan``) are a config option of category ``mode``, not ACP modes. scripts/setup installs it
(``npm install`` in tests/interop); without node or the package the tests are skipped, except in
CI.
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
from agents.openai_model import ModelServer, Reply, last_tool, serving, user_text
from nvim_harness import REPO, wait_for
from plugin_harness import (
    Editor,
    editor_with,
    quit_leaves_no_bridge,
    quit_with_one_agent,
    wait_tree_gone,
)

BIN = REPO / "tests/interop/node_modules/.bin"
OPENCODE = BIN / "opencode"
NODE = shutil.which("node")

if not (NODE and OPENCODE.exists()) and not os.environ.get("CI"):
    pytest.skip(
        "needs node and the npm packages of tests/interop (./scripts/setup)",
        allow_module_level=True,
    )

MCP_READ = "minime_read_buffer"  # OpenCode's name for the editor's read_buffer


def script(messages: list[dict[str, Any]]) -> Reply:
    """Asked "run …": that command (OpenCode's bash tool); "read …": the editor's read_buffer
    of that path; after a tool's result, or for anything else: "All done."."""
    step, prompt = last_tool(messages), user_text(messages)
    if step is None and prompt.startswith("run "):
        command = prompt.removeprefix("run ")
        return Reply(tool="bash", arguments={"command": command, "description": "as asked"})
    if step is None and prompt.startswith("read "):
        return Reply(tool=MCP_READ, arguments={"path": prompt.removeprefix("read ")})
    return Reply(text="All done.")


def config(base_url: str) -> str:
    """OpenCode's config: one provider, the scripted model, nothing else from the network."""
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "scripted",
        "options": {"baseURL": base_url, "apiKey": "scripted"},
        "models": {"scripted": {"name": "scripted"}},
    }
    return json.dumps(
        {
            "provider": {"scripted": provider},
            "model": "scripted/scripted",
            "autoupdate": False,
            "share": "disabled",
        }
    )


@contextlib.contextmanager
def opencode_editor(
    tmp_path: Path, next_step: Callable[[list[dict[str, Any]]], Reply] = script, **opts: Any
) -> Iterator[tuple[Editor, ModelServer]]:
    """Neovim with ``agent = "opencode"`` (the shipped definition), opencode on PATH, its
    config naming the scripted model (its data and config under the editor's own XDG dirs)."""
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "notes.txt").write_text("saved text\n")
    with serving(next_step) as model:
        before = (
            f"vim.env.PATH = [==[{BIN}]==] .. ':' .. vim.env.PATH\n"
            f"vim.env.OPENCODE_CONFIG_CONTENT = [==[{config(model.base_url)}]==]\n"
            "vim.env.OPENCODE_DISABLE_MODELS_FETCH = '1'\n"
            "vim.env.OPENCODE_DISABLE_AUTOUPDATE = '1'\n"
        )
        opts.setdefault("agent", "opencode")
        with editor_with(cwd, opts, before, timeout=60.0) as ed:
            yield ed, model


def tool_lines(ed: Editor) -> list[str]:
    return [line for line in ed.turn_lines() if line.startswith("⚙ ")]


def test_opencode_streams_asks_runs_and_cancels(tmp_path: Path) -> None:
    with opencode_editor(tmp_path) as (ed, model):
        done, text = ed.turn("hello")
        assert done["stop_reason"] == "end_turn", done
        asked = [user_text(body["messages"]) for body in model.posted("/chat/completions")]
        assert "hello" in asked, "the prompt reached opencode's model"
        assert text.rstrip().endswith(
            "All done.\n\n■ done (end_turn) · tokens: 12 input, 5 output, 17 total"
        )

        # The definition's OPENCODE_PERMISSION makes it ask before a command.
        ed.ask("run touch made.txt")
        shown = ed.permission_text().splitlines()
        assert shown[0] == "touch made.txt", shown
        assert [x for x in shown if x[:2] in ("1.", "2.", "3.")] == [
            "1. Allow once — allow once",
            "2. Always allow — OpenCode (opencode acp) will not ask again for this kind of"
            " request — its own rule",
            "3. Reject — reject once",
        ], shown
        assert not Path(ed.cwd, "made.txt").exists(), "nothing ran before the answer"
        ed.answer_permission("1")
        assert ed.wait_done(2, timeout=60)["stop_reason"] == "end_turn"
        assert Path(ed.cwd, "made.txt").exists()
        assert tool_lines(ed) == ["⚙ touch made.txt  [execute] completed"]
        assert ed.turn_errors() == []

        # :MiniMeCancel while its prompt is open: the prompt goes, the turn ends cancelled,
        # and the command it asked about never runs.
        ed.ask("run touch never.txt")
        ed.permission_win()
        ed.nvim.command("MiniMeCancel")
        assert ed.wait_done(3, timeout=60)["stop_reason"] == "cancelled"
        wait_for(lambda: not ed.permission_open(), 10, message="for the prompt to close")
        assert not Path(ed.cwd, "never.txt").exists()

        pid = quit_with_one_agent(ed)
    wait_tree_gone(pid, "opencode")


def test_opencodes_model_reads_the_unsaved_buffer_over_mcp_and_sees_its_names(
    tmp_path: Path,
) -> None:
    """OpenCode spawns the editor's MCP server and calls ``minime_read_buffer``: what its model
    reads is the buffer's unsaved text; the tools' descriptions name each other as OpenCode's
    model sees them (``minime_open_buffers``, never mm's ``client_open_buffers``, I1)."""
    (tmp_path / "outside.txt").write_text("OUTSIDE_SECRET\n")
    with opencode_editor(tmp_path) as (ed, model):
        ed.nvim.command("edit notes.txt")
        ed.nvim.current.buffer[:] = ["unsaved words"]
        ed.nvim.command(f"badd {tmp_path / 'outside.txt'}")
        done, _ = ed.turn("read notes.txt")
        assert done["stop_reason"] == "end_turn", done
        assert json.loads(model.tool_results()[-1])["text"] == "unsaved words"
        assert "⚙ minime_read_buffer  [other] completed" in tool_lines(ed)

        offered = {
            tool["function"]["name"]: tool["function"]
            for body in model.posted("/chat/completions")
            for tool in body.get("tools") or []
        }
        read = offered[MCP_READ]
        assert "minime_open_buffers" in read["description"], read
        assert "client_" not in json.dumps([t for n, t in offered.items() if "minime" in n])

        ed.turn("read " + str(tmp_path / "outside.txt"))
        refused = model.tool_results()[-1]
        assert "not a file open" in refused and "OUTSIDE_SECRET" not in refused, refused
        assert "call minime_open_buffers" in refused, refused
        quit_leaves_no_bridge(ed)


def modes(ed: Editor) -> tuple[str, list[str]]:
    state = ed.lua("return require('minime.modes').get(...)", ed.cwd)
    return state["mode"], [m["id"] for m in state["modes"]]


def test_opencodes_mode_option_is_the_session_mode(tmp_path: Path) -> None:
    """OpenCode offers its modes only as a config option of category ``mode``: they are the
    session's modes all the same — setup's ``mode`` applies, the statusline says it, and
    :MiniMeMode changes it (through session/set_config_option)."""
    with opencode_editor(tmp_path, mode="plan") as (ed, _):
        done, _ = ed.turn("hello")
        assert done["stop_reason"] == "end_turn", done
        assert modes(ed) == ("plan", ["build", "plan"])
        assert "mode: plan" in ed.lua("return require('minime.modes').label(...)", ed.cwd)
        ed.nvim.command("MiniMeMode build")
        wait_for(lambda: modes(ed)[0] == "build", 20, message="for the mode build")
        assert not [n for n in ed.notes() if "offers no session modes" in n], ed.notes()
        done, _ = ed.turn("hello")
        assert done["stop_reason"] == "end_turn" and modes(ed)[0] == "build"
