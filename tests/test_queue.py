"""An ask while a turn runs in its cwd, or while its agent still starts, waits in a queue and
is sent when that turn ends (a real headless Neovim, its host, the fake mm). Asserted: what the
conversation shows (the queued asks under the running turn), the notifications, and the prompts
that crossed the wire (the fake's trace), in order, each with its own selection and context."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.shared_nvim import SharedNvim
from helpers.wire import trace
from nvim_harness import wait_for
from plugin_harness import ALLOW_CLIENT_TOOLS, FAKE_MM_BIN, Editor, agent_file

SHARED = SharedNvim()


def open_editor(tmp_path: Path, **fake: object):  # type: ignore[no-untyped-def]
    opts = {
        "mm": FAKE_MM_BIN,
        "config": agent_file(tmp_path, fake=fake or None),
        "permission_rules": ALLOW_CLIENT_TOOLS,
    }
    return SHARED.editor_with(tmp_path, opts, timeout=30.0)


def prompts_sent(tmp_path: Path) -> list[str]:
    return [
        "".join(b.get("text", "") for b in m["params"]["prompt"])
        for m in trace(tmp_path, "in")
        if m.get("method") == "session/prompt"
    ]


def queued(ed: Editor) -> list[str]:
    turn = ed.lua("return require('minime.ui.turn').get(...)", ed.cwd)
    return turn["queued"] if turn else []


def virtual_lines(ed: Editor) -> list[str]:
    """The virtual lines under the conversation's end, as the float shows them."""
    return ed.lua(
        """
        local t = require('minime.ui.turn').get(...)
        local ns = vim.api.nvim_create_namespace('minime_queued')
        local out = {}
        local marks = vim.api.nvim_buf_get_extmarks(t.buf, ns, 0, -1, { details = true })
        for _, mark in ipairs(marks) do
          assert(mark[2] == vim.api.nvim_buf_line_count(t.buf) - 1, 'not under the end')
          for _, chunks in ipairs(mark[4].virt_lines or {}) do
            out[#out + 1] = chunks[1][1]
          end
        end
        return out
        """,
        ed.cwd,
    )


def wait_held(tmp_path: Path) -> None:
    """Until the fake has read session/new (which it answers once the gate file exists)."""
    wait_for(
        lambda: any(m.get("method") == "session/new" for m in trace(tmp_path, "in")),
        20,
        message="session/new sent",
    )


def draft(ed: Editor) -> str | None:
    return ed.lua("return require('minime.ui.drafts').get(...)", ed.cwd)


def test_two_asks_mid_turn_run_in_order_after_it(tmp_path: Path) -> None:
    with open_editor(tmp_path) as ed:
        ed.ask("/slow 40")
        ed.wait_text("slow 1")
        ed.ask("/say one")
        ed.ask("/say two")
        ed.wait_note("queued after the running turn (2 asks wait; :MiniMeCancel drops them)")
        wait_for(lambda: queued(ed) == ["/say one", "/say two"], 10, message="both queued")
        wait_for(
            lambda: virtual_lines(ed) == ["⧗ queued 1: /say one", "⧗ queued 2: /say two"],
            10,
            message="the queue under the running turn",
        )
        assert prompts_sent(tmp_path) == ["/slow 40"]  # nothing sent while it runs
        ed.wait_done(3)
        assert [d["stop_reason"] for d in ed.done()] == ["end_turn"] * 3
        assert prompts_sent(tmp_path) == ["/slow 40", "/say one", "/say two"]
        text = ed.conversation_text()
        assert text.index("slow 39") < text.index("> /say one") < text.index("> /say two")
        assert queued(ed) == [] and virtual_lines(ed) == []


