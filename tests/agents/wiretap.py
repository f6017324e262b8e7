"""Run an agent and log every line that crosses its stdio, for tests that drive a real agent
nobody here wrote (it keeps no trace of its own): ``wiretap.py LOG CMD...``.

Each line of LOG is ``{"dir": "in" | "out", "msg": <the JSON-RPC message>}`` ("in": the client
sent it). The agent's stdin closes when ours does; we exit with its status.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from typing import IO


def main() -> int:
    log_path, *command = sys.argv[1:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 (open while the agent runs)
    lock = threading.Lock()

    def pump(source: IO[bytes], sink: IO[bytes], direction: str) -> None:
        for line in source:
            try:
                msg = json.loads(line)
            except ValueError:
                msg = line.decode("utf-8", "replace")
            with lock:
                log.write(json.dumps({"dir": direction, "msg": msg}) + "\n")
                log.flush()
            sink.write(line)
            sink.flush()
        sink.close()

    threading.Thread(target=pump, args=(sys.stdin.buffer, child.stdin, "in"), daemon=True).start()
    with contextlib.suppress(BrokenPipeError):  # the client went first
        pump(child.stdout, sys.stdout.buffer, "out")
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
