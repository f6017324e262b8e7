"""What real ACP agents send, end to end: a real Neovim, its Python host, and
tests/agents/shapes.py (an agent that sends each shape seen from codex-acp, claude-agent-acp,
qwen-code and the SDK's example agent) as an inline agent. Each test reads what the user sees
in the turn float, or every event the float was given.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nvim_harness import wait_for
from plugin_harness import Editor, editor_with

SHAPES = Path(__file__).with_name("agents") / "shapes.py"

# Every event the turn float is given, as JSON; what :MiniMeLog would show; the picker
# :MiniMeSessions opens.
WATCH = """
_G.applied, _G.picks = {}, {}
local turn = require('minime.ui.turn')
local apply = turn.apply
turn.apply = function(key, events)
  for _, ev in ipairs(events) do table.insert(_G.applied, vim.json.encode(ev)) end
  return apply(key, events)
end
require('minime.rpc').show_log = function(lines) _G.log_lines = lines end
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.picks, #items)
  _G.pick = function(i) on_choice(items[i], i) end
end
"""


@contextlib.contextmanager
def shapes_editor(tmp_path: Path, **env: str) -> Iterator[Editor]:
    agent: dict[str, Any] = {"cmd": [sys.executable, str(SHAPES)], "label": "shapes-agent"}
    if env:
        agent["env"] = env
    with editor_with(tmp_path, {"agent": agent}, WATCH, timeout=30.0) as ed:
        yield ed


def wait_flushed(ed: Editor, count: int) -> None:
    """Until the host has read the agent's ``count``-th ``_shapes/flushed`` (sent after its
    late updates): a prompt sent before would get them as its own, from any agent."""

    def flushed() -> bool:
        ed.nvim.command("MiniMeLog")
        lines = ed.lua("return _G.log_lines") or []
        return sum("ignored notification _shapes/flushed" in line for line in lines) >= count

    wait_for(flushed, 20, message="for the agent's late updates")


def applied(ed: Editor) -> str:
    return "\n".join(ed.lua("return _G.applied"))


def after(lines: list[str], first: str, count: int) -> list[str]:
    start = lines.index(first)
    return lines[start : start + count]


def tool_body(lines: list[str], header: str) -> list[str]:
    """The indented lines under a tool's header line."""
    start = lines.index(header) + 1
    body = []
    for line in lines[start:]:
        if not line.startswith("    "):
            break
        body.append(line[4:])
    return body


def test_messages_of_one_turn_are_paragraphs_and_start_at_their_text(tmp_path: Path) -> None:
    """Bullets 1 and 7: a new messageId is a new paragraph (not `hello.txt.All done`), and a
    thought or message starting with blank lines starts at its text."""
    with shapes_editor(tmp_path) as ed:
        done, _ = ed.turn("messages")
        assert done["stop_reason"] == "end_turn"
        lines = ed.turn_lines()
    assert lines[0] == "> messages"
    assert after(lines, "**Planning**", 7) == [
        "**Planning**",
        "",
        "write the file",
        "",
        "I wrote hello.txt.",
        "",
        "All done, bye.",
    ], lines


def test_tool_output_wherever_the_agent_puts_it(tmp_path: Path) -> None:
    """Bullet 2 (and 3's kinds): qwen's text in content with rawOutput "", codex's JSON
    rawOutput, an edit's diff (relative path; its 252 KB JSON rawOutput not drawn), terminal content
    this client never created; a tool_call_update without kind keeps the call's kind."""
    with shapes_editor(tmp_path) as ed:
        done, text = ed.turn("qwen codex edit terminal nokind")
        assert done["stop_reason"] == "end_turn"
        lines = ed.turn_lines()
    assert tool_body(lines, "⚙ ReadFile a.txt  [read] completed") == ["line one", "line two"]
    assert tool_body(lines, "⚙ Run ls  [execute] completed") == ["a.txt"]
    edit = tool_body(lines, "⚙ Edit src/app.py  [edit] completed")
    assert edit[:7] == [
        "--- a/src/app.py",
        "+++ b/src/app.py",
        "@@ -1,2 +1,2 @@",
        " a = 1",
        "-b = 2",
        "+b = 20",
    ], edit  # the 252 KB JSON rawOutput beside the diff is the same two files: not drawn
    assert max(len(line.encode()) for line in lines) <= 12_100, "no line of half a megabyte"
    assert len(text.encode()) < 40_000
    assert tool_body(lines, "⚙ Run x1  [execute] completed") == ["built ok"]
    assert tool_body(lines, "⚙ Run x2  [execute] completed") == [
        "(the output is in the agent's terminal term-x2, which this client never created)"
    ]
    assert tool_body(lines, "⚙ Find needle  [search] completed") == ["found"]
    assert "[other]" not in text


