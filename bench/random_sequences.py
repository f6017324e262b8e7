#!/usr/bin/env python3
"""Random sequences of the plugin's commands and window moves (tests/sequences.py), thousands of
steps: seeds one after another, each in a fresh Neovim with the plugin on the fake mm, checked
after every step (Neovim answers, no internal error). One JSON line per seed, then a summary:
steps, seeds, crashes (Neovim died or froze), errors (an internal error raised), resyncs
(batches that found the conversation's end moved and went on from the buffer: not shown to
the user, counted to find what moves it), seconds.

    .venv/bin/python bench/random_sequences.py [STEPS] [STEPS_PER_SEED] [FIRST_SEED]

Defaults: 3000 steps, 300 per seed, seeds from 1. A failing seed prints its step and
sequence; `MINIME_SEED=<seed> MINIME_STEPS=<n> pytest tests/test_random_sequences.py` reruns it.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (puts tests/ on sys.path)
from sequences import Failure, random_steps, run_steps, sequence_editor


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    per_seed = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    steps_run = seeds = crashes = errors = resyncs = 0
    start = time.monotonic()
    while steps_run < total:
        steps = random_steps(random.Random(seed), min(per_seed, total - steps_run))
        began = time.monotonic()
        record: dict[str, object] = {"bench": "random_sequences", "seed": seed}
        with tempfile.TemporaryDirectory(prefix="minime-seq-") as tmp:
            try:
                with sequence_editor(Path(tmp)) as ed:
                    runner = run_steps(ed, steps, seed)
                resyncs += runner.resyncs
                record.update(steps=len(steps), result="ok", resyncs=runner.resyncs)
                if runner.resyncs:
                    record["resynced_after"] = [
                        steps[max(0, i - 3) : i + 1] for i in runner.resynced_at
                    ]
                steps_run += len(steps)
            except Failure as f:
                crashes += f.crashed
                errors += not f.crashed
                steps_run += f.step_index + 1
                record.update(
                    steps=f.step_index + 1,
                    result="crash" if f.crashed else "error",
                    failure=str(f),
                    sequence=steps[: f.step_index + 1],
                )
        seeds += 1
        record["seconds"] = round(time.monotonic() - began, 2)
        print(json.dumps(record), flush=True)
        seed += 1
    summary = {
        "bench": "random_sequences",
        "steps": steps_run,
        "seeds": seeds,
        "crashes": crashes,
        "errors": errors,
        "resyncs": resyncs,
        "seconds": round(time.monotonic() - start, 1),
    }
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
