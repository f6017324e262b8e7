"""The ACP file system through the buffers, end to end: a real Neovim, its Python host and
tests/agents/fs_agent.py, which sends ``fs/read_text_file`` / ``fs/write_text_file`` and
writes the editor's answers into its reply (``FS {...}``). Each test reads those answers, the
buffers, the disk, or the conversation."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from helpers.host_batches import record_batches, sent_batches
from helpers.shared_nvim import SharedNvim
from nvim_harness import wait_for
from plugin_harness import Editor

AGENT = Path(__file__).with_name("agents") / "fs_agent.py"


SHARED = SharedNvim()


@contextlib.contextmanager
def fs_editor(cwd: Path, **opts: Any) -> Iterator[Editor]:
    agent = {"cmd": [sys.executable, str(AGENT)], "label": "fs-agent"}
    with SHARED.editor_with(cwd, {"agent": agent, **opts}, timeout=30.0, ask_command=False) as ed:
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


def test_a_write_over_unsaved_changes_says_so_and_one_undo_brings_them_back(
    tmp_path: Path,
) -> None:
    """As careful as the disk refresh (which keeps such a buffer as the user left it): the
    write goes through, but the conversation says it replaced unsaved changes, and `u` in the
    buffer gives back exactly what the user had typed."""
    cwd = project(tmp_path)
    path = cwd / "notes.txt"
    path.write_text("saved\n")
    with fs_editor(cwd) as ed:
        ed.nvim.command(f"edit {path}")
        ed.nvim.current.buffer[:] = ["typed by the user", "not saved yet"]
        got = answers(ed, write(path, "the agent's\n"))
        assert "error" not in got[0], got
        buf = ed.nvim.current.buffer
        assert buf[:] == ["the agent's"] and path.read_text() == "the agent's\n"
        lines = ed.turn_lines()
        ed.nvim.command("normal! u")
        assert buf[:] == ["typed by the user", "not saved yet"]
        assert ed.lua("return vim.bo.modified") is True  # back as the user left it, unsaved
    assert "⚙ the agent wrote notes.txt over your unsaved changes  [edit] completed" in lines
    body = diff_under(lines, "the agent wrote notes.txt over your unsaved changes")
    assert "-typed by the user" in body and "+the agent's" in body
    assert body[-1] == (
        "your unsaved changes in this buffer were replaced and the file saved:"
        " u in the buffer brings them back"
    )


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
            text = "".join(ed.turn_lines())  # a line past 10,000 bytes is broken in two
        caps = json.JSONDecoder().raw_decode(text.split("CAPS ", 1)[1])[0]
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


def diff_under(lines: list[str], title: str) -> list[str]:
    """The body (dedented) under the tool line of the write called `title`."""
    head = next(i for i, x in enumerate(lines) if x.startswith("⚙ " + title + "  [edit]"))
    body = []
    for line in lines[head + 1 :]:
        if not line.startswith("    "):
            break
        body.append(line[4:])
    return body


def test_a_write_the_agents_own_tool_already_shows_is_not_drawn_twice(tmp_path: Path) -> None:
    """qwen-code's write_file carries the diff of the write it then makes through the fs: one
    diff in the conversation. When the agent's diff is not what the editor changed (it diffed
    the disk, the buffer had unsaved edits), the editor's own line says what really changed."""
    cwd = project(tmp_path)
    (cwd / "same.txt").write_text("one\n")
    (cwd / "stale.txt").write_text("disk\n")
    with fs_editor(cwd) as ed:
        ed.nvim.command(f"edit {cwd / 'stale.txt'}")
        ed.nvim.current.buffer[:] = ["unsaved"]
        told = {"path": str(cwd / "same.txt"), "oldText": "one\n", "newText": "two\n"}
        stale = {"path": "stale.txt", "oldText": "disk\n", "newText": "new\n"}
        got = answers(
            ed,
            {**write(cwd / "same.txt", "two\n"), "diff": told},
            {**write(cwd / "stale.txt", "new\n"), "diff": stale},
        )
        assert all("error" not in a for a in got), got
        lines = ed.turn_lines()
    headers = [x for x in lines if x.startswith("⚙ ")]
    assert headers == [
        f"⚙ Edit {cwd / 'same.txt'}  [edit] completed",
        "⚙ Edit stale.txt  [edit] completed",
        "⚙ the agent wrote stale.txt over your unsaved changes  [edit] completed",
    ]
    body = diff_under(lines, "the agent wrote stale.txt over your unsaved changes")
    assert body[3:5] == ["-unsaved", "+new"]