def test_an_mcp_tools_call_tool_result_shows_as_its_text(tmp_path: Path) -> None:
    """I2: codex-acp's MCP result (rawOutput only, the CallToolResult wrapped) is its text, not
    13 lines of JSON; a failure shows its error."""
    with shapes_editor(tmp_path) as ed:
        done, _ = ed.turn("mcpresult")
        assert done["stop_reason"] == "end_turn"
        lines = ed.turn_lines()
    ok, failed = [i for i, line in enumerate(lines) if line.startswith("⚙ mcp.minime.")]
    assert tool_body(lines, lines[ok]) == ['{"text":"unsaved words"}'], lines
    assert tool_body(lines, lines[failed]) == ["error: tool call failed: the server is gone"]


def test_a_tool_line_shows_the_call_as_the_library_merged_it(tmp_path: Path) -> None:
    """The line shows the merged call as it is: ACP's default kind where none was named, an
    update's title ``""`` replaces the earlier one (the line shows the call's id, as for a call
    never titled), an update naming no kind keeps the call's."""
    with shapes_editor(tmp_path) as ed:
        ed.turn("fields")
        lines = ed.turn_lines()
    headers = [line for line in lines if line.startswith("⚙ ")]
    assert headers == [
        "⚙ Plan the change  [other] completed",
        "⚙ f2  [execute] completed",
        "⚙ f3  [other] completed",
    ], lines


def test_a_tool_call_that_arrives_completed_shows_its_content(tmp_path: Path) -> None:
    """A ``tool_call`` already ``completed`` with text ``content`` and ``rawOutput`` "": its
    text is drawn under it, as for a call completed by an update."""
    with shapes_editor(tmp_path) as ed:
        ed.turn("ready")
        lines = ed.turn_lines()
    assert tool_body(lines, "⚙ Grep needle  [search] completed") == ["found it", "at line 3"]


def test_tools_left_running_say_they_ended_without_a_status(tmp_path: Path) -> None:
    """Bullet 4."""
    with shapes_editor(tmp_path) as ed:
        ed.turn("unended")
        lines = ed.turn_lines()
    assert "⚙ Waits for ever  [fetch] (ended without a status)" in lines
    assert "⚙ Runs for ever  [execute] (ended without a status)" in lines
    assert not any(line.endswith((" pending", " in_progress")) for line in lines)


def test_updates_after_a_turn_are_not_drawn(tmp_path: Path) -> None:
    """Bullet 3: a finished turn's late tool_call_update and chunk go nowhere visible: not into
    the finished turn, nor into the next one, even when they come while it runs."""
    with shapes_editor(tmp_path) as ed:
        ed.turn("late")
        assert "⚙ Slow  [execute] (ended without a status)" in ed.turn_lines()
        wait_flushed(ed, 1)
        _, text = ed.turn("ping")
        assert "pong" in text
        _, stale = ed.turn("stale")  # l1's update comes inside this turn
        assert "fresh" in stale and "Slow" not in stale
        seen = applied(ed)
    assert "LATE-AFTER-TURN" not in seen


def test_a_loaded_session_replays_messages_apart_and_ignores_later_updates(
    tmp_path: Path,
) -> None:
    """Bullets 1 and 3: the replayed messages are paragraphs of their own; updates after
    session/load answered are not drawn into the loaded turn (its replay handler is gone)."""
    with shapes_editor(tmp_path) as ed:
        ed.nvim.command("MiniMeSessions")
        wait_for(lambda: ed.lua("return _G.picks")[0] if ed.lua("return _G.picks") else None, 20)
        ed.lua("_G.pick(1)")
        ed.wait_done()
        wait_flushed(ed, 1)
        lines = ed.turn_lines()
        _, text = ed.turn("ping")
        assert "pong" in text
        seen = applied(ed)
    assert after(lines, "> first question", 7) == [
        "> first question",
        "",
        "first answer.",
        "",
        "> second question",
        "",
        "second answer.",
    ], lines
    assert "⚙ Old search  [search] completed" in lines
    # codex-acp 2.6 replays a command's output in updates without a status.
    assert tool_body(lines, "⚙ Run make  [execute] completed") == [
        "compiled",
        "linked",
        "(exit code 0)",
    ], lines
    # I4: codex-acp's replay of a finished command: its output after the call came ended.
    assert tool_body(lines, "⚙ Run tests  [execute] completed") == ["3 passed", "(exit code 0)"]
    assert tool_body(lines, "⚙ mcp.minime.read_buffer  [execute] completed") == [
        '{"text":"unsaved words"}'
    ], lines
    assert "LATE-AFTER-LOAD" not in seen


