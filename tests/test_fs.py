"""The ACP file system through the buffers, end to end: a real Neovim, its Python host and
tests/agents/fs_agent.py, which sends ``fs/read_text_file`` / ``fs/write_text_file`` and
writes the editor's answers into its reply (``FS {...}``). Each test reads those answers, the
buffers, the disk, or the conversation."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from plugin_harness import Editor, editor_with

AGENT = Path(__file__).with_name("agents") / "fs_agent.py"


@contextlib.contextmanager
def fs_editor(cwd: Path, **opts: Any) -> Iterator[Editor]:
    agent = {"cmd": [sys.executable, str(AGENT)], "label": "fs-agent"}
    with editor_with(cwd, {"agent": agent, **opts}, timeout=30.0, ask_command=False) as ed:
        yield ed


def answers(ed: Editor, *asks: dict[str, Any]) -> list[dict[str, Any]]:
    """Send the agent's requests in one turn; the editor's answers, in order."""
    done, _ = ed.turn(json.dumps(list(asks)))
    assert not done.get("error"), done
    text = "".join(ed.turn_lines())
    found = text.split("FS {")[1:]
    return [json.JSONDecoder().raw_decode("{" + part)[0] for part in found]


def read(path: Path | str, **params: Any) -> dict[str, Any]:
    return {"method": "fs/read_text_file", "params": {"path": str(path), **params}}


def write(path: Path | str, content: str) -> dict[str, Any]:
    return {"method": "fs/write_text_file", "params": {"path": str(path), "content": content}}


def project(tmp_path: Path) -> Path:
    cwd = tmp_path / "project"
    cwd.mkdir()
    return cwd


def test_read_gives_unsaved_buffer_text_or_disk_text_with_line_and_limit(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    (cwd / "open.txt").write_text("on disk\n")
    (cwd / "closed.txt").write_text("one\ntwo\nthree\nfour\n")
    with fs_editor(cwd) as ed:
        ed.nvim.command(f"edit {cwd / 'open.txt'}")
        ed.nvim.current.buffer[:] = ["unsaved", "edit"]
        got = answers(
            ed,
            read(cwd / "open.txt"),
            read(cwd / "closed.txt"),
            read(cwd / "closed.txt", line=2, limit=2),
        )
    assert got == [
        {"result": {"content": "unsaved\nedit\n"}},
        {"result": {"content": "one\ntwo\nthree\nfour\n"}},
        {"result": {"content": "two\nthree\n"}},
    ]


def test_write_to_a_loaded_buffer_is_one_undo_step_and_saved(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    path = cwd / "code.py"
    path.write_text("a = 1\nb = 2\nc = 3\n")
    with fs_editor(cwd) as ed:
        ed.nvim.command(f"edit {path}")
        ed.nvim.current.window.cursor = (2, 3)
        got = answers(ed, write(path, "a = 10\nb = 20\n"))
        assert got == [{"result": None}] or got == [{"result": {}}]
        buf = ed.nvim.current.buffer
        assert buf[:] == ["a = 10", "b = 20"]
        assert ed.lua("return vim.bo.modified") is False
        assert path.read_text() == "a = 10\nb = 20\n"
        assert tuple(ed.nvim.current.window.cursor) == (2, 3)
        assert "the agent wrote code.py" in ed.conversation_text()
        ed.nvim.command("normal! u")
        assert buf[:] == ["a = 1", "b = 2", "c = 3"]  # one step restores it all


def test_write_creates_a_new_file(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    with fs_editor(cwd) as ed:
        got = answers(ed, write(cwd / "new.txt", "fresh\n"))
    assert "error" not in got[0]
    assert (cwd / "new.txt").read_text() == "fresh\n"


def test_outside_symlink_out_and_denied_are_refused_and_unchanged(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    (cwd / ".env").write_text("TOKEN=1")
    (cwd / "link.txt").symlink_to(outside)
    with fs_editor(cwd) as ed:
        got = answers(
            ed,
            read(outside),
            write(outside, "pwned"),
            read(cwd / "link.txt"),
            write(cwd / "link.txt", "pwned"),
            read(cwd / ".env"),
            write(cwd / ".env", "pwned"),
            read(cwd / ".." / "outside.txt"),
        )
    assert [a.get("error", {}).get("code") for a in got] == [-32602] * 7
    assert outside.read_text() == "secret"
    assert (cwd / ".env").read_text() == "TOKEN=1"
    assert all("secret" not in json.dumps(a) and "TOKEN" not in json.dumps(a) for a in got)


def test_capability_follows_the_fs_option(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    for fs, expected in ((None, True), (False, False)):
        opts = {} if fs is None else {"fs": fs}
        with fs_editor(cwd, **opts) as ed:
            ed.turn("caps")
            line = next(x for x in ed.turn_lines() if "CAPS " in x)
        caps = json.loads(line.split("CAPS ", 1)[1])
        got = caps.get("fs") or {}
        assert bool(got.get("readTextFile")) is expected
        assert bool(got.get("writeTextFile")) is expected


def test_a_fifo_or_a_missing_file_is_a_clear_error_and_the_editor_keeps_running(
    tmp_path: Path,
) -> None:
    import os

    cwd = project(tmp_path)
    os.mkfifo(cwd / "pipe")  # a read that waited for a writer would hang the editor
    with fs_editor(cwd) as ed:
        got = answers(ed, read(cwd / "pipe"), read(cwd / "missing.txt"), write(cwd / "pipe", "x"))
        assert ed.lua("return 1 + 1") == 2
    assert "not a regular file" in got[0]["error"]["data"]["details"]
    assert got[1]["error"]["code"] == -32002  # ACP's "Resource not found", not a refusal
    assert got[1]["error"]["data"] == {"uri": str(cwd / "missing.txt"), "details": "no such file"}
    assert "not a regular file (a fifo)" in got[2]["error"]["data"]["details"]
