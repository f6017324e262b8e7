"""The editor tools against a real headless Neovim: each tool's JSON, bounds, bad arguments.

Every answer goes through the Python side (``editor_tools``) as the agent would get it, so the
JSON checked here is the JSON sent. Scoping (what must never appear) is in
test_editor_tools_scope.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import nvim_harness
import pytest
from helpers.tool_calls import CALL, SET_DIAGNOSTICS, SET_QF, Editor, lua
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from minime.nvim.editor_tools import ToolError

REPLACEMENT = "\ufffd"


@pytest.fixture
def nvim():
    with nvim_harness.start(args=("-n", "-i", "NONE")) as n:
        yield n


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    (root / "a.lua").write_text("local function f()\n    return 1\n")
    (root / "sub" / "b.txt").write_text("alpha\nbeta\ngamma\n")
    (root / "ten.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    return root


@pytest.fixture
def editor(nvim: Any, project: Path) -> Editor:
    nvim.command(f"cd {project}")
    return Editor(nvim, project)


# -- open_buffers --------------------------------------------------------------------------


def test_open_buffers_lists_file_buffers_with_their_state(editor: Editor, nvim: Any) -> None:
    nvim.command("edit a.lua | edit sub/b.txt")
    nvim.command("normal! Ggamma2")  # unsaved edit in sub/b.txt
    nvim.command("badd ten.txt")  # listed, never loaded
    nvim.command("enew | setlocal buftype=nofile | file scratch")  # not a file buffer
    nvim.command("edit sub/b.txt")
    nvim.command("help | only")  # help buffer: unlisted, buftype help
    nvim.command("buffer sub/b.txt")

    answer = editor.json("open_buffers")
    assert list(answer) == ["cwd", "buffers"]
    assert answer["cwd"] == editor.cwd
    by_path = {b["path"]: b for b in answer["buffers"]}
    assert list(by_path) == ["a.lua", "sub/b.txt", "ten.txt"]
    for b in answer["buffers"]:
        assert list(b) == ["path", "filetype", "lines", "modified", "current", "visible"]
    assert by_path["a.lua"] == {
        "path": "a.lua",
        "filetype": "lua",
        "lines": 2,
        "modified": False,
        "current": False,
        "visible": False,
    }
    assert by_path["sub/b.txt"] == {
        "path": "sub/b.txt",
        "filetype": "text",
        "lines": 3,
        "modified": True,
        "current": True,
        "visible": True,
    }
    assert by_path["ten.txt"]["lines"] == 10  # counted on disk
    assert not lua(nvim, "return vim.api.nvim_buf_is_loaded(vim.fn.bufnr('ten.txt'))")


def test_open_buffers_empty_list_is_a_json_array(editor: Editor) -> None:
    assert editor.text("open_buffers") == json.dumps(
        {"cwd": editor.cwd, "buffers": []}, separators=(",", ":")
    )


def test_current_is_the_users_file_while_a_float_has_the_cursor(editor: Editor, nvim: Any) -> None:
    nvim.command("edit a.lua | vsplit sub/b.txt")
    lua(
        nvim,
        "local b = vim.api.nvim_create_buf(false, true);"
        "vim.api.nvim_open_win(b, true, {relative='editor', row=1, col=1, width=20, height=3})",
    )
    current = [b["path"] for b in editor.json("open_buffers")["buffers"] if b["current"]]
    assert current == ["sub/b.txt"]


def test_new_unsaved_file_is_listed_and_readable(editor: Editor, nvim: Any) -> None:
    nvim.command("edit newdir/new.txt")  # neither the file nor its directory exists
    lua(nvim, "vim.api.nvim_buf_set_lines(0, 0, -1, false, {'fresh', 'text'})")
    answer = editor.json("open_buffers")
    assert [b["path"] for b in answer["buffers"]] == ["newdir/new.txt"]
    assert editor.json("read_buffer", path="newdir/new.txt")["text"] == "fresh\ntext"


# -- read_buffer ---------------------------------------------------------------------------


def test_read_buffer_gives_live_text_with_unsaved_edits(editor: Editor, nvim: Any) -> None:
    nvim.command("edit a.lua")
    lua(nvim, "vim.api.nvim_buf_set_lines(0, 1, 2, false, {'    return 42 -- unsaved'})")
    answer = editor.json("read_buffer", path="a.lua")
    assert answer == {
        "path": "a.lua",
        "start_line": 1,
        "end_line": 2,
        "total_lines": 2,
        "modified": True,
        "text": "local function f()\n    return 42 -- unsaved",
    }
    assert list(answer) == ["path", "start_line", "end_line", "total_lines", "modified", "text"]


@pytest.mark.parametrize("path", ["sub/b.txt", "./sub/b.txt", "sub/../sub/b.txt", "sub//b.txt"])
def test_read_buffer_accepts_equivalent_paths(editor: Editor, nvim: Any, path: str) -> None:
    nvim.command("edit sub/b.txt")
    assert editor.json("read_buffer", path=path)["path"] == "sub/b.txt"


def test_read_buffer_accepts_an_absolute_path_under_cwd(editor: Editor, nvim: Any) -> None:
    nvim.command("edit sub/b.txt")
    path = str(Path(editor.cwd) / "sub" / "b.txt")
    assert editor.json("read_buffer", path=path)["text"] == "alpha\nbeta\ngamma"


def test_read_buffer_ranges(editor: Editor, nvim: Any) -> None:
    nvim.command("edit ten.txt")
    answer = editor.json("read_buffer", path="ten.txt", start_line=3, end_line=5)
    assert (answer["start_line"], answer["end_line"], answer["total_lines"]) == (3, 5, 10)
    assert answer["text"] == "line 3\nline 4\nline 5"
    # end_line past the end is clamped, and the answer shows where it stopped.
    answer = editor.json("read_buffer", path="ten.txt", start_line=9, end_line=50)
    assert (answer["end_line"], answer["text"]) == (10, "line 9\nline 10")
    assert editor.json("read_buffer", path="ten.txt", start_line=10)["text"] == "line 10"
    # Digit strings are read as numbers (small models send them).
    assert editor.json("read_buffer", path="ten.txt", start_line="2", end_line="2")["text"] == (
        "line 2"
    )


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "missing argument path"),
        ({"path": 5}, "path must be a string, got 5"),
        ({"path": ["ten.txt"]}, "path must be a string"),
        ({"path": ""}, "path must not be empty"),
        ({"path": "ten.txt", "start_line": "abc"}, "start_line must be a whole number"),
        ({"path": "ten.txt", "start_line": 1.5}, "start_line must be a whole number"),
        ({"path": "ten.txt", "start_line": True}, "start_line must be a whole number"),
        ({"path": "ten.txt", "end_line": {"a": 1}}, "end_line must be a whole number"),
        ({"path": "ten.txt", "start_line": 0}, "start_line must be 1 or more"),
        ({"path": "ten.txt", "end_line": -3}, "end_line must be 1 or more"),
        ({"path": "ten.txt", "start_line": 10**12}, "start_line is too large"),
        ({"path": "ten.txt", "start_line": 5, "end_line": 4}, "end_line (4) is before start_line"),
        ({"path": "ten.txt", "start_line": 11}, "start_line 11 is past the end: ten.txt has 10"),
        ({"path": "nothere.txt"}, "not a file open in the editor under the working directory"),
        ({"path": "a.lua"}, "not a file open in the editor"),  # exists on disk, not open
    ],
)
def test_read_buffer_bad_arguments(
    editor: Editor, nvim: Any, arguments: dict[str, Any], expected: str
) -> None:
    nvim.command("edit ten.txt")
    message = editor.error("read_buffer", **arguments)
    assert expected in message
    assert "stack traceback" not in message and ".lua:" not in message


def test_read_buffer_cut_by_max_lines_says_where_to_go_on(editor: Editor, nvim: Any) -> None:
    nvim.command("edit ten.txt")
    editor.ctx = {"max_lines": 4}
    first = editor.json("read_buffer", path="ten.txt")
    assert (first["start_line"], first["end_line"], first["total_lines"]) == (1, 4, 10)
    lines = first["text"].split("\n")
    assert lines[:4] == ["line 1", "line 2", "line 3", "line 4"]
    assert len(lines) == 5
    note = "call client_read_buffer with start_line=5 for more]"
    assert lines[4] == "[cut: lines 5-10 not shown (output limit); " + note
    # An agent whose model sees the tool under another name is told that name (I1).
    editor.ctx = {"max_lines": 4, "tool_names": "mcp__minime__%s"}
    note = editor.json("read_buffer", path="ten.txt")["text"].split("\n")[4]
    assert "call mcp__minime__read_buffer with start_line=5" in note, note
    editor.ctx = {"max_lines": 4}
    # Following the note reads the rest, part by part, and the last part has no note.
    second = editor.json("read_buffer", path="ten.txt", start_line=5)
    assert (second["end_line"], second["text"].split("\n")[-1][:5]) == (8, "[cut:")
    last = editor.json("read_buffer", path="ten.txt", start_line=9)
    assert (last["end_line"], last["text"]) == (10, "line 9\nline 10")


def test_read_buffer_cut_by_max_bytes(editor: Editor, nvim: Any) -> None:
    nvim.command("edit ten.txt")
    editor.ctx = {"max_bytes": 20}  # "line 1\nline 2\n" is 14 bytes, a third line passes 20
    answer = editor.json("read_buffer", path="ten.txt", end_line=6)
    assert answer["end_line"] == 2
    assert answer["text"].startswith("line 1\nline 2\n[cut: lines 3-6 not shown")
    assert "start_line=3" in answer["text"]


def test_a_line_longer_than_the_cap_is_cut_on_a_character_boundary(
    editor: Editor, nvim: Any
) -> None:
    nvim.command("edit long.txt")
    lua(nvim, "vim.api.nvim_buf_set_lines(0, 0, -1, false, {string.rep('é', 3000), 'next'})")
    editor.ctx = {"max_line_bytes": 1001}
    text = editor.json("read_buffer", path="long.txt")["text"]
    first, second = text.split("\n")
    assert first == "é" * 500 + " [line cut: 6000 bytes long]"
    assert second == "next"


def test_nul_bytes_and_invalid_utf8_give_valid_json(editor: Editor, nvim: Any) -> None:
    nvim.command("edit bin.txt")
    lua(
        nvim,
        r"vim.api.nvim_buf_set_lines(0, 0, -1, false,"
        r" {'a\0b', 'bad \255\254 end', 'cut \226\130', 'surrogate \237\160\128', 'ok é'})",
    )
    text = editor.json("read_buffer", path="bin.txt")["text"]
    assert text.split("\n") == [
        f"a{REPLACEMENT}b",
        f"bad {REPLACEMENT}{REPLACEMENT} end",
        f"cut {REPLACEMENT}{REPLACEMENT}",
        f"surrogate {REPLACEMENT * 3}",
        "ok é",
    ]


def test_binary_file_on_disk_reads_as_valid_json(editor: Editor, nvim: Any, project: Path) -> None:
    (project / "blob.bin").write_bytes(bytes(range(256)) * 40)
    nvim.command("edit blob.bin")
    loaded = editor.json("read_buffer", path="blob.bin")
    nvim.command("enew | bunload blob.bin")
    on_disk = editor.json("read_buffer", path="blob.bin")
    assert loaded["total_lines"] == on_disk["total_lines"] == 41
    for answer in (loaded, on_disk):
        assert answer["text"].startswith(REPLACEMENT + "\x01\x02")


def test_unloaded_buffer_is_read_from_disk_without_loading_it(
    editor: Editor, nvim: Any, project: Path
) -> None:
    (project / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree")
    nvim.command("badd dos.txt")
    answer = editor.json("read_buffer", path="dos.txt", start_line=2)
    assert answer == {
        "path": "dos.txt",
        "start_line": 2,
        "end_line": 3,
        "total_lines": 3,
        "modified": False,
        "text": "two\nthree",
    }
    assert not lua(nvim, "return vim.api.nvim_buf_is_loaded(vim.fn.bufnr('dos.txt'))")


def test_unloaded_buffer_of_a_deleted_file_reads_as_empty(
    editor: Editor, nvim: Any, project: Path
) -> None:
    nvim.command("badd gone.txt")
    assert editor.json("read_buffer", path="gone.txt")["text"] == ""


# Disk reading must split lines exactly as Neovim does when it loads the same file.
PIECES = st.sampled_from(["a", "é", " ", "\t", "\n", "\r\n", "\r", "\x00", "xyz" * 40, "\n\n"])


def test_disk_reader_matches_a_loaded_buffer(nvim: Any, project: Path) -> None:
    nvim.command(f"cd {project}")
    editor = Editor(nvim, project)
    editor.ctx = {"max_line_bytes": 50, "max_lines": 4}
    path = project / "same.txt"

    def read(start: int) -> Any:
        try:
            return editor.json("read_buffer", path="same.txt", start_line=start)
        except ToolError as exc:
            return str(exc)

    @settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(PIECES, max_size=30), st.integers(min_value=1, max_value=6))
    def check(pieces: list[str], start: int) -> None:
        path.write_bytes("".join(pieces).encode())
        nvim.command("silent! bwipeout! same.txt | badd same.txt")
        on_disk = [read(1), read(start)]
        nvim.command("silent buffer same.txt")
        assert on_disk == [read(1), read(start)]

    check()


# -- selection -----------------------------------------------------------------------------


def test_selection_charwise(editor: Editor, nvim: Any) -> None:
    nvim.command("edit sub/b.txt")
    nvim.command("normal! gglvjl\x1b")
    assert editor.json("selection") == {
        "path": "sub/b.txt",
        "start": {"line": 1, "col": 2},
        "end": {"line": 2, "col": 3},
        "mode": "char",
        "text": "lpha\nbet",
    }


def test_selection_linewise(editor: Editor, nvim: Any) -> None:
    nvim.command("edit sub/b.txt")
    nvim.command("normal! jVj\x1b")
    answer = editor.json("selection")
    assert list(answer) == ["path", "start", "end", "mode", "text"]
    assert answer == {
        "path": "sub/b.txt",
        "start": {"line": 2, "col": 1},
        "end": {"line": 3, "col": 5},
        "mode": "line",
        "text": "beta\ngamma",
    }


def test_selection_blockwise(editor: Editor, nvim: Any) -> None:
    nvim.command("edit sub/b.txt")
    nvim.command("normal! gg0l\x16jl\x1b")
    answer = editor.json("selection")
    assert (answer["mode"], answer["text"]) == ("block", "lp\net")
    assert (answer["start"], answer["end"]) == ({"line": 1, "col": 2}, {"line": 2, "col": 3})


def test_block_selection_cut_on_a_short_line(editor: Editor, nvim: Any) -> None:
    nvim.command("edit blocks.txt")
    lua(nvim, "vim.api.nvim_buf_set_lines(0, 0, -1, false, {'abcdef', 'abcdef', 'a', 'abcdef'})")
    nvim.command("normal! gg0ll\x16jjjl\x1b")
    editor.ctx = {"max_lines": 3}
    answer = editor.json("selection")
    assert answer["mode"] == "block"
    # getregion() pads a short row with spaces, as a blockwise yank would show it.
    assert [row.rstrip() for row in answer["text"].split("\n")[:3]] == ["cd", "cd", ""]
    assert answer["text"].split("\n")[3].startswith("[cut: selected lines 4-4")


def test_selection_in_force_while_in_visual_mode(editor: Editor, nvim: Any) -> None:
    nvim.command("edit sub/b.txt")
    nvim.input("ggjvj")
    nvim_harness.wait_for(lambda: nvim.api.get_mode()["mode"] == "v", message="visual mode")
    nvim_harness.wait_for(lambda: nvim.funcs.line(".") == 3, message="cursor on line 3")
    answer = editor.json("selection")
    assert (answer["mode"], answer["text"]) == ("char", "beta\ng")


def test_selection_captured_at_ask_time_wins(editor: Editor, nvim: Any) -> None:
    nvim.command("edit sub/b.txt")
    nvim.command("normal! ggvl\x1b")  # a later selection elsewhere in the file
    buf = nvim.current.buffer.number
    editor.ctx = {"selection": {"bufnr": buf, "start_line": 2, "end_line": 3, "path": "x"}}
    answer = editor.json("selection")
    assert answer == {
        "path": "sub/b.txt",
        "start": {"line": 2, "col": 1},
        "end": {"line": 3, "col": 5},
        "mode": "line",
        "text": "beta\ngamma",
    }
    editor.ctx = {
        "selection": {
            "bufnr": buf,
            "start_line": 1,
            "start_col": 3,
            "end_line": 2,
            "end_col": 2,
            "mode": "v",
        }
    }
    assert editor.json("selection")["text"] == "pha\nbe"


def test_selection_of_the_users_file_while_a_float_has_the_cursor(
    editor: Editor, nvim: Any
) -> None:
    nvim.command("edit sub/b.txt")
    nvim.command("normal! Vj\x1b")
    lua(
        nvim,
        "local b = vim.api.nvim_create_buf(false, true);"
        "vim.api.nvim_open_win(b, true, {relative='editor', row=1, col=1, width=20, height=3})",
    )
    assert editor.json("selection")["text"] == "alpha\nbeta"


def test_no_selection_is_a_plain_answer(editor: Editor, nvim: Any) -> None:
    nvim.command("edit sub/b.txt")
    expected = {"path": None, "start": None, "end": None, "mode": "none", "text": ""}
    assert editor.json("selection") == expected
    assert editor.text("selection") == (
        '{"path":null,"start":null,"end":null,"mode":"none","text":""}'
    )
    editor.ctx = {"selection": {"bufnr": 999, "start_line": 1, "end_line": 2}}
    assert editor.json("selection") == expected


def test_selection_follows_edits_and_is_cut_like_read_buffer(editor: Editor, nvim: Any) -> None:
    nvim.command("edit ten.txt")
    nvim.command("normal! ggVG\x1b")
    editor.ctx = {"max_lines": 3}
    answer = editor.json("selection")
    assert answer["end"] == {"line": 10, "col": 7}
    lines = answer["text"].split("\n")
    assert lines[:3] == ["line 1", "line 2", "line 3"]
    assert lines[3].startswith("[cut: selected lines 4-10 not shown")
    assert 'path="ten.txt", start_line=4, end_line=10' in lines[3]


# -- diagnostics ---------------------------------------------------------------------------


def test_diagnostics_fields_order_and_filters(editor: Editor, nvim: Any) -> None:
    nvim.command("edit a.lua | edit sub/b.txt")
    lua(
        nvim,
        SET_DIAGNOSTICS,
        "sub/b.txt",
        [
            {"lnum": 2, "col": 0, "message": "hint here", "severity": "HINT"},
            {"lnum": 0, "col": 1, "end_lnum": 0, "end_col": 4, "message": "bad alpha",
             "severity": "ERROR", "source": "lint", "code": 17},
        ],
    )  # fmt: skip
    lua(
        nvim,
        SET_DIAGNOSTICS,
        "a.lua",
        [{"lnum": 1, "col": 4, "message": "returns int", "severity": "WARN", "code": "W1"}],
    )
    answer = editor.json("diagnostics")
    assert answer == {
        "diagnostics": [
            {
                "path": "a.lua",
                "line": 2,
                "col": 5,
                "end_line": 2,
                "end_col": 5,
                "severity": "warn",
                "source": None,
                "code": "W1",
                "message": "returns int",
            },
            {
                "path": "sub/b.txt",
                "line": 1,
                "col": 2,
                "end_line": 1,
                "end_col": 5,
                "severity": "error",
                "source": "lint",
                "code": "17",
                "message": "bad alpha",
            },
            {
                "path": "sub/b.txt",
                "line": 3,
                "col": 1,
                "end_line": 3,
                "end_col": 1,
                "severity": "hint",
                "source": None,
                "code": None,
                "message": "hint here",
            },
        ]
    }
    assert list(answer["diagnostics"][0]) == [
        *("path", "line", "col", "end_line", "end_col"),
        *("severity", "source", "code", "message"),
    ]
    errors = editor.json("diagnostics", severity="error")["diagnostics"]
    assert [d["message"] for d in errors] == ["bad alpha"]
    only_a = editor.json("diagnostics", path="a.lua")["diagnostics"]
    assert [d["message"] for d in only_a] == ["returns int"]
    assert editor.json("diagnostics", path="a.lua", severity="hint") == {"diagnostics": []}
    assert editor.text("diagnostics", severity="info") == '{"diagnostics":[]}'


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"severity": "fatal"}, "severity must be one of error, warn, info, hint"),
        ({"severity": 1}, "severity must be one of error, warn, info, hint, got 1"),
        ({"path": 3}, "path must be a string"),
        ({"path": "nothere.py"}, "not a file open in the editor"),
    ],
)
def test_diagnostics_bad_arguments(editor: Editor, arguments: dict[str, Any], expected: str):
    assert expected in editor.error("diagnostics", **arguments)


def test_diagnostics_keep_the_most_severe_when_cut(editor: Editor, nvim: Any) -> None:
    nvim.command("edit ten.txt")
    items = [
        {"lnum": i, "col": 0, "message": f"{sev} {i}", "severity": sev}
        for i, sev in enumerate(["HINT", "ERROR", "WARN", "ERROR", "INFO", "ERROR", "WARN"])
    ]
    lua(nvim, SET_DIAGNOSTICS, "ten.txt", items)
    editor.ctx = {"max_lines": 4}
    got = [d["message"] for d in editor.json("diagnostics")["diagnostics"]]
    assert got == ["ERROR 1", "WARN 2", "ERROR 3", "ERROR 5"]  # by position once chosen


# -- quickfix ------------------------------------------------------------------------------


def test_quickfix_items(editor: Editor, nvim: Any, project: Path) -> None:
    lua(
        nvim,
        SET_QF,
        {
            "title": ":make",
            "items": [
                {"filename": str(project / "a.lua"), "lnum": 2, "col": 5, "type": "E",
                 "text": "bad return"},
                {"filename": "sub/b.txt", "lnum": 1, "text": "note this"},
                {"filename": "sub/b.txt", "lnum": 3, "col": 2, "type": "w", "text": "careful"},
            ],
        },
    )  # fmt: skip
    answer = editor.json("quickfix")
    assert answer == {
        "title": ":make",
        "items": [
            {"path": "a.lua", "line": 2, "col": 5, "type": "error", "text": "bad return"},
            {"path": "sub/b.txt", "line": 1, "col": None, "type": None, "text": "note this"},
            {"path": "sub/b.txt", "line": 3, "col": 2, "type": "warn", "text": "careful"},
        ],
    }
    assert list(answer["items"][0]) == ["path", "line", "col", "type", "text"]


def test_quickfix_empty(editor: Editor) -> None:
    assert editor.text("quickfix") == '{"title":"","items":[]}'


def test_quickfix_cut_says_so_in_the_title(editor: Editor, nvim: Any) -> None:
    items = [{"filename": "ten.txt", "lnum": i, "text": f"hit {i}"} for i in range(1, 8)]
    lua(nvim, SET_QF, {"title": ":grep hit", "items": items})
    editor.ctx = {"max_lines": 3}
    answer = editor.json("quickfix")
    assert [i["text"] for i in answer["items"]] == ["hit 1", "hit 2", "hit 3"]
    assert answer["title"] == ":grep hit [cut: first 3 of 7 items shown]"


# -- user tools and the Lua entry point ----------------------------------------------------

REGISTER = """
require('minime').setup({ tools = {
  { name = 'echo', description = 'Echo.', input_schema = { type = 'object', properties = {} },
    handler = function(args, ctx) return 'echo ' .. tostring(args.word) .. ' in ' .. ctx.cwd end },
  { name = 'table', handler = function() return { n = 1, list = { 'a' } } end },
  { name = 'fails', handler = function() error('no such thing') end },
  { name = 'fails_table', handler = function() error({ message = 'shaped' }, 0) end },
  { name = 'crashes', handler = function() local x = nil; return x.y end },
} })
"""


def test_user_tools(nvim: Any, project: Path) -> None:
    lua(nvim, REGISTER)
    ctx = {"cwd": str(project)}
    assert lua(nvim, CALL, "echo", {"word": "hi"}, ctx) == {
        "ok": True,
        "value": f"echo hi in {project}",
    }
    assert lua(nvim, CALL, "table", {}, ctx) == {"ok": True, "value": {"n": 1, "list": ["a"]}}
    assert lua(nvim, CALL, "fails", {}, ctx) == {"ok": False, "error": "no such thing"}
    assert lua(nvim, CALL, "fails_table", {}, ctx) == {"ok": False, "error": "shaped"}
    # A user tool's own errors are for the model, without the "file.lua:12: " prefix.
    crashed = lua(nvim, CALL, "crashes", {}, ctx)
    assert crashed == {"ok": False, "error": "attempt to index local 'x' (a nil value)"}
    assert "stack traceback" in lua(nvim, "return require('minime.tools').last_error")
    specs = lua(nvim, "return require('minime.tools').user_tool_specs()")
    assert specs[0] == {
        "name": "echo",
        "description": "Echo.",
        "input_schema": {"type": "object", "properties": {}},
    }
    assert [s["name"] for s in specs] == ["echo", "table", "fails", "fails_table", "crashes"]
    # setup() again: the tools are the new option at once (read, not registered copies).
    lua(
        nvim,
        "require('minime').setup({ tools = { { name = 'other', handler = function() end } } })",
    )
    specs = lua(nvim, "return require('minime.tools').user_tool_specs()")
    assert [s["name"] for s in specs] == ["other"]
    assert lua(nvim, CALL, "echo", {}, ctx) == {"ok": False, "error": "unknown tool: echo"}


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("{ name = 'read_buffer', handler = function() end }", "taken by the built-in tool"),
        ("{ name = 'open buffers', handler = function() end }", "taken by the built-in tool"),
        ("{ name = 'x' }", "handler must be a function"),
        ("{ handler = function() end }", "name must be a string"),
        ("{ name = 'x', handler = print, input_schema = { type = 'array' } }", "input_schema"),
    ],
)
def test_user_tools_invalid(nvim: Any, tool: str, expected: str) -> None:
    ok, message = lua(
        nvim, f"return {{ pcall(require('minime.tools').check_user_tools, {{ {tool} }}) }}"
    )
    assert ok is False and expected in message


def test_call_never_throws(nvim: Any, project: Path) -> None:
    ctx = {"cwd": str(project)}
    assert lua(nvim, CALL, "nope", {}, ctx) == {"ok": False, "error": "unknown tool: nope"}
    assert lua(nvim, CALL, "read_buffer", "not a table", ctx)["error"] == (
        "the arguments must be a JSON object"
    )
    missing = lua(nvim, CALL, "open_buffers", {}, {"cwd": str(project / "missing")})
    assert missing == {
        "ok": False,
        "error": "the session's working directory is not available in the editor",
    }
    assert lua(nvim, CALL, "open_buffers", None, None)["ok"] is False
    # A bug in a built-in tool: a short message for the model, the traceback kept for us.
    lua(
        nvim,
        "package.loaded['minime.tools.quickfix'] ="
        " { handler = function() error('boom at /x/y') end }",
    )
    broken = lua(nvim, CALL, "quickfix", {}, ctx)
    assert broken["ok"] is False
    assert broken["error"] == (
        "internal error in the editor while running quickfix (not caused by the arguments)"
    )
    assert "boom at /x/y" in lua(nvim, "return require('minime.tools').last_error")


def _keys_in_order(value: Any, rank: dict[str, int], where: str) -> None:
    """Each object's keys: the declared ones in their order, then the others by name."""
    if isinstance(value, list):
        for item in value:
            _keys_in_order(item, rank, where)
    elif isinstance(value, dict):
        keys = list(value)
        expected = sorted(keys, key=lambda k: (rank.get(k, len(rank)), k))
        assert keys == expected, (where, keys)
        for item in value.values():
            _keys_in_order(item, rank, where)


