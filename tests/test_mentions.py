"""`@path` mentions and images, end to end: a real Neovim, its Python host and
tests/agents/prompt_agent.py, which advertises the promptCapabilities it is given and records
each prompt's content blocks as they crossed the wire. Each test reads those blocks, the
conversation, or the user's messages."""

from __future__ import annotations

import base64
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from helpers.shared_nvim import SharedNvim
from nvim_harness import wait_for
from plugin_harness import Editor

AGENT = Path(__file__).with_name("agents") / "prompt_agent.py"
BOTH = "embeddedContext,image"
# The smallest PNG: 1x1, transparent.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


SHARED = SharedNvim()


@contextlib.contextmanager
def prompt_editor(tmp_path: Path, caps: str = BOTH, **opts: Any) -> Iterator[tuple[Editor, Path]]:
    cwd = tmp_path / "project"
    cwd.mkdir()
    trace = tmp_path / "prompts.jsonl"
    agent = {"cmd": [sys.executable, str(AGENT), str(trace), caps], "label": "prompt-agent"}
    with SHARED.editor_with(cwd, {"agent": agent, **opts}, timeout=30.0) as ed:
        yield ed, trace


def sent(ed: Editor, trace: Path, text: str) -> list[dict[str, Any]]:
    """Ask ``text`` (:MiniMeAsk) and wait for its turn: the blocks the agent received."""
    before = len(trace.read_text().splitlines()) if trace.exists() else 0
    done, _ = ed.turn(text)
    assert not done.get("error"), done
    lines = wait_for(lambda: len(trace.read_text().splitlines()) > before and trace.read_text(), 10)
    return json.loads(lines.splitlines()[before])


def wire_bytes(trace: Path) -> str:
    return trace.read_text() if trace.exists() else ""


def test_embedded_resource_holds_the_buffers_unsaved_text(tmp_path: Path) -> None:
    with prompt_editor(tmp_path) as (ed, trace):
        cwd = Path(ed.cwd)
        (cwd / "notes.txt").write_text("on disk\n")
        (cwd / "closed.md").write_text("# closed file\n")
        ed.nvim.command("edit notes.txt")
        ed.nvim.current.buffer[:] = ["unsaved", "edit"]
        blocks = sent(ed, trace, "read @notes.txt and @closed.md, please")
        assert blocks[0] == {"type": "text", "text": "read @notes.txt and @closed.md, please"}
        assert blocks[1] == {
            "type": "resource",
            "resource": {
                "uri": (cwd / "notes.txt").as_uri(),
                "text": "unsaved\nedit\n",
                "mimeType": "text/plain",
            },
        }
        assert blocks[2]["resource"]["text"] == "# closed file\n"
        assert blocks[2]["resource"]["mimeType"] == "text/markdown"
        assert len(blocks) == 3
        ed.wait_text("📎 notes.txt · closed.md")
        assert "unsaved" not in ed.turn_text()  # names, not contents


def test_without_embedded_context_a_file_is_a_resource_link(tmp_path: Path) -> None:
    with prompt_editor(tmp_path, caps="") as (ed, trace):
        cwd = Path(ed.cwd)
        (cwd / "notes.txt").write_text("secretless but not sent\n")
        blocks = sent(ed, trace, "look at @notes.txt")
        assert blocks[1:] == [
            {"type": "resource_link", "uri": (cwd / "notes.txt").as_uri(), "name": "notes.txt"}
        ]
        assert "not sent" not in wire_bytes(trace)
        ed.wait_text("📎 notes.txt (link)")


def test_a_directory_is_a_resource_link(tmp_path: Path) -> None:
    with prompt_editor(tmp_path) as (ed, trace):
        cwd = Path(ed.cwd)
        (cwd / "src").mkdir()
        (cwd / "src" / "a.py").write_text("x = 1\n")
        blocks = sent(ed, trace, "what is in @src")
        assert blocks[1:] == [
            {"type": "resource_link", "uri": (cwd / "src").as_uri(), "name": "src"}
        ]
        ed.wait_text("📎 src/")


