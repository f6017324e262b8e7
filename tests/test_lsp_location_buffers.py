"""An LSP location's line is read from the buffer of exactly its file, else from that file on
disk: a real headless Neovim with secrets loaded, and locations (as a language server answers
them) at names that only look like theirs. ``vim.fn.bufnr(name)`` matches file patterns and
partial names: a location at ``<cwd>/.e`` read the loaded ``.env``'s first line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nvim_harness import start

READ = """
local cwd, names = ...
local lsp = require('minime.editor.lsp_locations')
local scope = require('minime.editor.scope').new({ cwd = cwd })
local out = lsp.collector(scope, require('minime.editor.text').limits({}))
local result = {}
for _, name in ipairs(names) do
  local uri = vim.uri_from_fname(cwd .. '/' .. name)
  result[#result + 1] = { uri = uri, range = { start = { line = 0, character = 0 } } }
end
lsp.add_locations(out, result, 'utf-16')
return out:result('locations')
"""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Any, Path]]:
    cwd = tmp_path / "project"
    outside = tmp_path / "outside"
    cwd.mkdir()
    outside.mkdir()
    (cwd / ".env").write_text("API_KEY=env-secret\n")
    (cwd / "id_rsa").write_text("rsa-secret\n")
    (outside / "keys.txt").write_text("outside-secret\n")
    (cwd / "dirlink").symlink_to(outside)
    (cwd / "main.py").write_text("print('main')\n")
    with start() as nvim:
        nvim.command(f"cd {cwd}")
        for name in (".env", "id_rsa", "dirlink/keys.txt", "main.py"):
            nvim.command(f"edit {cwd / name}")
        yield nvim, cwd


@pytest.mark.parametrize("name", [".e", "id", "dirl", "[.]env", "dirlink/k*", "keys.txt"])
def test_a_location_at_a_name_like_a_loaded_secret_reads_no_secret(
    project: tuple[Any, Path], name: str
) -> None:
    nvim, cwd = project
    answer = nvim.exec_lua(READ, str(cwd), [name])
    assert "secret" not in repr(answer), answer
    assert (
        answer["locations"]
        == [{"path": name, "line": 1, "col": 1, "end_line": 1, "end_col": 1, "text": ""}]
        or answer["outside"] == 1
    )


def test_a_location_in_a_loaded_file_reads_its_buffer(project: tuple[Any, Path]) -> None:
    nvim, cwd = project
    nvim.command(f"buffer {cwd / 'main.py'}")
    nvim.command("call setline(1, 'edited, not saved')")
    answer = nvim.exec_lua(READ, str(cwd), ["main.py", "./main.py"])
    assert [item["text"] for item in answer["locations"]] == ["edited, not saved"]