def test_a_tools_answer_is_json_text_in_the_order_its_file_declares(
    editor: Editor, nvim: Any, project: Path
) -> None:
    """Lua hands over JSON text, not a table (a big table costs far more to cross msgpack),
    written with vim.json.encode: strings escaped as JSON, each object's fields in the order
    the tool's file declares (`fields`), the model reading path before text."""
    odd = b'say "hi" \\ a/b \\/ \x01\x7f\ttab \xc3\xa9 \xff\x00 \\u007f\n'
    (project / "odd.txt").write_bytes(odd)
    nvim.command("edit a.lua | edit odd.txt | edit sub/b.txt")
    nvim.command("badd ten.txt")
    # open_buffers writes its records itself: names that need escaping, or replacing.
    names = (b'q"uote \\ back.txt', b"del\x7f u\\u007f \\.md", b"\xc3\xa9t\xc3\xa9 \xff.txt")
    for name in names:
        (project / os.fsdecode(name)).write_bytes(b"x\n")
        lua(
            nvim,
            "local b = vim.fn.bufadd(...); vim.bo[b].buflisted = true",
            os.fsdecode(name),
        )
    nvim.command("normal! Vj\x1b")
    lua(
        nvim,
        SET_DIAGNOSTICS,
        "sub/b.txt",
        [{"lnum": 0, "col": 1, "message": 'quote " and \\ /', "severity": "ERROR", "code": 17},
         {"lnum": 2, "col": 0, "message": "no source", "severity": "HINT"}],
    )  # fmt: skip
    lua(nvim, SET_QF, {"title": ":make a/b", "items": [{"filename": "a.lua", "lnum": 2}]})
    calls: list[tuple[str, dict[str, Any]]] = [
        ("open_buffers", {}),
        ("read_buffer", {"path": "odd.txt"}),
        ("read_buffer", {"path": "ten.txt", "start_line": 2, "end_line": 3}),
        ("selection", {}),
        ("diagnostics", {}),
        ("diagnostics", {"severity": "warn"}),
        ("quickfix", {}),
    ]
    for name, arguments in calls:
        raw = lua(nvim, CALL, name, arguments, {"cwd": editor.cwd})
        assert isinstance(raw["value"], str), name
        assert raw["value"] == editor.text(name, **arguments)  # the host sends it as it is
        fields = lua(nvim, "return require('minime.tools.' .. ...).fields", name)
        _keys_in_order(json.loads(raw["value"]), {k: i for i, k in enumerate(fields)}, name)
    listed = {b["path"] for b in json.loads(editor.text("open_buffers"))["buffers"]}
    assert {'q"uote \\ back.txt', "del\x7f u\\u007f \\.md"} <= listed
    assert "\ufffdt\ufffd \ufffd.txt" not in listed and "été \ufffd.txt" in listed
    read = json.loads(editor.text("read_buffer", path="odd.txt"))
    assert list(read)[:2] == ["path", "start_line"] and read["text"].startswith('say "hi" \\ a/b')
    diagnostics = json.loads(editor.text("diagnostics"))["diagnostics"]
    assert diagnostics[0]["message"] == 'quote " and \\ /'
