"""The race git's racy-entry rule is about, made on purpose: an index entry that matches its
file's size and times to the second, but not its text. Used by the fake mm's /stage-rewrite
(tests/fake_mm_git.py: the agent does it) and test_review_baseline.py (the user does it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def stage_then_rewrite(cwd: str, path: str, text: str) -> None:
    """`git add path` (in `cwd`) with its times made new, then `text` (as many bytes as it
    held) written to it in the same second: the index's entry then matches the new file's size
    and times to the second, not its text."""
    full = Path(cwd, path)
    old = full.read_bytes()
    assert len(text.encode()) == len(old), "the new text must be as long as the old"
    while True:  # again when a second boundary fell between the add and the write
        full.write_bytes(old)  # the times now, the text as it was
        subprocess.run(["git", "add", path], cwd=cwd, check=True)
        staged = os.stat(full).st_ctime_ns // 10**9
        full.write_text(text)
        if os.stat(full).st_ctime_ns // 10**9 == staged:
            return
