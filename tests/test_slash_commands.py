"""The agent's slash commands in the editor, end to end: a real headless Neovim, its host and
the fake mm (the demo's scripted mm, which advertises its script's commands with
``available_commands_update`` just after each session's answer; ``commands_early`` before it;
``/commands NAME…`` replaces the list mid-turn). Asserted: what completion offers (built-in
``getcompletion``, the input buffer's omnifunc), what :MiniMeCommands lists and puts in the
input, and the prompt text that crosses the wire."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.pickers import PICK
from helpers.shared_nvim import SharedNvim
from nvim_harness import wait_for
from plugin_harness import FAKE_MM_BIN, Editor, agent_file

DEMO_COMMANDS = [
    "/say",
    "/think",
    "/chunks",
    "/slow",
    "/plan",
    "/tools",
    "/tool",
    "/parallel",
    "/bash",
    "/diff",
    "/error",
    "/help",
    "/tour",
    "/wait",
    "/question",
    "/run",
    "/shell-write",
    "/ask-write",
    "/fs-write",
    "/locate",
]


SHARED = SharedNvim(each=PICK)


def fake_editor(tmp_path: Path, **fake: Any) -> Any:
    config = agent_file(tmp_path, fake=fake or None)
    return SHARED.editor_with(tmp_path, {"mm": FAKE_MM_BIN, "config": config}, timeout=20.0)


def completed(ed: Editor, line: str) -> list[str]:
    return ed.lua("return vim.fn.getcompletion(..., 'cmdline')", line)


def wait_completed(ed: Editor, line: str, want: list[str]) -> None:
    wait_for(
        lambda: completed(ed, line) == want,
        10,
        message=f"for {line!r} to complete to {want}",
    )


def prompts_sent(tmp_path: Path) -> list[str]:
    sent = []
    for line in (tmp_path / "trace.jsonl").read_text().splitlines():
        msg = json.loads(line)["msg"]
        if msg.get("method") == "session/prompt":
            sent.append("".join(b.get("text", "") for b in msg["params"]["prompt"]))
    return sent


def test_the_agents_commands_complete_on_minime_ask(tmp_path: Path) -> None:
    with fake_editor(tmp_path) as ed:
        assert completed(ed, "MiniMeAsk /") == []  # no session yet: nothing offered
        ed.turn("hello")
        wait_completed(ed, "MiniMeAsk /", DEMO_COMMANDS)
        assert completed(ed, "MiniMeAsk /t") == ["/think", "/tools", "/tool", "/tour"]
        assert completed(ed, "'<,'>MiniMeAsk /pa") == ["/parallel"]
        # Only the first word of the ask is a command.
        assert completed(ed, "MiniMeAsk say /t") == []


def test_a_command_is_sent_as_the_prompt_text(tmp_path: Path) -> None:
    with fake_editor(tmp_path) as ed:
        done, text = ed.turn("/say hi there")
        assert done["stop_reason"] == "end_turn"
        assert "hi there" in text
        assert prompts_sent(tmp_path) == ["/say hi there"]


def test_the_input_floats_omnifunc_completes_commands_with_description_and_hint(
    tmp_path: Path,
) -> None:
    with fake_editor(tmp_path) as ed:
        ed.turn("hello")
        wait_completed(ed, "MiniMeAsk /", DEMO_COMMANDS)
        ed.nvim.command("MiniMeAsk")  # the input float
        buf = ed.lua("return vim.api.nvim_get_current_buf()")
        assert ed.lua("return vim.bo.omnifunc") == "v:lua.require'minime.ui.complete'.func"
        ed.nvim.command("stopinsert")
        ed.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, {'/to'})")
        ed.lua("vim.api.nvim_win_set_cursor(0, {1, 3})")
        start = ed.lua("return require('minime.ui.complete').func(1, '')")
        assert start == 0
        items = ed.lua("return require('minime.ui.complete').func(0, '/to')")
        assert [i["word"] for i in items] == ["/tools", "/tool", "/tour"]
        tool = items[1]
        assert "Call a client tool" in tool["menu"]
        assert "NAME [JSON arguments]" in tool["menu"]
        assert "input: NAME [JSON arguments]" in tool["info"]
        # Not at the start of the ask: nothing (-3 leaves completion quietly).
        ed.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, {'say /to'})")
        ed.lua("vim.api.nvim_win_set_cursor(0, {1, 7})")
        assert ed.lua("return require('minime.ui.complete').func(1, '')") == -3
        assert buf == ed.lua("return vim.api.nvim_get_current_buf()")


def test_builtin_omni_completion_inserts_the_command(tmp_path: Path) -> None:
    with fake_editor(tmp_path) as ed:
        ed.turn("hello")
        wait_completed(ed, "MiniMeAsk /", DEMO_COMMANDS)
        ed.nvim.command("MiniMeAsk")
        ed.nvim.input("/dif")
        wait_for(lambda: ed.lua("return vim.api.nvim_get_current_line()") == "/dif", 5)
        ed.nvim.input("<C-x><C-o>")
        wait_for(
            lambda: ed.lua("return vim.api.nvim_get_current_line()") == "/diff",
            5,
            message="for <C-x><C-o> to complete /diff",
        )


def test_a_list_sent_before_the_session_new_answer_is_kept(tmp_path: Path) -> None:
    with fake_editor(tmp_path, commands_early=True) as ed:
        ed.turn("hello")
        wait_completed(ed, "MiniMeAsk /", DEMO_COMMANDS)
        lines = (tmp_path / "trace.jsonl").read_text().splitlines()
        out = [json.loads(x)["msg"] for x in lines if json.loads(x)["dir"] == "out"]
        update = next(i for i, m in enumerate(out) if "availableCommands" in json.dumps(m))
        answer = next(i for i, m in enumerate(out) if "sessionId" in (m.get("result") or {}))
        assert update < answer  # it did come first


def test_a_later_update_replaces_the_list(tmp_path: Path) -> None:
    with fake_editor(tmp_path) as ed:
        ed.turn("hello")
        wait_completed(ed, "MiniMeAsk /", DEMO_COMMANDS)
        ed.turn("/commands review compact")
        wait_completed(ed, "MiniMeAsk /", ["/review", "/compact"])
        ed.turn("/commands")
        wait_completed(ed, "MiniMeAsk /", [])


def test_minime_commands_lists_them_and_puts_the_chosen_in_the_input(tmp_path: Path) -> None:
    with fake_editor(tmp_path) as ed:
        ed.nvim.command("MiniMeCommands")
        ed.wait_note("no session in")
        ed.turn("hello")
        wait_completed(ed, "MiniMeAsk /", DEMO_COMMANDS)
        ed.lua("_G.pick = { '/bash' }")
        ed.nvim.command("MiniMeCommands")
        (offer,) = ed.lua("return _G.offers")
        assert offer["items"][0] == "/say — Answer with this text, in one chunk ‹text›"
        assert (
            "/bash — Run a command with the built-in bash (asks first) ‹command›"
            in (offer["items"])
        )
        wait_for(lambda: ed.lua("return vim.b.minime") == "input", 5)
        assert ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["/bash "]


def test_an_agent_that_sends_no_commands_is_said_by_minime_commands(tmp_path: Path) -> None:
    with fake_editor(tmp_path) as ed:
        ed.turn("/commands")
        wait_completed(ed, "MiniMeAsk /", [])
        ed.nvim.command("MiniMeCommands")
        ed.wait_note("sent no slash commands for")