def test_qwen_flows_of_a_new_file_and_of_an_unasked_edit_draw_each_diff_once(
    tmp_path: Path,
) -> None:
    """qwen-code asks about a new file with ``oldText: ""`` (not absent), and in auto-edit mode
    sends its diff only in the result, after the write: each change is drawn once."""
    cwd = project(tmp_path)
    (cwd / "later.txt").write_text("before\n")
    with fs_editor(cwd) as ed:
        fresh = {"path": str(cwd / "fresh.txt"), "oldText": "", "newText": "new file\n"}
        later = {"path": str(cwd / "later.txt"), "oldText": "before\n", "newText": "after\n"}
        got = answers(
            ed,
            {**write(cwd / "fresh.txt", "new file\n"), "diff": fresh},
            {**write(cwd / "later.txt", "after\n"), "diff_after": later},
        )
        assert all("error" not in a for a in got), got
        lines = ed.turn_lines()
    assert sum(x.strip() == "+new file" for x in lines) == 1, lines
    assert sum(x.strip() == "-before" for x in lines) == 1, lines
    assert sum(x.strip() == "+after" for x in lines) == 1, lines
    assert f"⚙ Edit {cwd / 'later.txt'}  [edit] completed" in lines


def test_a_write_shows_its_change_as_a_diff_in_the_conversation(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    (cwd / "open.py").write_text("a = 1\nb = 2\nc = 3\n")
    (cwd / "closed.txt").write_text("keep\nold\n")
    (cwd / "same.txt").write_text("same\n")
    with fs_editor(cwd) as ed:
        ed.nvim.command(f"edit {cwd / 'open.py'}")
        ed.nvim.current.buffer[2] = "c = 3  # unsaved"
        got = answers(
            ed,
            {**write(cwd / "open.py", "a = 1\nb = 20\n"), "say": "writing open.py\n"},
            write(cwd / "closed.txt", "keep\nnew\n"),
            write(cwd / "sub" / ".." / "fresh.txt", "one\ntwo\n"),
            write(cwd / "same.txt", "same\n"),
        )
        assert all("error" not in a for a in got), got
        lines = ed.turn_lines()
    # The diff from what the user saw (the unsaved edit included), its path relative.
    assert diff_under(lines, "the agent wrote open.py over your unsaved changes")[:-1] == [
        "--- a/open.py",
        "+++ b/open.py",
        "@@ -1,3 +1,2 @@",
        " a = 1",
        "-b = 2",
        "-c = 3  # unsaved",
        "+b = 20",
    ]
    # After what the agent said before writing, not before it (the host's batch went first).
    said = next(i for i, x in enumerate(lines) if x.startswith("writing open.py"))
    assert said < lines.index(
        "⚙ the agent wrote open.py over your unsaved changes  [edit] completed"
    )
    assert diff_under(lines, "the agent wrote closed.txt") == [
        "--- a/closed.txt",
        "+++ b/closed.txt",
        "@@ -1,2 +1,2 @@",
        " keep",
        "-old",
        "+new",
    ]
    assert diff_under(lines, "the agent wrote fresh.txt") == [
        "--- /dev/null",
        "+++ b/fresh.txt",
        "@@ -0,0 +1,2 @@",
        "+one",
        "+two",
    ]
    assert diff_under(lines, "the agent wrote same.txt (no changes)") == [
        "--- a/same.txt",
        "+++ b/same.txt",
        "(no changes)",
    ]
    shown = [x for x in lines if x.startswith(("⚙", "    "))]
    assert len(shown) == 4 + 8 + 6 + 5 + 3
    assert str(tmp_path) not in "\n".join(shown)  # relative paths only


def test_a_huge_write_is_shown_bounded_and_the_editor_keeps_running(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    (cwd / "big.txt").write_text("old line\n" * 200_000)  # 1.7 MB: no diff is computed
    (cwd / "loaded.txt").write_text("old line\n" * 200_000)
    with fs_editor(cwd) as ed:
        ed.nvim.command(f"edit {cwd / 'loaded.txt'}")
        got = answers(
            ed,
            {**write(cwd / "many.txt", "a line\n"), "repeat": 30_000},  # 210 KB, 30,000 lines
            {**write(cwd / "huge.txt", "x" * 99 + "\n"), "repeat": 30_000},  # 3 MB, new
            {**write(cwd / "big.txt", "new line\n"), "repeat": 200_000},
            {**write(cwd / "loaded.txt", "new line\n"), "repeat": 200_000},
        )
        assert all("error" not in a for a in got), got
        assert ed.lua("return 1 + 1") == 2
        assert ed.lua("return {vim.fn.getline(200000), vim.bo.modified}") == ["new line", False]
        lines = ed.turn_lines()
    many = diff_under(lines, "the agent wrote many.txt")
    assert many[:4] == ["--- /dev/null", "+++ b/many.txt", "@@ -0,0 +1,30000 @@", "+a line"]
    assert len(many) == 2001  # capped like tool output
    assert many[-1] == f"… {30_003 - 2000} more lines"
    assert diff_under(lines, "the agent wrote huge.txt") == [
        "--- /dev/null",
        "+++ b/huge.txt",
        "(too large to show as a diff: a new file of 2.9 MB)",
    ]
    assert diff_under(lines, "the agent wrote big.txt") == [
        "--- a/big.txt",
        "+++ b/big.txt",
        "(too large to show as a diff: 1.7 MB before, 1.7 MB after)",
    ]
    assert diff_under(lines, "the agent wrote loaded.txt") == [
        "--- a/loaded.txt",
        "+++ b/loaded.txt",
        "(too large to show as a diff: 1.7 MB before, 1.7 MB after)",
    ]
    assert (cwd / "huge.txt").stat().st_size == 3_000_000
    assert (cwd / "big.txt").read_text() == "new line\n" * 200_000


def test_a_write_through_a_buffer_keeps_folds_marks_and_cursor_on_their_text(
    tmp_path: Path,
) -> None:
    cwd = project(tmp_path)
    path = cwd / "long.txt"
    old = [f"line {i}" for i in range(1, 21)]
    path.write_text("\n".join(old) + "\n")
    new = ["added", *old[3:]]  # lines 1-3 become one: the fold moves up by two
    new[new.index("line 18")] = "line 18 changed"
    with fs_editor(cwd) as ed:
        ed.nvim.command(f"edit {path}")
        ed.nvim.command("setlocal foldmethod=manual | 8,12fold | 15mark a | call cursor(16, 4)")
        assert ed.lua("return vim.fn.foldclosed(8)") == 8
        answers(ed, write(path, "\n".join(new) + "\n"))
        buf = ed.nvim.current.buffer
        assert buf[:] == new
        state = ed.lua(
            "return { vim.fn.foldclosed(6), vim.fn.foldclosedend(6), vim.fn.foldlevel(5),"
            " vim.fn.line(\"'a\"), vim.fn.line('.'), vim.fn.col('.') }"
        )
        # The closed fold still holds lines 8-12 (now rows 6-10), closed; the mark and the
        # cursor stay on their lines.
        assert state == [6, 10, 0, 13, 14, 4]
        ed.nvim.command("normal! u")
        assert buf[:] == old  # one undo step
        assert path.read_text() == "\n".join(new) + "\n"


def test_a_write_to_a_file_not_loaded_lands_and_bad_targets_are_clear_errors(
    tmp_path: Path,
) -> None:
    cwd = project(tmp_path)
    (cwd / "dir").mkdir()
    (cwd / "closed.txt").write_text("before\n")
    with fs_editor(cwd) as ed:
        ed.nvim.command(f"edit {cwd / 'other.txt'}")  # the current buffer is not the file
        got = answers(
            ed,
            write(cwd / "closed.txt", "after\n"),
            write(cwd / "dir", "x"),
            write(cwd / "missing" / "new.txt", "x"),
        )
        listed = ed.lua("return vim.fn.bufnr(...)", str(cwd / "closed.txt"))
    assert got[0] == {"result": None} or got[0] == {"result": {}}
    assert (cwd / "closed.txt").read_text() == "after\n"
    assert listed == -1  # written on disk, not loaded into the editor
    assert got[1]["error"]["data"]["details"].startswith("refused: the path is not a file")
    assert "cannot write it: ENOENT" in got[2]["error"]["data"]["details"]
    assert not (cwd / "missing").exists()


def test_a_write_to_a_file_not_loaded_is_not_done_on_the_callers_turn_of_the_main_loop(
    tmp_path: Path,
) -> None:
    """The write waits in libuv's thread pool: Lua's answer is "pending" and the file is still
    as it was when the call returns (a synchronous write would have held the editor until it
    landed); it lands soon after, and the later answer says what changed (the host shows it)."""
    cwd = project(tmp_path)
    path = cwd / "later.txt"
    path.write_text("before\n")
    with fs_editor(cwd) as ed:
        first = ed.lua(
            """
            local cwd, path = ...
            local params = { path = path, content = "after\\n" }
            local function later(a)
              _G.test_later = a
            end
            local answer =
              require("minime.editor.fs").call("fs/write_text_file", params, cwd, later)
            local f = assert(io.open(path))
            local now = f:read("a")
            f:close()
            return { answer, now }
            """,
            str(cwd),
            str(path),
        )
        assert first == [{"ok": True, "pending": True}, "before\n"]
        wait_for(lambda: path.read_text() == "after\n", 10.0, message="for the write")
        later = wait_for(lambda: ed.lua("return _G.test_later"), 10.0, message="the answer")
        assert later == {
            "ok": True,
            "value": {
                "path": "later.txt",
                "real": str(path.resolve()),
                "old": "before\n",
                "new": "after\n",
                "unsaved": False,
            },
        }


def test_a_write_through_a_buffer_saves_exactly_what_the_agent_wrote(tmp_path: Path) -> None:
    """Format-on-save (a BufWritePre hook) does not rewrite the agent's text and no newline is
    added that it did not write; BufWritePost (didSave, git signs) still runs."""
    cwd = project(tmp_path)
    (cwd / "a.py").write_text("x = 1\n")
    (cwd / "b.txt").write_text("b\n")
    with fs_editor(cwd) as ed:
        ed.lua(
            "_G.posts = 0"
            " vim.api.nvim_create_autocmd('BufWritePre', { callback = function()"
            "   vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'FORMATTED' }) end })"
            " vim.api.nvim_create_autocmd('BufWritePost', { callback = function()"
            "   _G.posts = _G.posts + 1 end })"
        )
        ed.nvim.command(f"edit {cwd / 'a.py'}")
        ed.nvim.command(f"edit {cwd / 'b.txt'}")
        got = answers(ed, write(cwd / "a.py", "x  =  2\n"), write(cwd / "b.txt", "no newline"))
        assert all("error" not in a for a in got), got
        assert ed.lua("return _G.posts") == 2
        assert (cwd / "b.txt").read_text() == "no newline"
        assert ed.lua("return vim.o.eventignore") == ""
        assert ed.lua("return vim.bo[vim.fn.bufnr(...)].fixeol", str(cwd / "b.txt")) is True
        # The user's own :write still runs the hook: only the agent's save skipped it.
        ed.nvim.command("write")
        assert (cwd / "b.txt").read_text() == "FORMATTED\n"
    assert (cwd / "a.py").read_text() == "x  =  2\n"


@contextlib.contextmanager
def flipping(flip: Callable[[int], None]) -> Iterator[None]:
    """An attacker in a thread calling ``flip(1)``, ``flip(2)``, … as fast as it can meanwhile."""
    stop = threading.Event()

    def run() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            flip(n)

    attacker = threading.Thread(target=run, daemon=True)
    attacker.start()
    try:
        yield
    finally:
        stop.set()
        attacker.join(10)


def test_a_symlink_swapped_in_during_writes_is_never_written_through(tmp_path: Path) -> None:
    """An attacker flips the file between a regular file and a symlink out of the cwd while the
    agent writes it 150 times: the outside file is never touched (the open file must be the
    inode that was checked before anything is truncated)."""
    import os

    cwd = project(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("secret\n")
    target = cwd / "target.txt"
    target.write_text("inside\n")

    def flip(n: int) -> None:
        spare = cwd / f".flip{n}"
        if n % 2:
            spare.symlink_to(secret)
        else:
            spare.write_text("inside\n")
        os.replace(spare, target)

    with fs_editor(cwd) as ed, flipping(flip):
        got = answers(ed, *[write(target, "agent\n") for _ in range(150)])
    assert len(got) == 150
    assert secret.read_text() == "secret\n"


def test_a_directory_swapped_for_a_link_out_is_never_read_or_written_through(
    tmp_path: Path,
) -> None:
    """The same race on a directory of the path: `sub` flips between a real directory and a
    symlink to one outside the cwd while the agent reads sub/f.txt, writes it, and creates
    sub/new.txt, 60 times each. Nothing outside is read, changed or created (the file opened
    must be the path the scope check resolved: /proc/self/fd)."""
    import os

    cwd = project(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("secret\n")

    def flip(n: int) -> None:
        spare = cwd / f".flip{n}"
        if n % 2:
            spare.symlink_to(outside, target_is_directory=True)
        else:
            spare.mkdir()
            (spare / "f.txt").write_text("inside\n")
        os.rename(cwd / "sub", cwd / f".old{n}")  # a directory cannot be replaced in one rename
        os.rename(spare, cwd / "sub")

    (cwd / "sub").mkdir()
    (cwd / "sub" / "f.txt").write_text("inside\n")
    asks = [read(cwd / "sub" / "f.txt"), write(cwd / "sub" / "f.txt", "agent\n")] * 60
    asks += [write(cwd / "sub" / "new.txt", "agent\n")] * 60
    with fs_editor(cwd) as ed, flipping(flip):
        got = answers(ed, *asks)
    assert len(got) == len(asks)
    assert not any("secret" in json.dumps(a) for a in got)
    assert (outside / "f.txt").read_text() == "secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]


def test_a_write_is_drawn_by_the_host_in_stream_order_once(tmp_path: Path) -> None:
    """The host is the one writer of the conversation: Lua answers what a write changed and the
    host queues its tool line behind the agent's text in its own batches (no flush forced before
    the write, no second writer drawing past them); the user sees the text, then the write,
    once."""
    cwd = project(tmp_path)
    (cwd / "a.txt").write_text("one\n")
    with fs_editor(cwd) as ed:
        record_batches(ed)
        got = answers(ed, {**write(cwd / "a.txt", "two\n"), "say": "writing a.txt now\n"})
        assert all("error" not in a for a in got), got
        lines = ed.turn_lines()
        batches = sent_batches(ed)
    said = next(i for i, x in enumerate(lines) if x.startswith("writing a.txt now"))
    assert lines.count("⚙ the agent wrote a.txt  [edit] completed") == 1, lines
    assert said < lines.index("⚙ the agent wrote a.txt  [edit] completed")
    with_write = [b for b in batches if "tool_call:the agent wrote a.txt" in b]
    assert len(with_write) == 1, batches
    sent = [kind for batch in batches for kind in batch]
    text = next(i for i, k in enumerate(sent) if k.startswith("text:writing a.txt now"))
    assert text < sent.index("tool_call:the agent wrote a.txt"), sent
