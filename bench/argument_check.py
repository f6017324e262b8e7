#!/usr/bin/env python3
"""Checking a tool's arguments against its input schema: minime's checker
(minime/tool_arguments.py) next to ``jsonschema`` (the reference implementation), in one run.

- import: what each adds to a program that has imported minime (``-X importtime`` in a fresh
  interpreter, 8 times): the checker's own time, jsonschema's cumulative time;
- per call: ``read_buffer``'s schema (as lua/minime/tools/read_buffer.lua declares it) on good
  arguments and on arguments with two faults, 20,000 times each, alternately in rounds.

    .venv/bin/python bench/argument_check.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from _common import REPO, emit, quantile

BENCH = "argument_check"
IMPORTS = 8
CALLS = 20_000
ROUNDS = 4
SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "start_line": {"type": "integer", "minimum": 1},
        "end_line": {"type": "integer", "minimum": 1},
    },
    "required": ["path"],
    "additionalProperties": False,
}
GOOD = {"path": "lua/minime/init.lua", "start_line": 10, "end_line": 40}
BAD = {"start_line": "two", "end_line": 0}


def import_ms() -> tuple[float, float]:
    """What each adds to a program that has imported minime.tools, from one fresh interpreter's
    ``-X importtime``: the checker's own time (minime imports it), jsonschema's cumulative
    time (its packages that minime already loaded are not counted again), ms."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "rplugin" / "python3")}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import minime.tools, jsonschema"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    times: dict[str, tuple[int, int]] = {}
    for line in done.stderr.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[0].isdigit():
            times[parts[2]] = (int(parts[0]), int(parts[1]))
    return times["minime.tool_arguments"][0] / 1e3, times["jsonschema"][1] / 1e3


def per_call_us(check: Callable[[dict[str, Any]], Any], arguments: dict[str, Any]) -> float:
    began = time.perf_counter()
    for _ in range(CALLS):
        check(arguments)
    return (time.perf_counter() - began) / CALLS * 1e6


def main() -> None:
    emit(BENCH, "loadavg_1m_at_start", os.getloadavg()[0], "load")
    ours_ms, theirs_ms = [], []
    for _ in range(IMPORTS):
        ours, theirs = import_ms()
        ours_ms.append(ours)
        theirs_ms.append(theirs)
    emit(
        BENCH,
        "import_minime_checker",
        quantile(ours_ms, 0.5),
        "ms",
        baseline=quantile(theirs_ms, 0.5),
        baseline_of="import jsonschema",
        n=IMPORTS,
    )

    import jsonschema
    from minime import tool_arguments

    validator = jsonschema.Draft202012Validator(SCHEMA)

    def ours(arguments: dict[str, Any]) -> Any:
        return tool_arguments.check(SCHEMA, arguments)

    def theirs(arguments: dict[str, Any]) -> Any:
        return [e.message for e in validator.iter_errors(arguments)]

    for label, arguments in (("good", GOOD), ("bad", BAD)):
        mine, ref = [], []
        for _ in range(ROUNDS):
            mine.append(per_call_us(ours, arguments))
            ref.append(per_call_us(theirs, arguments))
        emit(
            BENCH,
            f"check_{label}_arguments",
            quantile(mine, 0.5),
            "us",
            baseline=quantile(ref, 0.5),
            baseline_of="jsonschema Draft202012Validator.iter_errors",
            said=ours(arguments)[1],
            reference_said=theirs(arguments),
        )


if __name__ == "__main__":
    main()
