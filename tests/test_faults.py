"""Faults and bad input, through the plugin: a real headless Neovim, the Lua layer, the Python
host and the fake mm (tests/fake/mm). Each test asserts what the user sees — the turn float, the
notifications — and, for processes, that nothing of ours is left (by pid and process group).

The wire-level faults share one Neovim (``wire``): each is one turn of the same session, which
also shows that the session survives every one of them. The shared helpers (``Editor``,
``editor``, ``group_members``) are in plugin_harness.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import process_gone
from helpers.wire import trace_rows
from nvim_harness import wait_for
from plugin_harness import ALLOW_CLIENT_TOOLS, Editor, agent_file, editor, group_members


def error_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith("✗ error: ")]
    assert len(lines) == 1, text
    return lines[0]


# ---------------------------------------------------------------------------------------------
# The agent process: missing, dead on arrival, mute, crashing, deaf.


@pytest.mark.parametrize("kind", ["not executable", "a directory"])
def test_an_mm_that_cannot_run_is_said_plainly_and_nothing_starts(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "mm"
    if kind == "a directory":
        path.mkdir()
    else:
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o644)
    with editor(tmp_path, mm=str(path)) as ed:
        ed.ask("hello")
        notes = wait_for(ed.notes, 10, message="for a notification")
        assert notes == [f"minime: mm not found: {path} is not executable (set `mm` or $MM_BIN)"]
        assert ed.lua("return require('minime.host').chan") is None, "no host was started"
        assert ed.lua("return require('minime.ui.turn').get(...)", ed.cwd) is None, "no float"


def test_mm_exiting_before_initialize_shows_its_status_and_last_stderr_line(
    tmp_path: Path,
) -> None:
    config = agent_file(
        tmp_path, fake={"exit_before_initialize": 3, "exit_message": "fatal: no model configured"}
    )
    with editor(tmp_path, config=config) as ed:
        done, text = ed.turn("hello")
        assert done["stop_reason"] == "error"
        line = error_line(text)
        assert "exited before it was ready (initialize): exit status 3" in line
        assert "fatal: no model configured" in line
        assert ed.notes() == []
        # Nothing is kept: the next ask tries again, and says the same.
        done, text = ed.turn("again")
        assert "exit status 3" in error_line(text)


def test_mm_that_never_answers_initialize_fails_after_ready_timeout(tmp_path: Path) -> None:
    config = agent_file(tmp_path, fake={"never_initialize": True, "banner": "mute mm {pid}"})
    with editor(tmp_path, config=config, ready_timeout=1) as ed:
        started = time.monotonic()
        done, text = ed.turn("hello")
        elapsed = time.monotonic() - started
        assert done["stop_reason"] == "error"
        line = error_line(text)
        assert "did not answer initialize within 1 s" in line, line
        assert 1.0 <= elapsed < 15, elapsed
        pid = int(line.split("mute mm ", 1)[1].split(")")[0])
        wait_for(lambda: process_gone(pid), 10, message="for the mute agent to be ended")
        assert group_members(pid) == []


def test_a_crash_mid_turn_keeps_the_text_so_far_and_the_next_ask_restarts(
    tmp_path: Path,
) -> None:
    with editor(tmp_path) as ed:
        first = ed.agent_pid()
        done, text = ed.turn("/say the text so far\n/crash 5")
        assert done["stop_reason"] == "error"
        assert "the text so far" in text and "crashing" in text
        line = error_line(text)
        assert "exited: exit status 5" in line
        assert "panic: fake crash (exit status 5)" in line
        assert "Traceback" not in text
        assert process_gone(first)
        assert ed.agent_pid() != first, "the next ask starts a new agent"


def test_an_mm_error_reaches_the_user_in_mm_words(tmp_path: Path) -> None:
    """mm (Go SDK) fails a turn with -32603 ``Internal error`` and its words in ``data.error``:
    the float shows those words, never ``None``, and the same agent answers the next ask."""
    with editor(tmp_path) as ed:
        pid = ed.agent_pid()
        done, text = ed.turn("/say partial\n/error the model server answered 503")
        assert done["stop_reason"] == "error"
        assert "partial" in text
        line = error_line(text)
        assert line.startswith(
            "✗ error: turn failed: Internal error (-32603): the model server answered 503"
        ), line
        assert "None" not in line
        sent = [m["msg"] for m in trace_rows(tmp_path / "trace.jsonl") if m["dir"] == "out"]
        errors = [m["error"] for m in sent if "error" in m]
        assert [e["data"] for e in errors] == [{"error": "the model server answered 503"}]
        done, text = ed.turn("/say next")
        assert done["stop_reason"] == "end_turn" and "next" in text.splitlines()
        assert ed.agent_pid() == pid


def test_a_crash_while_a_permission_prompt_is_open_closes_the_prompt(tmp_path: Path) -> None:
    with editor(tmp_path) as ed:
        count = len(ed.done()) + 1
        ed.ask("/pid\n/bash make deploy")
        assert "bash: make deploy" in ed.permission_text()
        pid = int(ed.wait_line("pid ").split()[1])
        os.kill(pid, signal.SIGKILL)
        done = ed.wait_done(count)
        assert done["stop_reason"] == "error"
        assert "exited: killed by signal SIGKILL" in error_line(ed.turn_text())
        wait_for(lambda: not ed.permission_open(), 10, message="for the prompt to close")
        _, text = ed.turn("after the crash")
        assert "echo: after the crash" in text


def test_cancel_while_the_agent_starts_ends_the_turn_before_its_prompt(tmp_path: Path) -> None:
    with editor(tmp_path) as ed:
        ed.ask("never sent")
        ed.nvim.command("MiniMeCancel")
        done = ed.wait_done(1)
        assert done["stop_reason"] == "cancelled"
        assert "■ cancelled" in ed.turn_text()
        done, text = ed.turn("the next ask")
        assert "echo: the next ask" in text
        prompts = [m["msg"] for m in trace_rows(tmp_path / "trace.jsonl") if m["dir"] == "in"]
        prompts = [m for m in prompts if m.get("method") == "session/prompt"]
        assert len(prompts) == 1, "the cancelled ask never reached the agent"


def test_an_agent_deaf_to_cancel_ends_the_turn_after_cancel_timeout(tmp_path: Path) -> None:
    with editor(tmp_path, cancel_timeout=1) as ed:
        count = len(ed.done()) + 1
        ed.ask("/deaf")
        ed.wait_line("deaf")
        started = time.monotonic()
        ed.nvim.command("MiniMeCancel")
        done = ed.wait_done(count)
        elapsed = time.monotonic() - started
        assert done["stop_reason"] == "error"
        assert "did not end the turn within 1 s of session/cancel" in error_line(ed.turn_text())
        assert 1.0 <= elapsed < 10, elapsed
        done, text = ed.turn("the next ask")
        assert done["stop_reason"] == "end_turn" and "echo: the next ask" in text


# ---------------------------------------------------------------------------------------------
# The Python host and Neovim itself.


@pytest.mark.parametrize("during", ["turn", "permission"])
def test_the_host_dying_is_said_once_and_the_next_ask_starts_it_again(
    tmp_path: Path, during: str
) -> None:
    """A stuck agent (it ignores the end of its stdin) must not outlive its host either."""
    config = agent_file(tmp_path, fake={"ignore_stdin_eof": True})
    with editor(tmp_path, config=config) as ed:
        agent = ed.agent_pid()
        host = ed.host_pid()
        count = len(ed.done()) + 1
        if during == "turn":
            ed.ask("/slow 1000")
            ed.wait_line("slow 1")
        else:
            ed.ask("/bash make")
            ed.permission_win()
        os.kill(host, signal.SIGKILL)
        said = wait_for(
            lambda: [n for n in ed.notes() if "Python host stopped" in n], 10, message="notice"
        )
        assert said == [
            "minime: the Python host stopped (exit 137); the next ask starts it again"
        ], said
        done = ed.wait_done(count, 10)
        assert done["stop_reason"] == "error", "the running turn says it ended"
        assert "the Python host stopped" in error_line(ed.turn_text())
        assert not ed.lua("return require('minime.ui.turn').get(...).running", ed.cwd)
        assert not ed.permission_open(), "no prompt is left that nobody would answer"
        wait_for(lambda: group_members(agent) == [], 10, message="for the orphaned agent to end")
        done, text = ed.turn("after the host died")
        assert done["stop_reason"] == "end_turn" and "echo: after the host died" in text
        assert ed.host_pid() != host
        assert len([n for n in ed.notes() if "Python host stopped" in n]) == 1, "said once"


@pytest.mark.parametrize("during", ["turn", "permission"])
def test_quitting_neovim_leaves_no_process_of_ours(tmp_path: Path, during: str) -> None:
    """The agent ignores the end of its stdin and has a child: the group is ended whole."""
    config = agent_file(tmp_path, fake={"ignore_stdin_eof": True})
    with editor(tmp_path, config=config) as ed:
        agent = ed.agent_pid()
        host = ed.host_pid()
        ed.turn("/spawn-child")
        child = int(ed.wait_line("child ").split()[1])
        assert agent in group_members(agent) and child in group_members(agent)
        if during == "turn":
            ed.ask("/slow 1000")
            ed.wait_line("slow 1")
        else:
            ed.ask("/bash rm -rf /tmp/nothing")
            ed.permission_win()
        with contextlib.suppress(OSError, EOFError):
            ed.nvim.command("qa!")
    wait_for(lambda: group_members(agent) == [], 10, message="for the agent's group to end")
    wait_for(lambda: process_gone(host), 10, message="for the host to end")
    assert process_gone(child)


# ---------------------------------------------------------------------------------------------
# What the agent writes: one Neovim, one session, one turn per input.


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    tmp_path = tmp_path_factory.mktemp("wire")
    # focus "idle", idle 0: the prompt takes the focus at once and these tests type fast; when a
    # prompt may take the focus, and from where, is test_permission_*'s.
    permission = {"focus": "idle", "idle": 0}
    with editor(tmp_path, permission_rules=ALLOW_CLIENT_TOOLS, permission=permission) as ed:
        ed.session_id = ed.turn("hello")[0]["session_id"]  # type: ignore[attr-defined]
        yield ed


@pytest.fixture
def ed(wire: Editor) -> Iterator[Editor]:
    """The shared editor; after each test the session is the same and the editor answers."""
    yield wire
    errors = wire.lua("local e = require('minime.ui.turn').errors; return e")
    notes = wire.notes()
    wire.lua(
        "_G.notes = {}; for i = #require('minime.ui.turn').errors, 1, -1 do"
        " table.remove(require('minime.ui.turn').errors, i) end"
    )
    assert not wire.permission_open()
    assert errors == [], "the turn float never failed to render"
    assert notes == [], "no notification"
    assert wire.done()[-1]["session_id"] == wire.session_id  # type: ignore[attr-defined]


def test_garbage_unknown_messages_and_update_kinds_are_survived(ed: Editor) -> None:
    """Not JSON, an unknown notification and request, an unknown session/update kind, a
    response to no request, vendor updates: the turn goes on, the unknown request is
    answered Method not found."""
    done, text = ed.turn("/garbage")
    assert done["stop_reason"] == "end_turn"
    assert "after garbage" in text
    for unknown in ("weird_kind", "qwen", "A title", "available"):
        assert unknown not in text
    messages = trace_rows(Path(ed.cwd) / "trace.jsonl")
    answers = [m["msg"] for m in messages if m["dir"] == "in" and m["msg"].get("id") == "odd-1"]
    assert answers and answers[-1]["error"]["code"] == -32601


def test_a_ten_megabyte_chunk_arrives_whole_and_the_editor_answers(ed: Editor) -> None:
    from fake_mm import bigline_text

    bound = ed.probe_bound()
    ed.ask("/bigline 10000000")
    times = ed.probes_while_running()
    assert ed.done()[-1]["stop_reason"] == "end_turn"
    lines = ed.turn_lines()
    start = next(i for i, line in enumerate(lines) if line.startswith("<x"))
    end = next(i for i, line in enumerate(lines) if line.endswith("x>"))
    assert "".join(lines[start : end + 1]) == bigline_text(10_000_000)
    assert max(len(line) for line in lines) <= 20_000, "long lines are broken for display"
    assert max(times) < bound, f"the editor froze for {max(times):.2f} s"


def test_a_560_kb_update_line_is_ignored_and_the_turn_goes_on(ed: Editor) -> None:
    done, text = ed.turn("/big-update 560000")
    assert done["stop_reason"] == "end_turn"
    assert "after big-update" in text
    sent = [m for m in trace_rows(Path(ed.cwd) / "trace.jsonl") if m["dir"] == "out"]
    assert max(len(json.dumps(m["msg"])) for m in sent) >= 560_000


def test_an_invalid_utf8_line_is_dropped_and_the_turn_goes_on(ed: Editor) -> None:
    done, text = ed.turn("/badutf8\n/say still here")
    assert done["stop_reason"] == "end_turn"
    assert "after badutf8" in text and "still here" in text


def test_a_request_for_an_unknown_method_is_answered_method_not_found(ed: Editor) -> None:
    done, text = ed.turn("/call _vendor/unknown {}\n/say on")
    assert done["stop_reason"] == "end_turn"
    # mm reads the error as Go's RequestError.Error(): with the data the client's SDK put in.
    assert (
        '_vendor/unknown -> [client tool error: {"code":-32601,"message":"Method not found",'
        '"data":{"method":"_vendor/unknown"}}]'
    ) in text
    assert "on" in text.splitlines()


def test_a_tool_call_for_an_unknown_session_is_a_clear_error(ed: Editor) -> None:
    done, text = ed.turn('/tool-as 20990101-000000-deadbeef read_buffer {"path": "a.txt"}')
    assert done["stop_reason"] == "end_turn"
    assert (
        "client_read_buffer -> [client tool error: unknown session '20990101-000000-deadbeef': "
        "this client never opened it]"
    ) in text


@pytest.mark.parametrize(
    ("call", "read"),
    [
        ('read_buffer {"path": 42}', "path must be a string, got 42"),
        ('read_buffer {"path": "a.txt", "start_line": "two"}', "start_line must be a whole number"),
        ('read_buffer {"path": "a.txt", "start_line": 0}', "start_line must be 1 or more"),
        ('read_buffer {"path": ["a.txt"]}', "path must be a string"),
        ('diagnostics {"severity": "fatal"}', "severity must be one of"),
        ('diagnostics {"path": {"x": 1}}', "path must be a string"),
    ],
)
def test_arguments_of_the_wrong_type_are_a_clear_error(ed: Editor, call: str, read: str) -> None:
    done, text = ed.turn(f"/tool {call}")
    assert done["stop_reason"] == "end_turn"
    name = call.split()[0]
    line = next(line for line in text.splitlines() if line.startswith(f"client_{name} -> "))
    assert line.startswith(f"client_{name} -> [client tool error: "), line
    assert read in line, line


def test_a_cancel_request_for_an_unknown_id_disturbs_nothing(ed: Editor) -> None:
    done, text = ed.turn('/cancel-request 424242\n/cancel-request "nope"\n/tool open_buffers')
    assert done["stop_reason"] == "end_turn"
    assert "sent" in text
    assert f'client_open_buffers -> {{"cwd":"{ed.cwd}","buffers":[' in text


# ---------------------------------------------------------------------------------------------
# What real agents do (design.md, "What real ACP agents do").


def tool_headers(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("⚙ ")]


def test_a_permission_request_before_its_tool_call(ed: Editor) -> None:
    count = len(ed.done()) + 1
    ed.ask("/permission-first ls -la")
    assert "bash: ls -la" in ed.permission_text()
    ed.answer_permission("1")
    ed.wait_done(count)
    text = ed.turn_text()
    assert tool_headers(text) == ["⚙ bash: ls -la  [execute] completed"]
    assert "bash -> ran: ls -la" in text


def test_a_call_known_only_by_its_permission_request_is_named_by_it(ed: Editor) -> None:
    """qwen-code's write_file: no tool_call, only the request and a final untitled update."""
    count = len(ed.done()) + 1
    ed.ask("/permission-only make")
    ed.permission_win()
    assert "⚙ bash: make  [execute] pending" in ed.turn_text()  # drawn as the prompt opens
    ed.answer_permission("1")
    ed.wait_done(count)
    text = ed.turn_text()
    assert tool_headers(text) == ["⚙ bash: make  [execute] completed"]
    assert "ran: make" in text