def test_an_agent_without_agent_info_is_named_by_its_definition(tmp_path: Path) -> None:
    """Bullet 8: not after its interpreter (`python3 keeps no sessions`)."""
    with shapes_editor(tmp_path, SHAPES_NO_SESSIONS="1") as ed:
        ed.nvim.command("MiniMeSessions")
        note = ed.wait_note("keeps no sessions to reopen")
    assert note.startswith("minime: shapes-agent keeps no sessions"), note


def test_sessions_never_asks_an_agent_that_lists_none_and_tells_a_refusal_from_a_death(
    tmp_path: Path,
) -> None:
    """I5: gemini-cli can load a session but lists none (``sessionCapabilities: {}``): no
    session/list is sent (it showed the raw "Method not found"); a list that fails while the
    agent lives is said plainly, the agent kept."""
    with shapes_editor(tmp_path, SHAPES_SESSIONS="load") as ed:
        ed.nvim.command("MiniMeSessions")
        note = ed.wait_note("does not list its sessions")
        assert note == (
            "minime: shapes-agent does not list its sessions (it offers no session/list): "
            "there are none to pick"
        )
        assert not [n for n in ed.notes() if "Method not found" in n or "failed" in n]
    with shapes_editor(tmp_path, SHAPES_SESSIONS="broken") as ed:
        ed.nvim.command("MiniMeSessions")
        note = ed.wait_note("did not list its sessions")
        assert note.startswith("minime: shapes-agent did not list its sessions: session/list"), note
        assert "the session store is locked" in note
        _, text = ed.turn("ping")
        assert "pong" in text, "the agent lives on"


def test_mode_and_config_messages_name_the_agent_by_its_definition(tmp_path: Path) -> None:
    """Bullet 8 for :MiniMeMode / :MiniMeConfig: not `python3 offers no session modes`."""
    with shapes_editor(tmp_path) as ed:
        ed.turn("ping")
        ed.nvim.command("MiniMeMode plan")
        note = ed.wait_note("offers no session modes")
        ed.nvim.command("MiniMeConfig model fast")
        option = ed.wait_note("has no config option")
    assert note == "minime: shapes-agent offers no session modes", note
    assert option.startswith("minime: shapes-agent has no config option"), option


def float_part(ed: Editor, part: str) -> str:
    turn = ed.lua("return require('minime.ui.turn').get(...)", ed.cwd)
    return "".join(piece[0] for piece in ed.float_config(turn["win"])[part])


def test_usage_and_the_session_title_show_as_they_come(tmp_path: Path) -> None:
    """usage_update in the float's footer and the statusline; session_info_update's title in
    the float's title and as the session's name in :MiniMeSessions; each updated."""
    status = "return require('minime.status').statusline()"
    with shapes_editor(tmp_path) as ed:
        ed.turn("usage 53000 0.42")
        wait_for(lambda: "53k/200k · $0.42" in float_part(ed, "footer"), 10, message="usage")
        assert "Parser fix 53000" in float_part(ed, "title")
        assert ed.lua(status) == "minime · 53k/200k · $0.42"
        ed.turn("usage 120400 1.5")
        wait_for(lambda: "120k/200k · $1.50" in float_part(ed, "footer"), 10, message="usage")
        assert "Parser fix 120400" in float_part(ed, "title")
        assert "Parser fix 53000" not in float_part(ed, "title")
        assert ed.lua(status) == "minime · 120k/200k · $1.50"
        ed.lua(
            "vim.ui.select = function(items, opts) _G.names = vim.tbl_map(opts.format_item, items)"
            " end"
        )
        ed.nvim.command("MiniMeSessions")
        names = wait_for(lambda: ed.lua("return _G.names"), 20, message="the session picker")
    assert names[0].startswith("Old one · ")
    assert names[1].startswith("Parser fix 120400 · shapes-1"), names


def test_checkhealth_reports_a_failing_session_new(tmp_path: Path) -> None:
    """Bullet 6: initialize answers, session/new fails: an ERROR with the agent's words."""
    with shapes_editor(tmp_path, SHAPES_FAIL_NEW="Authentication required: run login") as ed:
        ed.nvim.command("checkhealth minime")
        text = "\n".join(ed.nvim.current.buffer[:])
    assert "ERROR live check: the agent could not open a session (session/new):" in text
    assert "Authentication required: run login" in text
    with shapes_editor(tmp_path) as ed:
        ed.nvim.command("checkhealth minime")
        text = "\n".join(ed.nvim.current.buffer[:])
    assert "answered initialize in" in text and "opened a session in" in text
    assert "ERROR" not in text