def test_a_file_over_the_limit_is_a_link_and_the_user_is_told(tmp_path: Path) -> None:
    with prompt_editor(tmp_path, mention_max_bytes=100) as (ed, trace):
        cwd = Path(ed.cwd)
        (cwd / "big.txt").write_text("B" * 500)
        (cwd / "loaded.txt").write_text("small\n")
        ed.nvim.command("edit loaded.txt")
        ed.nvim.current.buffer[:] = ["L" * 300]
        blocks = sent(ed, trace, "@big.txt @loaded.txt")
        assert [b["type"] for b in blocks] == ["text", "resource_link", "resource_link"]
        assert "BBBB" not in wire_bytes(trace) and "LLLL" not in wire_bytes(trace)
        note = ed.wait_note("sent as a link only")
        assert "@big.txt: larger than the limit (500 bytes)" in note
        assert "@loaded.txt: larger than the limit (301 bytes)" in note


def test_outside_denied_and_symlinked_out_mentions_send_nothing_of_them(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE-SECRET\n")
    with prompt_editor(tmp_path) as (ed, trace):
        cwd = Path(ed.cwd)
        (cwd / ".env").write_text("API_KEY=DENIED-SECRET\n")
        (cwd / "link.txt").symlink_to(outside / "secret.txt")
        (cwd / "linkdir").symlink_to(outside)
        (cwd / "fine.txt").write_text("fine\n")
        ed.nvim.command(f"edit {outside / 'secret.txt'}")  # loaded: still outside
        ed.nvim.command("edit fine.txt")
        prompt = (
            f"@{outside / 'secret.txt'} @../outside/secret.txt @.env @link.txt @linkdir"
            " @linkdir/secret.txt @missing.txt @fine.txt"
        )
        blocks = sent(ed, trace, prompt)
        assert blocks[0] == {"type": "text", "text": prompt}
        assert [b["type"] for b in blocks[1:]] == ["resource"]
        assert blocks[1]["resource"]["text"] == "fine\n"
        wire = wire_bytes(trace).replace(json.dumps(prompt)[1:-1], "")  # all but the typed text
        for leak in ("OUTSIDE-SECRET", "DENIED-SECRET", "outside/secret", str(outside), ".env"):
            assert leak not in wire, leak
        note = ed.wait_note("not attached")
        assert len([n for n in ed.notes() if "not attached" in n]) == 1  # one message
        for m in ("@../outside/secret.txt", "@link.txt", "@linkdir", "@linkdir/secret.txt"):
            assert f"{m}: outside the working directory" in note
        assert "@.env: on the deny list" in note
        assert "@missing.txt: no such file or directory" in note
        ed.wait_text("📎 fine.txt")


def test_percent_and_hash_are_the_current_and_alternate_buffers(tmp_path: Path) -> None:
    with prompt_editor(tmp_path) as (ed, trace):
        cwd = Path(ed.cwd)
        (cwd / "first.txt").write_text("first\n")
        (cwd / "second.txt").write_text("second\n")
        ed.nvim.command("edit first.txt")
        ed.nvim.command("edit second.txt")
        ed.nvim.current.buffer[:] = ["second, edited"]
        blocks = sent(ed, trace, "compare @% with @#")
        got = [(b["resource"]["uri"], b["resource"]["text"]) for b in blocks[1:]]
        assert got == [
            ((cwd / "second.txt").as_uri(), "second, edited\n"),
            ((cwd / "first.txt").as_uri(), "first\n"),
        ]


def test_an_image_is_an_image_block_where_the_agent_takes_images(tmp_path: Path) -> None:
    with prompt_editor(tmp_path) as (ed, trace):
        cwd = Path(ed.cwd)
        (cwd / "shot.png").write_bytes(PNG)
        blocks = sent(ed, trace, "what is in @shot.png?")
        assert blocks[1] == {
            "type": "image",
            "data": base64.b64encode(PNG).decode(),
            "mimeType": "image/png",
            "uri": (cwd / "shot.png").as_uri(),
        }
        assert len(blocks) == 2
        ed.wait_text("📎 shot.png (image)")


def test_an_image_is_not_sent_where_the_agent_takes_none_and_the_user_is_told(
    tmp_path: Path,
) -> None:
    with prompt_editor(tmp_path, caps="embeddedContext") as (ed, trace):
        cwd = Path(ed.cwd)
        (cwd / "shot.png").write_bytes(PNG)
        blocks = sent(ed, trace, "what is in @shot.png?")
        assert blocks == [{"type": "text", "text": "what is in @shot.png?"}]
        assert base64.b64encode(PNG).decode()[:20] not in wire_bytes(trace)
        assert "@shot.png: the agent does not take images" in ed.wait_note("not attached")


def test_mentions_in_the_input_float_are_sent_too(tmp_path: Path) -> None:
    with prompt_editor(tmp_path) as (ed, trace):
        (Path(ed.cwd) / "a.txt").write_text("from the float\n")
        ed.lua("require('minime').ask()")
        win = wait_for(
            lambda: (
                ed.nvim.current.window.handle if ed.nvim.api.win_get_config(0)["relative"] else None
            ),
            10,
        )
        ed.press(win, "see @a.txt\r")
        wait_for(lambda: trace.exists() and trace.read_text(), 20)
        blocks = json.loads(trace.read_text().splitlines()[0])
        assert blocks[1]["resource"]["text"] == "from the float\n"


def test_relative_path_with_dotdot_inside_the_cwd_is_attached(tmp_path: Path) -> None:
    with prompt_editor(tmp_path) as (ed, trace):
        cwd = Path(ed.cwd)
        (cwd / "sub").mkdir()
        (cwd / "top.txt").write_text("top\n")
        blocks = sent(ed, trace, f"@sub/../top.txt @{cwd / 'top.txt'} @./top.txt")
        # One file named three ways: one block.
        assert [b["resource"]["uri"] for b in blocks[1:]] == [(cwd / "top.txt").as_uri()]
        assert blocks[1]["resource"]["text"] == "top\n"


def test_a_file_that_is_not_text_is_a_link_said_so(tmp_path: Path) -> None:
    with prompt_editor(tmp_path) as (ed, trace):
        cwd = Path(ed.cwd)
        (cwd / "latin1.txt").write_bytes(b"caf\xe9\n")
        (cwd / "nul.bin").write_bytes(b"a\x00b")
        blocks = sent(ed, trace, "@latin1.txt @nul.bin")
        assert [b["type"] for b in blocks] == ["text", "resource_link", "resource_link"]
        note = ed.wait_note("sent as a link only")
        assert "@latin1.txt: not text" in note and "@nul.bin: not text" in note


def test_mentions_are_taken_when_asked_even_while_the_agent_starts(tmp_path: Path) -> None:
    with prompt_editor(tmp_path, caps=BOTH + ",delay") as (ed, trace):
        (Path(ed.cwd) / "a.txt").write_text("on disk\n")
        ed.nvim.command("edit a.txt")
        ed.nvim.current.buffer[:] = ["when asked"]
        count = len(ed.done()) + 1
        ed.ask("@a.txt")
        ed.wait_text("starting the agent")
        ed.nvim.current.buffer[:] = ["edited while the agent started"]
        ed.wait_done(count)
        blocks = json.loads(trace.read_text().splitlines()[0])
        assert blocks[1]["resource"]["text"] == "when asked\n"


def test_a_cancel_while_the_mentioned_files_are_read_drops_the_ask(tmp_path: Path) -> None:
    with prompt_editor(tmp_path) as (ed, trace):
        (Path(ed.cwd) / "a.txt").write_text("a\n")
        # The ask and the cancel in one go: the file is read off the main loop in between.
        ed.lua("require('minime').ask('@a.txt first'); require('minime').cancel()")
        blocks = sent(ed, trace, "second")
        assert blocks == [{"type": "text", "text": "second"}]
        assert len(trace.read_text().splitlines()) == 1, "the cancelled ask never went"


def test_an_image_over_the_limit_is_not_sent_and_the_user_is_told(tmp_path: Path) -> None:
    with prompt_editor(tmp_path, mention_max_bytes=len(PNG) - 1) as (ed, trace):
        (Path(ed.cwd) / "shot.png").write_bytes(PNG)
        assert sent(ed, trace, "@shot.png") == [{"type": "text", "text": "@shot.png"}]
        note = ed.wait_note("not attached")
        assert f"@shot.png: larger than the limit ({len(PNG)} bytes)" in note
