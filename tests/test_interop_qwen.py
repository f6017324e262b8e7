"""Interop with qwen-code (npm ``@qwen-code/qwen-code`` 0.15.10, ``qwen --acp --auth-type
openai``), a real agent nobody here wrote, run with node and driven by a scripted model on
loopback (tests/agents/openai_model.py, reached through ``OPENAI_BASE_URL``).

qwen-code reads and writes files through ``fs/read_text_file`` / ``fs/write_text_file`` when the
client advertises them, so these turns prove the ACP file system end to end: what its model
reads is the buffer's unsaved text, its write lands in the buffer as one undo step, and a
rejected write touches nothing. scripts/setup installs it (``npm install`` in tests/interop);
without node or the package the tests are skipped, except in CI.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents.openai_model import ModelServer, Reply, last_tool, serving, user_text
from nvim_harness import REPO, wait_for
from plugin_harness import (
    Editor,
    editor,
    quit_leaves_no_bridge,
    quit_with_one_agent,
    wait_tree_gone,
)

QWEN_JS = REPO / "tests/interop/node_modules/@qwen-code/qwen-code/cli.js"
NODE = shutil.which("node")

if not (NODE and QWEN_JS.exists()) and not os.environ.get("CI"):
    pytest.skip(
        "needs node and the npm packages of tests/interop (./scripts/setup)",
        allow_module_level=True,
    )

WRITTEN = "written by qwen\n"
MCP_READ = "mcp__minime__read_buffer"
# The editor's read_buffer over MCP, by the prompt: a buffer of the cwd, a file outside it.
READS = {
    "read the buffer": lambda cwd: "notes.txt",
    "read outside": lambda cwd: str(cwd.parent / "outside.txt"),
}


def script(cwd: Path) -> Any:
    """Asked to update notes.txt: read it, then write it. Asked to create new.txt: write it."""

    def next_step(messages: list[dict[str, Any]]) -> Reply:
        step, prompt = last_tool(messages), user_text(messages)
        if step is None and "update notes" in prompt:
            return Reply(tool="read_file", arguments={"file_path": str(cwd / "notes.txt")})
        if step == "read_file":
            path = str(cwd / "notes.txt")
            return Reply(tool="write_file", arguments={"file_path": path, "content": WRITTEN})
        if step is None and prompt in READS:  # the editor's tool, over MCP
            return Reply(tool=MCP_READ, arguments={"path": READS[prompt](cwd)})
        if step is None and "create new" in prompt:
            path = str(cwd / "new.txt")
            return Reply(tool="write_file", arguments={"file_path": path, "content": "fresh\n"})
        return Reply(text="All done.")

    return next_step


@contextlib.contextmanager
def qwen_editor(tmp_path: Path) -> Iterator[tuple[Editor, ModelServer]]:
    cwd = tmp_path / "project"
    home = tmp_path / "home"  # qwen keeps its settings and logs under $HOME/.qwen
    cwd.mkdir()
    home.mkdir()
    (cwd / "notes.txt").write_text("saved text\n")
    with serving(script(Path(os.path.realpath(cwd)))) as model:
        agent = {
            "label": "Qwen Code (qwen --acp)",  # as the shipped definition names it
            "tool_names": "mcp__minime__%s",  # and its tools
            "cmd": [NODE or "node", str(QWEN_JS), "--acp", "--auth-type", "openai"],
            "env": {
                "OPENAI_BASE_URL": model.base_url,
                "OPENAI_API_KEY": "scripted",
                "OPENAI_MODEL": "scripted",
                "HOME": str(home),
            },
        }
        with editor(cwd, agent=agent) as ed:
            yield ed, model


def test_qwen_reads_unsaved_edits_and_writes_through_the_buffer(tmp_path: Path) -> None:
    with qwen_editor(tmp_path) as (ed, model):
        ed.nvim.command("edit notes.txt")
        ed.nvim.current.buffer[:] = ["unsaved text"]  # not written: only the buffer has it

        ed.ask("update notes")
        shown = ed.permission_text().splitlines()
        assert shown[0] == "Writing to notes.txt"
        # qwen's own diff, made from what it read through the editor: the unsaved text.
        assert shown[shown.index("--- a/notes.txt") :][:5] == [
            "--- a/notes.txt",
            "+++ b/notes.txt",
            "@@ -1 +1 @@",
            "-unsaved text",
            "+written by qwen",
        ]
        assert [x for x in shown if x[:2] in ("1.", "2.", "3.")] == [
            "1. Allow All Edits — Qwen Code (qwen --acp) will not ask again for this kind of"
            " request — its own rule",
            "2. Allow — allow once",
            "3. Reject — reject once",
        ]
        # Its model read the buffer, unsaved edit included, not the disk.
        assert model.tool_results()[0] == "unsaved text\n"
        ed.answer_permission("2")
        done = ed.wait_done(1, timeout=60)
        assert done["stop_reason"] == "end_turn"

        buffer = ed.nvim.current.buffer
        wait_for(lambda: buffer[:] == ["written by qwen"], 10, message="for the buffer's text")
        assert (ed.nvim.current.buffer.options["modified"]) is False
        assert Path(ed.cwd, "notes.txt").read_text() == WRITTEN
        ed.nvim.command("silent undo")
        assert buffer[:] == ["unsaved text"], "the agent's write is one undo step"

        text = ed.turn_text()
        headers = [line for line in text.splitlines() if line.startswith("⚙ ")]
        assert headers == [
            "⚙ ReadFile: notes.txt  [read] completed",
            "⚙ Writing to notes.txt  [edit] completed",  # named by its permission request
        ]
        assert "-unsaved text" in text and "+written by qwen" in text, "qwen's diff is drawn"
        assert text.rstrip().endswith("All done.\n\n■ done (end_turn)")
        assert ed.turn_errors() == []

        # A rejected write: nothing is created, nothing crosses the wire for it.
        ed.ask("create new")
        assert "new.txt" in ed.permission_text()
        ed.answer_permission("3")
        ed.wait_done(2, timeout=60)
        assert not Path(ed.cwd, "new.txt").exists()

        # :MiniMeCancel while its prompt is open: the prompt goes, the turn ends cancelled,
        # and the write it asked about never comes.
        ed.ask("update notes")
        ed.permission_win()
        ed.nvim.command("MiniMeCancel")
        assert ed.wait_done(3, timeout=60)["stop_reason"] == "cancelled"
        wait_for(lambda: not ed.permission_open(), 10, message="for the prompt to close")
        assert Path(ed.cwd, "notes.txt").read_text() == WRITTEN
        assert buffer[:] == ["unsaved text"], "the buffer as the user left it (after the undo)"

        pid = quit_with_one_agent(ed)
    wait_tree_gone(pid, "qwen")


def test_the_library_lends_qwen_the_callers_text(tmp_path: Path) -> None:
    """``minime.connect(fs=…)`` without an editor: qwen reads what the handlers give (a
    program's unsaved copy, not the disk) and its write reaches the handler, not the disk."""
    import asyncio

    import minime

    cwd = Path(os.path.realpath(tmp_path / "project"))
    cwd.mkdir()
    memo = cwd / "memo.txt"
    memo.write_text("disk text\n")  # qwen looks for the file on disk before it reads
    copies = {str(memo): "the caller's copy\n"}
    calls: list[tuple[str, str]] = []

    def read(session_id: str, path: str, line: int | None, limit: int | None) -> str:
        calls.append(("read", path))
        return copies[path]

    async def write(session_id: str, path: str, content: str) -> None:
        calls.append(("write", path))
        copies[path] = content

    def next_step(messages: list[dict[str, Any]]) -> Reply:
        step = last_tool(messages)
        if step is None:
            return Reply(tool="read_file", arguments={"file_path": str(memo)})
        if step == "read_file":
            return Reply(tool="write_file", arguments={"file_path": str(memo), "content": "new\n"})
        return Reply(text="Done.")

    async def turn(model: ModelServer) -> str:
        env = {
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "scripted",
            "OPENAI_MODEL": "scripted",
            "HOME": str(tmp_path),
        }
        command = [NODE or "node", str(QWEN_JS), "--acp", "--auth-type", "openai"]
        client = await minime.connect(
            command=command,
            cwd=cwd,
            env=env,
            fs=(read, write),
            on_permission=lambda _: minime.ALLOW,
        )
        try:
            session = await client.new_session()
            return (await session.complete("update memo")).stop_reason
        finally:
            await client.close()

    with serving(next_step) as model:
        stop = asyncio.run(turn(model))
        results = model.tool_results()
    assert stop == "end_turn"
    assert results[0] == "the caller's copy\n"
    assert ("write", str(memo)) in calls and copies[str(memo)] == "new\n"
    assert memo.read_text() == "disk text\n", "the handler decides; qwen did not touch the disk"


def test_qwen_reads_the_unsaved_buffer_over_mcp_and_nothing_outside(tmp_path: Path) -> None:
    """qwen-code spawns the editor's MCP server from session/new's mcpServers and names its
    tools to the model (``mcp__minime__read_buffer``, deferred to its tool_search); the model
    reads the buffer's unsaved text; a file outside the cwd is refused."""
    (tmp_path / "outside.txt").write_text("OUTSIDE_SECRET\n")
    with qwen_editor(tmp_path) as (ed, model):
        ed.nvim.command("edit notes.txt")
        ed.nvim.current.buffer[:] = ["unsaved words"]
        ed.nvim.command(f"badd {tmp_path / 'outside.txt'}")
        ed.ask("read the buffer")
        shown = ed.permission_text()  # qwen asks before it calls an MCP tool, in its words
        assert "3. Allow — allow once" in shown and "read_buffer" in shown, shown
        ed.answer_permission("3")
        assert ed.wait_done(1, timeout=60)["stop_reason"] == "end_turn"
        assert MCP_READ in json.dumps(model.posted("/chat/completions")[0])
        read = model.tool_results()[-1]
        assert json.loads(read)["text"] == "unsaved words", read

        ed.ask("read outside")
        assert "3. Allow — allow once" in ed.permission_text()
        ed.answer_permission("3")
        assert ed.wait_done(2, timeout=60)["stop_reason"] == "end_turn"
        refused = model.tool_results()[-1]
        assert "not a file open" in refused and "OUTSIDE_SECRET" not in refused, refused
        # The error names the tool as qwen's model can call it (I1), not mm's client_ name.
        assert "call mcp__minime__open_buffers for" in refused, refused
        quit_leaves_no_bridge(ed)


def test_qwens_model_reads_a_mentioned_buffers_unsaved_text(tmp_path: Path) -> None:
    """``@notes.txt`` reaches qwen as an embedded resource holding the buffer's text: its model
    reads the unsaved edit (before, it read the literal ``@notes.txt`` and nothing else)."""
    with qwen_editor(tmp_path) as (ed, model):
        ed.nvim.command("edit notes.txt")
        ed.nvim.current.buffer[:] = ["MENTIONED unsaved text"]
        ed.ask("summarise @notes.txt")
        done = ed.wait_done(1, timeout=60)
        assert done["stop_reason"] == "end_turn", done
        sent = json.dumps(model.posted("/chat/completions"))
        assert "MENTIONED unsaved text" in sent
        assert "saved text\\n" not in sent.replace("MENTIONED unsaved text", "")
        ed.wait_text("📎 notes.txt")