def test_each_queued_ask_keeps_its_own_selection_and_context(tmp_path: Path) -> None:
    (tmp_path / "ten.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    with open_editor(tmp_path) as ed:
        ed.nvim.command("edit ten.txt")
        ed.lua("require('minime').ask(...)", "/slow 30\n/tool selection")
        ed.wait_text("slow 1")
        ed.nvim.command("2,3MiniMeAsk /tool selection")
        ed.nvim.command("6,7MiniMeAsk /tool selection")
        wait_for(lambda: len(queued(ed)) == 2, 10, message="both queued")
        ed.wait_done(3)
        selections = [
            json.loads(line.split(" -> ", 1)[1])
            for line in ed.conversation_lines()
            if line.startswith("client_selection -> ")
        ]
        spans = [
            (s["mode"], (s.get("start") or {}).get("line"), (s.get("end") or {}).get("line"))
            for s in selections
        ]
        assert spans == [("none", None, None), ("line", 2, 3), ("line", 6, 7)]
        sent = prompts_sent(tmp_path)
        assert "From ten.txt, lines 2-3:" in sent[1] and "line 2\nline 3" in sent[1]
        assert "From ten.txt, lines 6-7:" in sent[2] and "line 6\nline 7" in sent[2]


def test_minime_cancel_ends_the_turn_and_drops_the_queue_saying_how_many(
    tmp_path: Path,
) -> None:
    with open_editor(tmp_path) as ed:
        ed.ask("/slow 400")
        ed.wait_text("slow 1")
        ed.ask("/say one")
        ed.ask("/say two")
        wait_for(lambda: len(queued(ed)) == 2, 10, message="both queued")
        ed.nvim.command("MiniMeCancel")
        ed.wait_note(
            "minime: cancelled; 2 queued asks dropped (the text is the next input's draft)"
        )
        done = ed.wait_done(1)
        assert done["stop_reason"] == "cancelled"
        wait_for(lambda: queued(ed) == [] and virtual_lines(ed) == [], 10, message="queue gone")
        # Nothing more is sent, and the text typed is not lost.
        ed.turn("/say after")
        assert prompts_sent(tmp_path) == ["/slow 400", "/say after"]
        assert len(ed.done()) == 2
        assert draft(ed) == "/say one\n\n/say two"


def test_queue_false_refuses_as_before(tmp_path: Path) -> None:
    with open_editor(tmp_path) as ed:
        ed.lua("require('minime.config').options.queue = false")
        ed.ask("/slow 400")
        ed.wait_text("slow 1")
        ed.ask("/say one")
        ed.wait_note("a turn is already running")
        assert queued(ed) == []
        ed.nvim.command("MiniMeCancel")
        ed.wait_done(1)
        assert draft(ed) == "/say one"
        assert prompts_sent(tmp_path) == ["/slow 400"]


def test_an_ask_while_the_agent_starts_is_queued_and_sent_after_the_first(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "session_new.go"
    with open_editor(tmp_path, hold_session_new=str(gate)) as ed:
        ed.ask("first")
        wait_held(tmp_path)
        ed.ask("second")
        ed.wait_note("queued after the running turn (1 ask waits")
        wait_for(lambda: queued(ed) == ["second"], 10, message="queued")
        gate.touch()
        ed.wait_done(2)
        assert prompts_sent(tmp_path) == ["first", "second"]
        sessions = [m for m in trace(tmp_path, "in") if m.get("method") == "session/new"]
        assert len(sessions) == 1
        assert "echo: second" in ed.turn_text()


def test_minime_cancel_while_the_agent_starts_drops_the_queue_too(tmp_path: Path) -> None:
    gate = tmp_path / "session_new.go"
    with open_editor(tmp_path, hold_session_new=str(gate)) as ed:
        ed.ask("first")
        wait_held(tmp_path)
        ed.ask("second")
        wait_for(lambda: queued(ed) == ["second"], 10, message="queued")
        ed.nvim.command("MiniMeCancel")
        ed.wait_note("1 queued ask dropped")
        assert ed.wait_done(1)["stop_reason"] == "cancelled"
        gate.touch()
        ed.turn("third")
        assert prompts_sent(tmp_path) == ["third"]
        assert draft(ed) == "second"


def test_an_ask_in_another_cwd_meanwhile_leaves_the_queued_ask_its_selection(
    tmp_path: Path,
) -> None:
    """Ask ids are global: the other cwd's ask starting first must not make the queued one
    forget the lines it was made with."""
    (tmp_path / "ten.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    other = tmp_path / "other"
    other.mkdir()
    with open_editor(tmp_path) as ed:
        ed.nvim.command("edit ten.txt")
        ed.ask("/slow 40")
        ed.wait_text("slow 1")
        ed.nvim.command("2,3MiniMeAsk /tool selection")
        wait_for(lambda: len(queued(ed)) == 1, 10, message="queued")
        ed.lua("require('minime.actions').ask('/say elsewhere', nil, ...)", str(other))
        wait_for(
            lambda: any(d["cwd"] == str(other) for d in ed.done()), 30, message="the other ends"
        )
        ed.wait_done(3)
        line = next(x for x in ed.turn_lines() if x.startswith("client_selection -> "))
        answer = json.loads(line.split(" -> ", 1)[1])
        assert (answer["mode"], answer["start"]["line"], answer["end"]["line"]) == ("line", 2, 3)
