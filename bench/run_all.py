#!/usr/bin/env python3
"""Run every benchmark, one after another, each in its own process; their JSON lines pass through.

    .venv/bin/python bench/run_all.py [NAME ...]   (library_roundtrip plugin editor_tools
                                                   mcp_tools load history)

A failed benchmark prints {"bench": NAME, "metric": "failed", ...} and the exit status is 1.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ALL = ["library_roundtrip", "plugin", "editor_tools", "mcp_tools", "load", "history"]


def main(names: list[str]) -> int:
    failed = 0
    for name in names or ALL:
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, str(BENCH / f"{name}.py")],
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        took = round(time.monotonic() - started, 1)
        if proc.returncode != 0:
            failed += 1
            tail = proc.stderr.strip().splitlines()[-5:]
            print(
                json.dumps(
                    {
                        "bench": name,
                        "metric": "failed",
                        "value": proc.returncode,
                        "unit": "exit status",
                        "stderr_tail": tail,
                    }
                ),
                flush=True,
            )
        print(
            json.dumps({"bench": name, "metric": "wall_time", "value": took, "unit": "s"}),
            flush=True,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
