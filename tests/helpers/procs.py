"""Processes as /proc shows them (Linux): the one scan of every live process, and the fields the
tests read of one. plugin_harness (process groups, command lines), the LSP tests (pylsp under
Neovim), the interop tests (an agent's process tree) and the memory tests use these."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


def stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command name: [state, ppid, pgrp, session, ...]."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def live_processes() -> Iterator[tuple[int, list[str]]]:
    """(pid, stat_fields) of every process alive now (zombies and those gone meanwhile left
    out)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = stat_fields(int(entry))
        except OSError:
            continue
        if fields[0] != "Z":
            yield int(entry), fields


def cmdline(pid: int) -> bytes:
    """The raw, NUL-separated command line (b"" once the process is gone)."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read()
    return b""


def environ(pid: int) -> list[bytes]:
    """The environment as ``KEY=value`` entries ([] once the process is gone)."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/environ", "rb") as f:
        return f.read().split(b"\0")
    return []


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` in KiB (VmRSS)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")
