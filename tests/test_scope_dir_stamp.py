"""open_buffers skips the per-file lstat when the file's directory has not changed since the
file was checked (one stat per directory): a file replaced by a symlink out of the cwd is
still never listed, whatever the calls its verdict was remembered across.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from nvim_harness import start, wait_for

CALL = """
local cwd = ...
local answer = require('minime.tools').call('open_buffers', {}, { cwd = cwd })
assert(answer.ok, answer.error)
return answer.value
"""

# Every directory stamp counts as settled (its change older than the check): the remembered
# verdict is trusted as soon as it is made, the case a real session reaches 2 s later.
SETTLED_AT_ONCE = "require('minime.editor.scope').SETTLED_SECONDS = -3600"

CTIME = "return vim.uv.fs_stat(...).ctime"


def listed(nvim: Any, cwd: Path) -> list[str]:
    return [b["path"] for b in json.loads(nvim.exec_lua(CALL, str(cwd)))["buffers"]]


def ctime_moved(nvim: Any, directory: Path, before: dict[str, int]) -> bool:
    """The directory's ctime (Neovim's view) is no longer `before`; a clock tick may be needed
    for a change to show in it, so touch it until then."""
    if nvim.exec_lua(CTIME, str(directory)) != before:
        return True
    os.utime(directory)
    return False


def test_a_file_replaced_by_a_symlink_out_of_the_cwd_is_not_listed(tmp_path: Path) -> None:
    root, outside = tmp_path / "proj", tmp_path / "elsewhere_xyz"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET\n")
    for name in ("a.txt", "b.txt"):
        (root / name).write_text(f"{name}\n")
    with start() as nvim:
        nvim.exec_lua(SETTLED_AT_ONCE)
        nvim.command(f"cd {root}")
        nvim.command("edit a.txt | edit b.txt")
        assert listed(nvim, root) == ["a.txt", "b.txt"]
        assert listed(nvim, root) == ["a.txt", "b.txt"]  # now from the remembered verdicts
        before = nvim.exec_lua(CTIME, str(root))
        (root / "a.txt").unlink()
        os.symlink(outside / "secret.txt", root / "a.txt")
        wait_for(lambda: ctime_moved(nvim, root, before), 5)
        assert listed(nvim, root) == ["b.txt"]