def test_the_call_asked_about_is_in_the_turn_float_when_its_prompt_opens(ed: Editor) -> None:
    count = len(ed.done()) + 1
    ed.ask("/say first the words\n/bash echo order")
    ed.permission_win()
    text = ed.turn_text()
    assert "first the words" in text
    assert "⚙ bash: echo order  [execute] pending" in text
    ed.answer_permission("1")
    ed.wait_done(count)
    assert "⚙ bash: echo order  [execute] completed" in ed.turn_text()


def test_the_same_tool_call_id_twice_is_one_line(ed: Editor) -> None:
    done, text = ed.turn("/dup-toolcall")
    assert done["stop_reason"] == "end_turn"
    assert tool_headers(text) == ["⚙ bash: second  [execute] completed"]
    assert "dup -> dup done" in text


def test_a_tool_call_with_empty_input(ed: Editor) -> None:
    done, text = ed.turn("/empty-input")
    assert done["stop_reason"] == "end_turn"
    assert tool_headers(text) == ["⚙ read: somewhere  [read] completed"]
    assert "input:" not in text
    assert "empty -> read nothing" in text


def test_diff_content_in_a_permission_request_is_shown_as_a_diff(ed: Editor) -> None:
    count = len(ed.done()) + 1
    ed.ask("/diff")
    shown = ed.permission_text().splitlines()
    assert "edit: a.txt" in shown
    assert any(line.startswith("--- a/") and line.endswith("a.txt") for line in shown)
    assert "-old" in shown and "+new" in shown
    ed.answer_permission("1")
    ed.wait_done(count)
    assert "edit -> applied" in ed.turn_text()


def test_terminal_content_without_the_capability(ed: Editor) -> None:
    done, text = ed.turn("/terminal")
    assert done["stop_reason"] == "end_turn"
    assert tool_headers(text) == ["⚙ bash: make  [execute] completed"]
    assert "terminal -> made" in text


def test_a_rejected_permission_may_end_the_turn_cancelled(ed: Editor) -> None:
    count = len(ed.done()) + 1
    ed.ask("/reject-cancels rm -rf build")
    assert "bash: rm -rf build" in ed.permission_text()
    ed.answer_permission("q")
    done = ed.wait_done(count)
    assert done["stop_reason"] == "cancelled"
    text = ed.turn_text()
    assert "[bash rejected by user]" in text
    assert "■ cancelled" in text
    assert "error" not in text
