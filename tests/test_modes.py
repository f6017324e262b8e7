"""Session modes and config options in the editor, end to end: a real headless Neovim, its
Python host, and tests/agents/modes.py (a real agent process offering modes ``auto`` (its
start), ``default`` ("Ask"), ``plan`` and the options ``model`` and ``web``). Each test asserts
what crossed the wire (the agent's own log of what it received) or what the user sees (the
float's title, notifications, the statusline).

Also here: the agent-file mismatches that used to be silent (client tools turned off in mm's
agent file), in a notification and in :checkhealth.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from helpers.pickers import PICK
from helpers.shared_nvim import SharedNvim
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file, editor_with

AGENT = Path(__file__).with_name("agents") / "modes.py"


def wire(tmp_path: Path, method: str) -> list[dict[str, Any]]:
    log = tmp_path / "wire.jsonl"
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [m.get("params") or {} for m in lines if m.get("method") == method]


def methods(tmp_path: Path) -> list[str]:
    log = tmp_path / "wire.jsonl"
    return [json.loads(line)["method"] for line in log.read_text().splitlines()]


SHARED = SharedNvim(each=PICK)


@contextmanager
def modes_editor(
    tmp_path: Path, agent_mode: str | None = None, fresh: bool = False, **opts: Any
) -> Iterator[Editor]:
    agent: dict[str, Any] = {
        "cmd": [sys.executable, str(AGENT)],
        "env": {"MODES_LOG": str(tmp_path / "wire.jsonl"), **opts.pop("env", {})},
    }
    if agent_mode is not None:
        agent["mode"] = agent_mode
    with SHARED.editor_with(tmp_path, {"agent": agent, **opts}, fresh=fresh, timeout=20.0) as ed:
        yield ed


def title(ed: Editor) -> str:
    turn = ed.lua("return require('minime.ui.turn').get(...)", ed.cwd)
    config = ed.float_config(turn["win"])
    return "".join(part[0] for part in config["title"])


def wait_title(ed: Editor, needle: str) -> str:
    def shown() -> str | None:
        text = title(ed)
        return text if needle in text else None

    return wait_for(shown, 10, message=f"for {needle!r} in the title")


def mode_calls(tmp_path: Path) -> list[str]:
    return [p["modeId"] for p in wire(tmp_path, "session/set_mode")]


# -- the mode chosen in setup() or the agent's definition ----------------------------------------


def test_setup_mode_is_set_when_the_session_opens_before_the_first_prompt(tmp_path: Path) -> None:
    with modes_editor(tmp_path, agent_mode="plan", mode="default") as ed:
        _, text = ed.turn("which")
        assert "mode is default" in text, "the agent was in the mode before the prompt"
        assert mode_calls(tmp_path) == ["default"], "setup's mode wins over the definition's"
        sent = methods(tmp_path)
        assert sent.index("session/set_mode") < sent.index("session/prompt")
        assert "mode: Ask" in wait_title(ed, "mode: Ask")
        ed.turn("which")
        assert mode_calls(tmp_path) == ["default"], "set once per session, not per ask"


def test_the_agent_definitions_mode_applies_without_a_setup_mode(tmp_path: Path) -> None:
    with modes_editor(tmp_path, agent_mode="plan") as ed:
        _, text = ed.turn("which")
        assert "mode is plan" in text
        assert mode_calls(tmp_path) == ["plan"]


def test_no_mode_chosen_sends_no_set_mode_and_shows_the_agents_own(tmp_path: Path) -> None:
    with modes_editor(tmp_path) as ed:
        ed.turn("which")
        assert mode_calls(tmp_path) == []
        wait_title(ed, "mode: Auto")
        status = ed.lua("return require('minime.status').statusline()")
        assert status == "minime · mode: Auto"


def test_a_mode_the_agent_does_not_offer_is_a_warning_once(tmp_path: Path) -> None:
    with modes_editor(tmp_path, mode="yolo") as ed:
        ed.turn("which")
        ed.nvim.command("MiniMeReset")
        ed.turn("which")  # a second session: the same warning is not repeated
        warnings = [n for n in ed.notes() if "not set" in n]
        assert warnings == [
            "minime: mode = 'yolo' not set: modes-agent offers no mode 'yolo'; "
            "its modes: auto, default, plan"
        ]
        assert mode_calls(tmp_path) == []


def test_an_agent_without_modes_is_a_warning_and_shows_no_mode(tmp_path: Path) -> None:
    with modes_editor(tmp_path, mode="default", env={"MODES_OFFER": "none"}) as ed:
        ed.turn("which")
        ed.wait_note("mode = 'default' not set: modes-agent offers no session modes")
        assert "mode:" not in title(ed)
        ed.nvim.command("MiniMeMode")
        ed.wait_note("modes-agent offers no session modes")


def test_an_agent_that_never_answers_set_mode_keeps_no_ask_waiting(tmp_path: Path) -> None:
    opts = {"mode": "default", "ready_timeout": 1, "env": {"MODES_SET_MODE": "mute"}}
    with modes_editor(tmp_path, **opts) as ed:
        done, text = ed.turn("which")
        assert done["stop_reason"] == "end_turn" and "mode is auto" in text
        ed.wait_note(
            "the mode 'default' was not set: modes-agent did not answer session/set_mode "
            "within 1 s; it stays in 'auto'"
        )


def test_a_reopened_session_gets_the_setup_mode_too(tmp_path: Path) -> None:
    with modes_editor(tmp_path, mode="default") as ed:
        ed.lua("require('minime').load_session('stored-7')")
        ed.wait_done()
        wait_title(ed, "mode: Ask")
        sent = wire(tmp_path, "session/set_mode")
        assert sent == [{"sessionId": "stored-7", "modeId": "default"}]
        _, text = ed.turn("which")
        assert "mode is default" in text


# -- :MiniMeMode ----------------------------------------------------------------------------------


def test_minime_mode_with_an_id_sets_it_and_the_title_shows_it(tmp_path: Path) -> None:
    with modes_editor(tmp_path) as ed:
        ed.turn("which")
        ed.nvim.command("MiniMeMode plan")
        wait_title(ed, "mode: Plan")
        assert mode_calls(tmp_path) == ["plan"]
        ed.wait_note(f"mode Plan (plan) in {ed.cwd}")
        _, text = ed.turn("which")
        assert "mode is plan" in text


def test_minime_mode_without_an_id_offers_the_modes(tmp_path: Path) -> None:
    with modes_editor(tmp_path) as ed:
        ed.turn("which")
        ed.lua("_G.pick = { 'Plan' }")
        ed.nvim.command("MiniMeMode")
        wait_title(ed, "mode: Plan")
        assert mode_calls(tmp_path) == ["plan"]
        (offer,) = ed.lua("return _G.offers")
        assert offer["items"] == [
            "● Auto — Edits without asking",
            "  Ask — Asks before editing",
            "  Plan — Reads only",
        ]


def test_minime_mode_completes_the_offered_ids(tmp_path: Path) -> None:
    with modes_editor(tmp_path) as ed:
        assert ed.lua("return vim.fn.getcompletion('MiniMeMode ', 'cmdline')") == []
        ed.turn("which")
        assert ed.lua("return vim.fn.getcompletion('MiniMeMode ', 'cmdline')") == [
            "auto",
            "default",
            "plan",
        ]
        assert ed.lua("return vim.fn.getcompletion('MiniMeMode p', 'cmdline')") == ["plan"]


def test_an_unknown_mode_is_refused_plainly_and_nothing_is_sent(tmp_path: Path) -> None:
    with modes_editor(tmp_path) as ed:
        ed.turn("which")
        ed.nvim.command("MiniMeMode yolo")
        ed.wait_note("minime: modes-agent offers no mode 'yolo'; its modes: auto, default, plan")
        ed.turn("which")  # the agent has read all that was sent before
        assert mode_calls(tmp_path) == []
        assert "mode: Auto" in title(ed)


def test_the_agent_changing_its_mode_is_followed_in_the_float(tmp_path: Path) -> None:
    with modes_editor(tmp_path, mode="default") as ed:
        ed.turn("which")
        wait_title(ed, "mode: Ask")
        ed.turn("switch plan")
        wait_title(ed, "mode: Plan")
        assert ed.lua("return vim.fn.getcompletion('MiniMeMode ', 'cmdline')") != []
        assert "mode: Plan" in ed.lua("return require('minime.status').statusline()")
        assert ed.turn_errors() == []


def test_minime_mode_mid_turn_is_sent_while_the_turn_runs(tmp_path: Path) -> None:
    with modes_editor(tmp_path) as ed:
        ed.ask("wait")
        ed.wait_text("waiting for a mode")
        assert ed.lua("return require('minime.ui.turn').get(...).running", ed.cwd)
        ed.nvim.command("MiniMeMode default")
        done = ed.wait_done()
        assert done["stop_reason"] == "end_turn"
        assert "mode now default" in ed.turn_text()
        assert mode_calls(tmp_path) == ["default"]
        wait_title(ed, "mode: Ask")


def test_minime_mode_before_any_session_says_so_and_starts_nothing(tmp_path: Path) -> None:
    with modes_editor(tmp_path, fresh=True) as ed:  # no host yet
        ed.nvim.command("MiniMeMode plan")
        ed.nvim.command("MiniMeConfig model smart")
        notes = ed.notes()
        assert notes == [
            f"minime: no session in {ed.cwd} yet: :MiniMeAsk starts one, then :MiniMeMode",
            f"minime: no session in {ed.cwd} yet: :MiniMeAsk starts one, then :MiniMeConfig",
        ]
        assert ed.lua("return require('minime.host').chan") is None, "no host was started"
        assert not (tmp_path / "wire.jsonl").exists()


def test_minime_reset_forgets_the_mode_of_the_closed_session(tmp_path: Path) -> None:
    with modes_editor(tmp_path) as ed:
        ed.turn("which")
        wait_title(ed, "mode: Auto")
        ed.nvim.command("MiniMeReset")
        wait_for(
            lambda: ed.lua("return require('minime.modes').get() == nil"), 10, message="forgotten"
        )
        ed.nvim.command("MiniMeMode plan")
        ed.wait_note("yet: :MiniMeAsk starts one, then :MiniMeMode")


# -- :MiniMeConfig --------------------------------------------------------------------------------


def test_minime_config_sets_an_option_by_words_and_by_picking(tmp_path: Path) -> None:
    with modes_editor(tmp_path) as ed:
        ed.turn("which")
        ed.nvim.command("MiniMeConfig model smart")
        ed.wait_note(f"model = smart in {ed.cwd}")
        ed.nvim.command("MiniMeConfig web on")
        ed.wait_note(f"web = true in {ed.cwd}")
        ed.lua("_G.pick = { 'Model', 'Fast model' }")
        ed.nvim.command("MiniMeConfig")
        ed.wait_note(f"model = fast in {ed.cwd}")
        sent = [(p["configId"], p["value"]) for p in wire(tmp_path, "session/set_config_option")]
        assert sent == [("model", "smart"), ("web", True), ("model", "fast")]
        offers = ed.lua("return _G.offers")
        assert offers[0]["items"] == ["Model (model): smart", "Web search (web): true"]
        assert offers[1]["items"] == ["  Fast model", "● Smart model"]


def test_minime_config_refuses_an_unknown_option_or_value_plainly(tmp_path: Path) -> None:
    with modes_editor(tmp_path) as ed:
        ed.turn("which")
        ed.nvim.command("MiniMeConfig model huge")
        ed.wait_note("config option 'model' has no value 'huge'; its values: fast, smart")
        ed.nvim.command("MiniMeConfig colour")
        ed.wait_note("has no config option 'colour'; its options: model, web")
        ed.turn("which")
        assert wire(tmp_path, "session/set_config_option") == []


def test_minime_config_completes_options_then_values(tmp_path: Path) -> None:
    with modes_editor(tmp_path) as ed:
        ed.turn("which")
        complete = "return vim.fn.getcompletion(..., 'cmdline')"
        assert ed.lua(complete, "MiniMeConfig ") == ["model", "web"]
        assert ed.lua(complete, "MiniMeConfig model ") == ["fast", "smart"]
        assert ed.lua(complete, "MiniMeConfig web ") == ["true", "false"]
        assert ed.lua(complete, "MiniMeConfig model fast ") == []


def test_the_agent_changing_an_option_is_followed(tmp_path: Path) -> None:
    with modes_editor(tmp_path) as ed:
        ed.turn("model smart")
        wait_for(
            lambda: ed.lua("return require('minime.modes').get().config[1].current") == "smart",
            10,
            message="the model option to follow the agent",
        )


# -- agent-file mismatches -------------------------------------------------------------------------


def test_an_agent_file_that_turns_client_tools_off_is_a_warning(tmp_path: Path) -> None:
    config = agent_file(tmp_path, acp={"clientTools": {"enabled": False}})
    with editor_with(tmp_path, {"mm": FAKE_MM_BIN, "config": config}, timeout=30.0) as ed:
        ed.turn("/say hi")
        ed.turn("/say again")
        warned = [n for n in ed.notes() if "turns client tools off" in n]
        assert warned == [
            f"minime: the agent file {config} turns client tools off "
            "(acp.clientTools.enabled: false): the agent cannot read your buffers"
        ], "said once, plainly"
        ed.nvim.command("checkhealth minime")
        text = "\n".join(ed.nvim.current.buffer[:])
    assert "WARNING client tools are off in the agent file (acp.clientTools.enabled: false)" in text
    assert "Set acp.clientTools.enabled: true in the agent file." in text


def test_checkhealth_names_the_session_mode_to_be_set(tmp_path: Path) -> None:
    with modes_editor(tmp_path, mode="default") as ed:
        ed.nvim.command("checkhealth minime")
        text = "\n".join(ed.nvim.current.buffer[:])
    assert 'session mode "default": set when a session opens, if the agent offers it' in text