def test_an_agent_that_needs_a_login_says_so_and_minimelogin_logs_in(tmp_path: Path) -> None:
    """session/new fails with ACP's auth-required error: the ask says so and names the
    methods; :MiniMeLogin token sends authenticate, then the same ask works; :checkhealth
    lists the methods."""
    marker = tmp_path / "logged-in"
    with shapes_editor(tmp_path, SHAPES_AUTH=str(marker)) as ed:
        done, _ = ed.turn("ping")
        error = done.get("error") or ""
        ed.nvim.command("MiniMeLogin token")
        ed.wait_note("logged in to shapes-agent (API token): ask again")
        done, text = ed.turn("ping")
        ed.nvim.command("checkhealth minime")
        health = "\n".join(ed.nvim.current.buffer[:])
    assert error == (
        "shapes-agent needs a login (session/new: Authentication required (-32000)); its login"
        " methods: API token (token), Browser login (cli) — :MiniMeLogin logs in, then ask again"
    ), error
    assert done["stop_reason"] == "end_turn" and "pong" in text
    assert (
        "login methods (:MiniMeLogin): API token (token), Browser login (cli, in a terminal)"
        in (health)
    )


def test_a_terminal_login_runs_the_agents_command_in_a_terminal(tmp_path: Path) -> None:
    marker = tmp_path / "logged-in"
    with shapes_editor(tmp_path, SHAPES_AUTH=str(marker)) as ed:
        ed.turn("ping")
        ed.nvim.command("MiniMeLogin")  # no method: picked (the WATCH's vim.ui.select)
        wait_for(lambda: ed.lua("return #_G.picks") == 1, 20, message="the methods offered")
        ed.lua("_G.pick(2)")
        ed.wait_note("the login (Browser login) finished: ask again")
        shown = "\n".join(ed.nvim.current.buffer[:])
        kind = ed.lua("return vim.b.minime")
        done, text = ed.turn("ping")
    assert marker.exists(), "the agent's own login ran"
    assert "Logged in to shapes." in shown and kind == "login"
    assert done["stop_reason"] == "end_turn" and "pong" in text


def test_sessions_offers_close_and_delete_with_a_confirmation(tmp_path: Path) -> None:
    """Where the agent advertises session/close and session/delete, :MiniMeSessions offers them
    after the pick; delete asks first; a closed current session makes the next ask a new one."""
    wire = tmp_path / "managed.txt"
    with shapes_editor(tmp_path, SHAPES_MANAGE=str(wire)) as ed:
        ed.turn("ping")  # opens shapes-1, listed after old-1

        def choose(*picks: int) -> None:
            start = len(ed.lua("return _G.picks"))
            ed.nvim.command("MiniMeSessions")
            for n, pick in enumerate(picks):
                wait_for(
                    lambda n=n: len(ed.lua("return _G.picks")) > start + n, 20, message="a pick"
                )
                ed.lua(f"_G.pick({pick})")

        choose(1, 3, 2)  # old-1, Delete…, "Keep it"
        choose(1, 3, 1)  # old-1, Delete…, "Delete … for good"
        ed.wait_note("session Old one deleted (shapes-agent)")
        choose(1, 2)  # now shapes-1 is first: Close
        ed.wait_note("session shapes-1 closed (shapes-agent)")
        done, text = ed.turn("ping")
        offered = ed.lua("return _G.picks")
    assert wire.read_text().splitlines() == ["session/delete old-1", "session/close shapes-1"]
    assert offered[:3] == [2, 3, 2], offered  # two sessions; reopen/close/delete; delete or keep
    assert done["stop_reason"] == "end_turn" and "pong" in text
    assert done["session_id"] == "shapes-2", "a new session after the current one closed"


def test_additional_directories_go_to_an_agent_that_takes_them(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    agent = {"cmd": [sys.executable, str(SHAPES)], "label": "shapes-agent"}
    opts = {"additional_directories": [str(shared) + "/"]}
    for dirs, expected in (("1", [str(shared)]), ("0", None)):
        agent["env"] = {"SHAPES_DIRS": dirs}
        with editor_with(tmp_path, {"agent": agent, **opts}, WATCH, timeout=30.0) as ed:
            _, text = ed.turn("dirs")
        got = json.loads(text.split("DIRS ", 1)[1].split("\n", 1)[0])
        assert got == expected, text
