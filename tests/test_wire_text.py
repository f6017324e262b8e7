"""Lone surrogates and NUL on their way to Neovim (nvim/wire_text.py): U+FFFD and U+2400, never
a codec error nor a Vimscript one.

A JSON escape such as ``"\\ud800"`` decodes to a lone surrogate, and pynvim decodes bytes that
are not UTF-8 as ones; msgpack refuses them, so a call to Neovim carrying one fails whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from minime.nvim.wire_text import clean, clean_all
from nvim_harness import REPO
from plugin_harness import Editor, agent_file, editor_with

REPLACEMENT = "\ufffd"


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[Editor]:
    config = agent_file(tmp_path, trace=False, yolo=True, acp={"clientTools": {}})
    opts = {"mm": str(REPO / "demo" / "mm"), "config": config}
    with editor_with(tmp_path, opts) as ed:
        yield ed


def test_clean_writes_u_fffd_for_each_lone_surrogate() -> None:
    assert clean("a\ud800b\udfff") == f"a{REPLACEMENT}b{REPLACEMENT}"
    assert clean("ok é 😀") == "ok é 😀"
    nested = clean_all({"k\udc80": ["x\ud800", 2**70, {"n": 1}]})
    assert nested == {f"k{REPLACEMENT}": [f"x{REPLACEMENT}", float(2**70), {"n": 1}]}


def test_clean_writes_the_symbol_for_null_for_each_nul() -> None:
    # Vimscript takes no string holding a NUL (E976): the turn float's error line threw.
    assert clean("a\0b\0") == "a\u2400b\u2400"
    assert clean("a\0\ud800") == "a\u2400" + REPLACEMENT
    assert clean_all({"k\0": ["v\0"]}) == {"k\u2400": ["v\u2400"]}


def test_a_tool_call_with_a_lone_surrogate_in_its_arguments_gets_a_proper_answer(
    editor: Editor,
) -> None:
    editor.ask('/tool read_buffer {"path": "a\\ud800"}')
    editor.wait_done()
    text = editor.turn_text()
    read = text.split("client_read_buffer -> ", 1)[1].split("\n■", 1)[0].strip()
    # read_buffer's own answer for a path not open (not a codec error from the host).
    assert read.startswith("[client tool error: path is not a file open in the editor"), read


def test_a_text_chunk_with_a_lone_surrogate_shows_u_fffd_in_the_float(editor: Editor) -> None:
    # Bytes that are not UTF-8 reach the host as lone surrogates (pynvim's decoding); the fake
    # mm gets them as JSON escapes and echoes them back in its text chunks.
    editor.lua("require('minime').ask('bad \\255 byte')")
    done = editor.wait_done()
    assert done["stop_reason"] == "end_turn", json.dumps(done)
    text = editor.turn_text()
    assert f"echo: bad {REPLACEMENT} byte" in text, text
    assert "bad ? byte" not in text
