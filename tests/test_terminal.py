"""The client terminal end to end: a real Neovim, its Python host and
tests/agents/terminal_agent.py, which runs commands through ``terminal/*`` and writes the
editor's answers into its reply (``TERM <method> {...}``). Each test reads those answers, the
conversation, the :MiniMeTerminal buffer, or /proc."""

from __future__ import annotations

import contextlib
import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nvim_harness import wait_for
from plugin_harness import Editor, editor, editor_with, running_with

AGENT = Path(__file__).with_name("agents") / "terminal_agent.py"


@contextlib.contextmanager
def terminal_editor(tmp_path: Path) -> Iterator[Editor]:
    cwd = tmp_path / "project"
    cwd.mkdir()
    agent = {"cmd": [sys.executable, str(AGENT)], "label": "terminal-agent"}
    with editor_with(cwd, {"agent": agent}, timeout=30.0, ask_command=False) as ed:
        yield ed


def said(ed: Editor) -> list[tuple[str, dict[str, Any]]]:
    """The editor's answers as the agent reported them, in order."""
    found = []
    for part in ed.turn_text().split("TERM ")[1:]:
        method, _, rest = part.partition(" ")
        found.append((method, json.JSONDecoder().raw_decode(rest)[0]))
    return found


def create(script: str, **params: Any) -> dict[str, Any]:
    return {
        "method": "terminal/create",
        "params": {"command": "/bin/sh", "args": ["-c", script], **params},
    }


def test_a_command_shows_its_output_live_under_its_tool_line(tmp_path: Path) -> None:
    with terminal_editor(tmp_path) as ed:
        script = "echo first; while [ ! -e go ]; do sleep 0.02; done; echo second; exit 2"
        steps = [
            {**create(script), "tool": True},
            {"method": "terminal/wait_for_exit", "done": True},
            create("echo no", cwd=".."),
        ]
        ed.ask(json.dumps(steps))
        live = ed.wait_text("    first")
        assert "    second" not in live  # shown while the command still runs
        assert "⚙ Run a command  [execute] in_progress" in live
        # Mid-turn, :MiniMeTerminal shows it too, and its buffer follows the command.
        ed.nvim.command("MiniMeTerminal")
        wait_for(lambda: ed.nvim.current.buffer.name.endswith("/project/term-1"), 10)
        assert ed.nvim.current.buffer[:] == ["first"]
        buf = ed.nvim.current.buffer
        (Path(ed.cwd) / "go").touch()
        ed.wait_done()
        wait_for(lambda: buf[:] == ["first", "second", "[exit status 2]"], 10)
        lines = ed.turn_lines()
        header = lines.index("⚙ Run a command  [execute] completed")
        assert lines[header + 1 : header + 3] == ["    first", "    second"]
        answers = said(ed)
        assert [m for m, _ in answers] == [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/create",
        ]
        assert answers[1][1] == {"result": {"exitCode": 2}}
        refused = answers[2][1]["error"]["data"]["details"]
        assert "outside the session's working directory" in refused


def test_minime_terminal_opens_the_output_in_a_buffer(tmp_path: Path) -> None:
    with terminal_editor(tmp_path) as ed:
        ed.nvim.command("MiniMeTerminal")
        ed.wait_note("the agent ran no command in a terminal here")
        done, _ = ed.turn(
            json.dumps(
                [
                    create("printf 'one\\n\\033[31mred\\033[0m\\n'"),
                    {"method": "terminal/wait_for_exit"},
                    create("echo other; exit 5"),
                    {"method": "terminal/wait_for_exit"},
                ]
            )
        )
        assert not done.get("error"), done
        assert ed.nvim.call("getcompletion", "MiniMeTerminal ", "cmdline") == ["term-1", "term-2"]
        ed.nvim.command("MiniMeTerminal")  # the last one
        wait_for(lambda: ed.nvim.current.buffer.name.endswith("/project/term-2"), 10)
        assert ed.nvim.current.buffer[:] == ["other", "[exit status 5]"]
        ed.nvim.command("MiniMeTerminal term-1")
        wait_for(lambda: ed.nvim.current.buffer.name.endswith("/project/term-1"), 10)
        assert ed.nvim.current.buffer[:] == ["one", "red", "[exit status 0]"]  # colours dropped
        ed.nvim.command("MiniMeTerminal term-9")
        ed.wait_note("no terminal 'term-9' here (the agent's: term-1, term-2)")


def start_detached(ed: Editor, waiting: bool = False) -> str:
    """A turn that leaves a command running in the client terminal, with a child in a session
    of its own (``waiting``: the turn still runs, waiting for it to exit); the marker of both
    command lines."""
    marker = f"{uuid.uuid4().int % 10**6}"
    steps = [create(f"setsid sleep 8{marker} & sleep 9{marker}")]
    if waiting:
        ed.ask(json.dumps([*steps, {"method": "terminal/wait_for_exit"}]))
    else:
        done, _ = ed.turn(json.dumps(steps))
        assert not done.get("error"), done
    wait_for(lambda: len(running_with(marker)) >= 2, 10, message="for both commands")
    return marker


def test_minime_stop_ends_every_terminal_with_its_children(tmp_path: Path) -> None:
    with terminal_editor(tmp_path) as ed:
        marker = start_detached(ed)
        ed.nvim.command("MiniMeStop")
        ed.wait_note("minime: agent stopped")
        wait_for(lambda: running_with(marker) == [], 10, message="for the terminal's tree to end")
        # Mid-turn, the agent waiting for its command: the turn ends stopped, the tree too.
        marker = start_detached(ed, waiting=True)
        ed.nvim.command("MiniMeStop")
        assert ed.wait_done(2)["stop_reason"] == "stopped"
        wait_for(lambda: running_with(marker) == [], 10, message="for the terminal's tree to end")


def test_quitting_neovim_ends_every_terminal_with_its_children(tmp_path: Path) -> None:
    with terminal_editor(tmp_path) as ed:
        marker = start_detached(ed)
        with contextlib.suppress(OSError, EOFError):
            ed.nvim.command("qa!")
    wait_for(lambda: running_with(marker) == [], 10, message="for the terminal's tree to end")


def test_minime_reset_ends_the_old_sessions_terminals(tmp_path: Path) -> None:
    with terminal_editor(tmp_path) as ed:
        marker = start_detached(ed)
        ed.nvim.command("MiniMeReset")
        ed.wait_note("new conversation")
        wait_for(lambda: running_with(marker) == [], 10, message="for the terminal's tree to end")


@pytest.mark.parametrize("script", ["/client-terminal", "/client-terminal-released"])
def test_the_output_stays_under_its_tool_line_after_completion_and_release(
    tmp_path: Path, script: str
) -> None:
    # The fake mm: terminal/create, a tool_call showing the terminal, wait_for_exit, then a
    # `completed` update without content and terminal/release (or release first, then a
    # `completed` naming the terminal again): the output is still the call's (ACP: the client
    # may keep showing a released terminal's output).
    with editor(tmp_path) as ed:
        done, _ = ed.turn(f"{script} echo one; sleep 0.3; echo two")
        assert not done.get("error"), done
        lines = ed.turn_lines()
        header = next(n for n, line in enumerate(lines) if line.startswith("⚙ bash: echo one"))
        assert lines[header].endswith("[execute] completed")
        assert lines[header + 1 : header + 3] == ["    one", "    two"], lines
        assert "terminal -> released" in lines
