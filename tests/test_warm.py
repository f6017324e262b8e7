"""The first ask's start-up while it is typed (lua/minime/warm.lua, the host's op_warm): the
host, the agent and its session start on `:MiniMeAsk…` before <CR>; nothing starts in an idle
editor or with `warm = false`; an abandoned ask sends nothing; a warm-up that fails is silent
until the ask."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from helpers.wire import trace_rows
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor, editor_with


def children(ed: Editor) -> list[str]:
    pid = ed.lua("return vim.fn.getpid()")
    return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()


def type_keys(ed: Editor, keys: str, cmdline: str) -> None:
    """Type ``keys`` one by one (as a user does), until the command line reads ``cmdline``."""
    for key in keys:
        ed.nvim.input(key)
    wait_for(lambda: ed.nvim.eval("getcmdline()") == cmdline, 10, message=f"for :{cmdline}")


def received(trace: Path) -> list[Any]:
    """The methods the fake mm received, in order (requests and notifications)."""
    rows = trace_rows(trace)  # complete rows only: the fake may be writing the last one
    return [m["msg"].get("method") for m in rows if m["dir"] == "in" and "method" in m["msg"]]


def test_nothing_starts_in_an_idle_editor(tmp_path: Path) -> None:
    with editor(tmp_path) as ed:
        ed.nvim.command("edit notes.txt")
        # An observation window, not a synchronisation: an idle editor must stay so.
        time.sleep(3)
        assert children(ed) == []
        assert ed.lua("return require('minime.host').chan") is None
        assert ed.lua("return package.loaded['minime.warm'] == nil")


def test_typing_minimeask_starts_the_agent_and_an_abandoned_ask_sends_nothing(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "trace.jsonl"
    with editor(tmp_path, config=agent_file(tmp_path, yolo=True)) as ed:
        type_keys(ed, ":MiniMe", "MiniMe")
        assert ed.lua("return require('minime.host').chan") is not None  # the host, at once
        type_keys(ed, "Ask expl", "MiniMeAsk expl")
        wait_for(lambda: "session/new" in received(trace), 30, message="for the warm session")
        assert ed.lua("return require('minime.ui.turn').get(vim.fn.getcwd())") is None
        ed.nvim.input("<Esc>")  # abandoned
        wait_for(lambda: ed.nvim.eval("mode()") == "n", 5)
        assert ed.notes() == []
        ed.ask("the real one")
        done = ed.wait_done()
        assert done["stop_reason"] == "end_turn"
        # One agent, one session, and only the ask that was sent reached it.
        assert received(trace).count("initialize") == 1
        assert received(trace).count("session/new") == 1
        prompts = [
            json.loads(line)["msg"]["params"]["prompt"][0]["text"]
            for line in trace.read_text().splitlines()
            if '"session/prompt"' in line and '"dir":"in"' in line
        ]
        assert prompts == ["the real one"]


def test_after_minimestop_the_next_typed_ask_warms_again(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    with editor(tmp_path, config=agent_file(tmp_path, yolo=True)) as ed:
        type_keys(ed, ":MiniMeAsk a", "MiniMeAsk a")
        wait_for(lambda: "session/new" in received(trace), 30, message="for the warm session")
        ed.nvim.input("<Esc>")
        wait_for(lambda: ed.nvim.eval("mode()") == "n", 5)
        ed.nvim.command("MiniMeStop")
        ed.wait_note("agent stopped")
        type_keys(ed, ":MiniMeAsk b", "MiniMeAsk b")
        wait_for(lambda: received(trace).count("session/new") == 2, 30, message="for a new agent")
        assert received(trace).count("initialize") == 2


def test_warm_false_starts_nothing_while_typing(tmp_path: Path) -> None:
    with editor(tmp_path, warm=False) as ed:
        type_keys(ed, ":MiniMeAsk explain", "MiniMeAsk explain")
        ed.nvim.input("<Esc>")
        wait_for(lambda: ed.nvim.eval("mode()") == "n", 5)
        assert ed.lua("return require('minime.host').chan") is None
        assert children(ed) == []


def test_the_input_float_warms_the_session(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    with editor(tmp_path, config=agent_file(tmp_path, yolo=True)) as ed:
        ed.nvim.input("<Plug>(minime-ask)")
        wait_for(lambda: "session/new" in received(trace), 30, message="for the warm session")
        assert ed.lua("return vim.api.nvim_win_get_config(0).relative") != ""  # the input
        assert ed.lua("return require('minime.ui.turn').get(vim.fn.getcwd())") is None


def host_log(ed: Editor) -> str:
    """:MiniMeLog's text (its split is closed again)."""
    ed.nvim.command("MiniMeLog")
    wait_for(lambda: ed.nvim.eval("bufname()") == "minime://log", 10, message="for the log")
    text = "\n".join(ed.nvim.current.buffer[:])
    ed.nvim.command("close")
    return text


def test_a_warm_up_that_fails_says_nothing_until_the_ask(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    config = agent_file(tmp_path, fake={"never_initialize": True})
    opts = {"mm": FAKE_MM_BIN, "config": config, "ready_timeout": 1}
    with editor_with(tmp_path, opts, timeout=30.0) as ed:
        type_keys(ed, ":MiniMeAsk hi", "MiniMeAsk hi")
        wait_for(lambda: "initialize" in received(trace), 30, message="for the warm-up")
        ed.nvim.input("<Esc>")
        wait_for(lambda: ed.nvim.eval("mode()") == "n", 5)
        wait_for(lambda: "warm-up for" in host_log(ed), 30, message="for the warm-up to fail")
        assert ed.notes() == []  # the failure is the log's, not the user's
        assert ed.lua("return require('minime.ui.turn').get(vim.fn.getcwd())") is None
        done, text = ed.turn("hi")
        assert done["stop_reason"] == "error"
        assert "initialize" in done["error"], done
        assert received(trace).count("initialize") == 2  # the ask started it again...
        assert text.count(done["error"]) == 1  # ...and said why, once
