"""What the editor tools must never show: files outside the working directory (also through
symlinks and `..`), denied files (.env...), and anything they contain or are called.

Each test opens such files in every way a tool could meet them (buffers, diagnostics, quickfix
items and titles, selections) and then checks every answer the model could read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nvim_harness
import pytest
from helpers.tool_calls import SET_DIAGNOSTICS, SET_QF, Editor, lua

SECRET_OUTSIDE = "OUTSIDE_SECRET_VALUE"
SECRET_DENIED = "DENIED_SECRET_VALUE"
# Names of things out of scope; none of them may appear in an answer.
FORBIDDEN = (
    SECRET_OUTSIDE,
    SECRET_DENIED,
    "elsewhere_xyz",
    "secret.txt",
    ".env",
    "link.txt",
    "linkdir",
    "server.pem",
    "dangling",
    "not_yet",
)


@pytest.fixture
def nvim():
    with nvim_harness.start(args=("-n", "-i", "NONE")) as n:
        yield n


@pytest.fixture(params=["client", "mcp"])
def path(request: Any) -> str:
    """Each test runs over both paths the tools reach an agent by (mm's client tools, MCP)."""
    return request.param


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "proj"
    elsewhere = tmp_path / "elsewhere_xyz"
    (root / "sub").mkdir(parents=True)
    elsewhere.mkdir()
    (root / "ok.txt").write_text("visible text\n")
    (root / "sub" / "inner.txt").write_text("inner text\n")
    (root / ".env").write_text(f"TOKEN={SECRET_DENIED}\n")
    (root / "sub" / "server.pem").write_text(f"{SECRET_DENIED}\n")
    (elsewhere / "secret.txt").write_text(f"{SECRET_OUTSIDE}\n")
    os.symlink(elsewhere / "secret.txt", root / "link.txt")
    os.symlink(elsewhere, root / "linkdir")
    os.symlink(root / ".env", root / "sub" / "innocent")  # a symlink to a denied file
    os.symlink(elsewhere / "not_yet.txt", root / "dangling.txt")  # its target may appear later
    (root / "conf").mkdir()
    (root / "conf" / "vars").write_text(f"{SECRET_DENIED}\n")
    os.symlink(root / "conf" / "vars", root / "sub" / ".env")  # denied by the name it is opened as
    return {"root": root, "elsewhere": elsewhere}


def assert_nothing_forbidden(editor: Editor) -> None:
    assert editor.answers
    for answer in editor.answers:
        for word in FORBIDDEN:
            assert word not in answer, f"{word!r} leaked in {answer!r}"


def open_everything(nvim: Any, world: dict[str, Path]) -> None:
    root, elsewhere = world["root"], world["elsewhere"]
    nvim.command(f"cd {root}")
    nvim.command("edit ok.txt")
    for name in [
        ".env",
        "sub/server.pem",
        "sub/innocent",
        "link.txt",
        "linkdir/secret.txt",
        str(elsewhere / "secret.txt"),
        "../elsewhere_xyz/new_unsaved.txt",
        "dangling.txt",
        "sub/.env",
    ]:
        # silent!: linkdir/secret.txt is the buffer of link.txt (same file), edited already.
        nvim.command(f"silent! edit {name}")
        lua(nvim, "vim.api.nvim_buf_set_lines(0, -1, -1, false, {...})", f"{SECRET_OUTSIDE} edit")
    nvim.command("edit ok.txt")


def test_nothing_out_of_scope_is_listed_read_or_named(
    nvim: Any, world: dict[str, Path], path: str
) -> None:
    open_everything(nvim, world)
    root, elsewhere = world["root"], world["elsewhere"]
    editor = Editor(nvim, root, path)

    # Diagnostics on every buffer, quickfix items on every file.
    for buf in lua(nvim, "return vim.api.nvim_list_bufs()"):
        name = lua(nvim, "return vim.api.nvim_buf_get_name(...)", buf)
        lua(
            nvim,
            SET_DIAGNOSTICS,
            name,
            [{"lnum": 0, "col": 0, "message": f"in {Path(name).name}", "severity": "ERROR"}],
        )
    lua(
        nvim,
        SET_QF,
        {
            "title": f":grep TOKEN {elsewhere} ../elsewhere_xyz/*.txt --exclude={elsewhere} .env",
            "items": [
                {"filename": str(elsewhere / "secret.txt"), "lnum": 1, "text": SECRET_OUTSIDE},
                {"filename": str(root / "link.txt"), "lnum": 1, "text": SECRET_OUTSIDE},
                {"filename": str(root / ".env"), "lnum": 1, "text": SECRET_DENIED},
                {"filename": str(root / "sub" / "innocent"), "lnum": 1, "text": SECRET_DENIED},
                {"text": f"{elsewhere}/secret.txt:1: raw line that did not parse"},
                {"filename": str(root / "ok.txt"), "lnum": 1, "text": "fine"},
            ],
        },
    )

    listed = editor.json("open_buffers")["buffers"]
    assert [b["path"] for b in listed] == ["ok.txt"]

    attempts = [
        ".env",
        "./.env",
        "sub/server.pem",
        "sub/innocent",
        "link.txt",
        "linkdir/secret.txt",
        "../elsewhere_xyz/secret.txt",
        "sub/../../elsewhere_xyz/secret.txt",
        "nodir/../../elsewhere_xyz/secret.txt",
        str(elsewhere / "secret.txt"),
        str(root / "link.txt"),
        str(root / ".." / "elsewhere_xyz" / "secret.txt"),
        "../elsewhere_xyz/new_unsaved.txt",
        "/etc/passwd",
        "dangling.txt",
        "ok.txt\x00/../../elsewhere_xyz/secret.txt",
    ]
    messages = set()
    for path in attempts:
        messages.add(editor.error("read_buffer", path=path))
        messages.add(editor.error("diagnostics", path=path))
    # An out-of-scope path gets the very answer a non-existent one gets.
    messages.add(editor.error("read_buffer", path="does/not/exist.txt"))
    assert len({m.split(";")[0] for m in messages}) == 1

    assert editor.json("read_buffer", path="ok.txt")["text"].startswith("visible text")
    diagnostics = editor.json("diagnostics")["diagnostics"]
    assert [(d["path"], d["message"]) for d in diagnostics] == [("ok.txt", "in ok.txt")]
    quickfix = editor.json("quickfix")
    assert quickfix["items"] == [
        {"path": "ok.txt", "line": 1, "col": None, "type": None, "text": "fine"}
    ]
    assert quickfix["title"] == ":grep TOKEN [outside] [outside] [outside] [outside]"

    # Selections made in out-of-scope buffers are no selection.
    for name in [".env", "link.txt", "sub/server.pem", "../elsewhere_xyz/new_unsaved.txt"]:
        nvim.command(f"edit {name}")
        nvim.command("normal! ggVG\x1b")
        assert editor.json("selection")["mode"] == "none"
        buf = nvim.current.buffer.number
        editor.ctx = {"selection": {"bufnr": buf, "start_line": 1, "end_line": 1}}
        assert editor.json("selection")["mode"] == "none"
        editor.ctx = {}

    assert_nothing_forbidden(editor)


def test_symlinked_cwd_and_symlinks_inside_it(nvim: Any, world: dict[str, Path], path: str) -> None:
    root = world["root"]
    alias = root.parent / "alias"
    os.symlink(root, alias)
    os.symlink(root / "sub" / "inner.txt", root / "shortcut.txt")  # in scope: target inside
    nvim.command(f"cd {alias}")
    nvim.command("edit ok.txt | edit shortcut.txt")
    editor = Editor(nvim, alias, path)
    paths = [b["path"] for b in editor.json("open_buffers")["buffers"]]
    # Paths are the real ones, relative to the real cwd.
    assert paths == ["ok.txt", "sub/inner.txt"]
    assert editor.json("read_buffer", path="shortcut.txt")["text"] == "inner text"
    assert editor.json("read_buffer", path=str(alias / "ok.txt"))["path"] == "ok.txt"


def test_cwd_inside_a_symlinked_dir_does_not_see_its_parent(
    nvim: Any, world: dict[str, Path], path: str
) -> None:
    root = world["root"]
    nvim.command(f"cd {root}")
    nvim.command("edit ok.txt | edit sub/inner.txt")
    editor = Editor(nvim, root / "sub", path)
    assert [b["path"] for b in editor.json("open_buffers")["buffers"]] == ["inner.txt"]
    assert "not a file open" in editor.error("read_buffer", path="../ok.txt")


def test_deny_list_is_configurable(nvim: Any, world: dict[str, Path], path: str) -> None:
    root = world["root"]
    nvim.command(f"cd {root}")
    nvim.command("edit ok.txt | edit .env | edit sub/inner.txt")
    editor = Editor(nvim, root, path)
    editor.ctx = {"deny": ["sub/**", "OK.TXT"]}  # replaces the defaults; case-insensitive
    assert [b["path"] for b in editor.json("open_buffers")["buffers"]] == [".env"]
    editor.ctx = {"deny": []}
    assert len(editor.json("open_buffers")["buffers"]) == 3
    editor.ctx = {"deny": ["[unclosed"]}  # a pattern that does not compile still denies itself
    assert len(editor.json("open_buffers")["buffers"]) == 3


def test_non_file_buffers_are_not_listed(nvim: Any, world: dict[str, Path], path: str) -> None:
    root = world["root"]
    nvim.command(f"cd {root}")
    nvim.command("edit ok.txt")
    lua(
        nvim,
        """
        local scratch = vim.api.nvim_create_buf(true, true)        -- listed, nofile
        vim.api.nvim_buf_set_name(scratch, vim.fn.getcwd() .. '/scratch.txt')
        local unlisted = vim.api.nvim_create_buf(false, false)     -- a file buffer, unlisted
        vim.api.nvim_buf_set_name(unlisted, vim.fn.getcwd() .. '/unlisted.txt')
        local uri = vim.api.nvim_create_buf(true, false)            -- a scheme:// name
        vim.api.nvim_buf_set_name(uri, 'fugitive://' .. vim.fn.getcwd() .. '/x.txt')
        """,
    )
    nvim.command(f"edit {root / 'sub'}")  # a directory buffer
    nvim.command("terminal true")
    editor = Editor(nvim, root, path)
    assert [b["path"] for b in editor.json("open_buffers")["buffers"]] == ["ok.txt"]
    for path in ["scratch.txt", "unlisted.txt", "x.txt", "sub"]:
        assert "not a file open" in editor.error("read_buffer", path=path)
