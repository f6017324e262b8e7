"""While the agent starts: :MiniMeStop, :MiniMeCancel and a second :MiniMeAsk between the spawn
and the first prompt, through the plugin (a real headless Neovim, the Lua layer, the Python host,
the fake mm held mid-start by ``hold_initialize`` / ``hold_session_new``: it answers only once
the test creates the file, so each command lands in the window however slow the machine).

Each test asserts what the user sees — the turn float, the notifications, the turn errors Lua
recorded — what crossed the wire (the fake's trace), and, for processes, that nothing is left.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import process_gone
from helpers.wire import trace
from nvim_harness import wait_for
from plugin_harness import Editor, agent_file, editor, group_members, running_with

ERROR = 4  # vim.log.levels.ERROR


def received(directory: Path, method: str) -> list[dict[str, Any]]:
    """The requests for ``method`` the fake mm has read, in order (its trace)."""
    return [m for m in trace(directory, "in") if m.get("method") == method]


def agents_of(config: str) -> list[int]:
    """Live processes started with this agent file (the fake mm's, by its command line)."""
    return running_with(config)


def held_editor(tmp_path: Path, step: str) -> tuple[Any, str, Path]:
    """An editor whose fake mm answers ``step`` (initialize or session_new) only once the
    returned gate file exists."""
    gate = tmp_path / f"{step}.go"
    config = agent_file(tmp_path, fake={f"hold_{step}": str(gate)})
    return editor(tmp_path, config=config), config, gate


def wait_held(ed: Editor, tmp_path: Path, config: str, method: str) -> int:
    """Wait until the agent has read ``method`` (so it is mid-start); its pid."""
    wait_for(lambda: received(tmp_path, method), ed.timeout, message=f"for {method} to be sent")
    (pid,) = agents_of(config)
    return pid


def host_log(ed: Editor) -> str:
    """What :MiniMeLog shows now (the plugin's log, then mm's stderr)."""
    ed.nvim.command("MiniMeLog")
    return "\n".join(ed.nvim.current.buffer[:])


def errors(ed: Editor) -> list[str]:
    return [n["msg"] for n in ed.lua("return _G.notes") if n["level"] == ERROR]


@pytest.mark.parametrize(
    ("step", "method"), [("initialize", "initialize"), ("session_new", "session/new")]
)
def test_stop_while_the_agent_starts_reads_as_a_stop_and_ends_it(
    tmp_path: Path, step: str, method: str
) -> None:
    """Catches a stop that misses the agent still starting (it runs the ask after all, or its
    process is left behind) and one that shows the start's failure as an error."""
    context, config, gate = held_editor(tmp_path, step)
    with context as ed:
        ed.ask("never sent")
        pid = wait_held(ed, tmp_path, config, method)
        ed.nvim.command("MiniMeStop")
        done = ed.wait_done(1)
        assert done["stop_reason"] == "stopped" and not done.get("error"), done
        lines = ed.turn_lines()
        assert lines[-1] == "■ stopped (:MiniMeStop)", lines
        assert not [x for x in lines if x.startswith("✗") or "error" in x or "closed" in x], lines
        assert ed.turn_errors() == []
        ed.wait_note("minime: agent stopped")
        assert errors(ed) == []
        wait_for(lambda: process_gone(pid), 10, message="for the starting agent to end")
        assert group_members(pid) == [] and agents_of(config) == []
        assert received(tmp_path, "session/prompt") == [], "the stopped ask never reached mm"
        # The next ask starts a new agent, which answers.
        gate.touch()
        done, text = ed.turn("after the stop")
        assert done["stop_reason"] == "end_turn" and "echo: after the stop" in text
        assert agents_of(config) != [pid]
        assert errors(ed) == [] and ed.turn_errors() == []


def test_stop_ends_every_ask_waiting_for_the_same_starting_agent(tmp_path: Path) -> None:
    """Two cwds share one starting agent: :MiniMeStop ends both asks as stopped."""
    other = tmp_path / "other"
    other.mkdir()
    context, config, _gate = held_editor(tmp_path, "initialize")
    with context as ed:
        ed.ask("first")
        pid = wait_held(ed, tmp_path, config, "initialize")
        ed.lua("require('minime').ask('second', nil, ...)", str(other))
        ed.wait_text("second", cwd=os.path.realpath(other))
        ed.nvim.command("MiniMeStop")
        ed.wait_done(2)
        assert [d["stop_reason"] for d in ed.done()] == ["stopped", "stopped"]
        for cwd in (ed.cwd, os.path.realpath(other)):
            assert ed.turn_lines(cwd)[-1] == "■ stopped (:MiniMeStop)"
        assert ed.turn_errors() == [] and errors(ed) == []
        wait_for(lambda: process_gone(pid), 10, message="for the starting agent to end")
        assert agents_of(config) == [] and len(received(tmp_path, "initialize")) == 1


def test_cancel_while_the_agent_starts_drops_the_ask_at_once_and_the_start_goes_on(
    tmp_path: Path,
) -> None:
    """:MiniMeCancel mid-start: the ask is shown cancelled at once (initialize still
    unanswered), its prompt never goes; the agent keeps starting and the next ask uses it.
    Catches a cancel that waits for the start, one that sends the prompt anyway, and one that
    kills (or duplicates) the agent the next ask needs."""
    context, config, gate = held_editor(tmp_path, "initialize")
    with context as ed:
        ed.ask("never sent")
        pid = wait_held(ed, tmp_path, config, "initialize")
        ed.nvim.command("MiniMeCancel")
        done = ed.wait_done(1)
        assert done["stop_reason"] == "cancelled" and not done.get("error")
        assert ed.turn_lines()[-1] == "■ cancelled"
        assert not process_gone(pid), "the agent goes on starting"
        # The next ask while it still starts is accepted and waits for the same agent.
        ed.ask("the next ask")
        wait_for(
            lambda: (
                ed.turn_lines()[:1] == ["> the next ask"]
                and "ℹ starting the agent…" in ed.turn_lines()
            ),
            ed.timeout,
            message="for the next ask to say it waits for the agent",
        )
        gate.touch()
        done = ed.wait_done(2)
        assert done["stop_reason"] == "end_turn" and "echo: the next ask" in ed.turn_text()
        assert agents_of(config) == [pid], "one agent, the one that was starting"
        prompts = received(tmp_path, "session/prompt")
        assert [p["params"]["prompt"][0]["text"] for p in prompts] == ["the next ask"]
        assert ed.turn_errors() == [] and errors(ed) == []
        assert not [n for n in ed.notes() if "already" in n], "nothing was refused"


def test_cancel_before_the_first_prompt_is_kept_when_the_start_then_fails(
    tmp_path: Path,
) -> None:
    """The start fails after the cancel (mm exits): the cancelled turn stays cancelled, and
    nothing else is said until the next ask, which tells why."""
    context, config, _gate = held_editor(tmp_path, "initialize")
    with context as ed:
        ed.ask("never sent")
        pid = wait_held(ed, tmp_path, config, "initialize")
        ed.nvim.command("MiniMeCancel")
        assert ed.wait_done(1)["stop_reason"] == "cancelled"
        os.kill(pid, 9)
        wait_for(lambda: "no session for" in host_log(ed), 10, message="for the start to fail")
        assert ed.turn_lines()[-1] == "■ cancelled"
        # The fake now starts at once: the next ask starts it anew and says nothing of the
        # dead one.
        agent_file(tmp_path)
        done, text = ed.turn("again")
        assert done["stop_reason"] == "end_turn" and "echo: again" in text, text
        assert "starting the agent…" in text
        assert ed.done()[0]["stop_reason"] == "cancelled"
        assert ed.turn_errors() == [] and errors(ed) == []


def test_with_queue_false_a_second_ask_while_the_agent_starts_is_refused_and_said(
    tmp_path: Path,
) -> None:
    """Catches a second ask lost silently, run beside the first, or starting a second agent."""
    context, config, gate = held_editor(tmp_path, "session_new")
    with context as ed:
        ed.lua("require('minime.config').options.queue = false")  # refused, not queued
        ed.ask("first")
        pid = wait_held(ed, tmp_path, config, "session/new")
        ed.ask("second")
        note = ed.wait_note("still starting")
        assert note == (
            f"minime: the agent is still starting for an ask in {ed.cwd} — "
            "wait for it, or :MiniMeCancel drops that ask"
        )
        gate.touch()
        done = ed.wait_done(1)
        assert done["stop_reason"] == "end_turn" and "echo: first" in ed.turn_text()
        conversation = ed.conversation_lines()
        assert "> second" not in conversation, "a refused ask is not shown as asked"
        assert len(ed.done()) == 1
        assert agents_of(config) == [pid] and len(received(tmp_path, "initialize")) == 1
        prompts = received(tmp_path, "session/prompt")
        assert [p["params"]["prompt"][0]["text"] for p in prompts] == ["first"]
        assert ed.turn_errors() == [] and errors(ed) == []


def test_quitting_neovim_while_the_agent_starts_leaves_no_process(tmp_path: Path) -> None:
    """The agent, held mid-start and deaf to the end of its stdin, is not yet the pool's: it
    must still end with the editor."""
    gate = tmp_path / "initialize.go"
    config = agent_file(tmp_path, fake={"hold_initialize": str(gate), "ignore_stdin_eof": True})
    with editor(tmp_path, config=config) as ed:
        ed.ask("never sent")
        pid = wait_held(ed, tmp_path, config, "initialize")
        host = ed.host_pid()
        with contextlib.suppress(OSError, EOFError):
            ed.nvim.command("qa!")
    wait_for(lambda: group_members(pid) == [], 10, message="for the agent's group to end")
    wait_for(lambda: process_gone(host), 10, message="for the host to end")


def test_reset_while_the_agent_starts_drops_the_ask_of_the_old_conversation(
    tmp_path: Path,
) -> None:
    """:MiniMeReset empties the float: the ask in it must not run later in the new one."""
    context, config, gate = held_editor(tmp_path, "initialize")
    with context as ed:
        ed.ask("never sent")
        pid = wait_held(ed, tmp_path, config, "initialize")
        ed.nvim.command("MiniMeReset")
        assert ed.wait_done(1)["stop_reason"] == "cancelled"
        ed.wait_note("new conversation")
        gate.touch()
        done, text = ed.turn("in the new conversation")
        assert done["stop_reason"] == "end_turn" and "echo: in the new conversation" in text
        assert "never sent" not in ed.conversation_text()
        prompts = received(tmp_path, "session/prompt")
        assert [p["params"]["prompt"][0]["text"] for p in prompts] == ["in the new conversation"]
        assert agents_of(config) == [pid]
        assert ed.turn_errors() == [] and errors(ed) == []
