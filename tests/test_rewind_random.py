"""Seeded random histories of a directory, rewound: files written, created and deleted (in a
subdirectory too) between checkpoints; then a rewind to a random checkpoint must give back the
directory exactly as it was then, and its undo the directory as it was before the rewind. Both
the library's Checkpoints and the editor's rewind (lua/minime/rewind/, driven without an agent:
its checkpoints taken as the host would), in git and outside it.

MINIME_SEED picks the histories (else a random seed, printed); MINIME_ROUNDS how many."""

from __future__ import annotations

import asyncio
import os
import random
from pathlib import Path

import minime
import pytest
from helpers.review_ui import committed
from helpers.rewind_ui import PICKER
from nvim_harness import wait_for
from plugin_harness import editor_with

NAMES = ["a.txt", "b.txt", "c.md", "d/e.txt", "d/f.txt", "g h.txt"]
TURNS = 6


def seed() -> int:
    value = int(os.environ.get("MINIME_SEED") or random.randrange(2**32))
    print(f"MINIME_SEED={value}", flush=True)
    return value


def state(cwd: Path) -> dict[str, str]:
    return {n: (cwd / n).read_text() for n in NAMES if (cwd / n).is_file()}


def churn(rng: random.Random, cwd: Path) -> None:
    """One turn's worth of changes: 1-4 writes, creations or deletions."""
    for _ in range(rng.randint(1, 4)):
        path = cwd / rng.choice(NAMES)
        if path.exists() and rng.random() < 0.3:
            path.unlink()
        else:
            path.parent.mkdir(exist_ok=True)
            lines = rng.randint(0, 3)
            path.write_text("".join(f"{rng.randrange(100)}\n" for _ in range(lines)))


def start(cwd: Path, in_git: bool) -> None:
    cwd.mkdir()
    files = {"a.txt": "a\n", "d/e.txt": "e\n"}
    if in_git:
        committed(cwd, files)
        return
    for name, text in files.items():
        (cwd / name).parent.mkdir(exist_ok=True)
        (cwd / name).write_text(text)


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
def test_the_library_gives_back_any_checkpoint(tmp_path: Path, in_git: bool) -> None:
    rng = random.Random(seed())
    for round_ in range(int(os.environ.get("MINIME_ROUNDS") or 4)):
        cwd = tmp_path / f"r{round_}"
        start(cwd, in_git)

        async def main(cwd: Path = cwd) -> None:
            checkpoints = minime.Checkpoints(str(cwd))
            seen = []
            for _ in range(TURNS):
                seen.append(state(cwd))
                await checkpoints.take()
                churn(rng, cwd)
                await checkpoints.ended()
            before = state(cwd)
            n = rng.randint(1, TURNS)
            await checkpoints.rewind(n, force=True)
            assert state(cwd) == seen[n - 1], f"rewind to {n}"
            await checkpoints.undo(force=True)
            assert state(cwd) == before, f"undo of the rewind to {n}"
            await checkpoints.close()

        asyncio.run(main())


TAKE = """
local key, cwd = ...
_G.taken = false
require('minime.review.baseline').take(key, cwd, 'random', 3000, function() _G.taken = true end)
"""
ENDED = """
local key = ...
require('minime.review.checkpoints').ended(key)
local turn = require('minime.review.baseline').last(key)
return turn.ended_at ~= nil and (turn.tree == nil or turn.ended_tree ~= nil)
"""


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
def test_the_editor_gives_back_any_checkpoint(tmp_path: Path, in_git: bool) -> None:
    rng = random.Random(seed())
    cwd = tmp_path / "cwd"
    start(cwd, in_git)
    with editor_with(cwd, {}, PICKER, timeout=30.0) as ed:
        key = "t-random"
        # Outside git a rewind knows the loaded buffers' files and the files turns name. A file
        # named within 20 ms of a change is taken as changed by the turn (the review's guard
        # against a write racing the name, review/baseline.lua): every file is loaded, and the
        # checkpoints do not depend on how fast this loop runs.
        for name in NAMES:
            ed.nvim.command(f"badd {cwd / name}")
        ed.lua("for _, b in ipairs(vim.api.nvim_list_bufs()) do vim.fn.bufload(b) end")
        seen = []
        for _ in range(TURNS):
            seen.append(state(cwd))
            ed.lua(TAKE, key, str(cwd))
            wait_for(lambda: ed.lua("return _G.taken"), 20, message="for the checkpoint")
            churn(rng, cwd)
            wait_for(lambda: ed.lua(ENDED, key), 20, message="for the turn's end")
        before = state(cwd)
        n = rng.randint(1, TURNS)
        ed.lua("local key, n = ... require('minime.rewind').run(key, n, { bang = true })", key, n)
        ed.wait_note(f"rewound to before ask {n}")
        assert state(cwd) == seen[n - 1], f"rewind to {n}"
        ed.lua("require('minime.rewind').undo(..., true)", key)
        ed.wait_note("rewind undone")
        assert state(cwd) == before, f"undo of the rewind to {n}"
