"""An agent's whole process tree, found through /proc (Linux) and ended whole.

Agents run their tool commands in a process group or session of their own (claude's and codex's
shell tools call setsid), so killing the agent's process group misses them; and once a parent
dies its children re-parent to init, where no tree walk finds them. So a tree is the closure of
its seeds under three links — a parent in the tree, a session or a process group whose leader
is (or was) in the tree — plus every process whose environment carries the agent's tag
(``MINIME_AGENT=<token>``, inherited by everything it starts, whatever its parent now is). It
is taken as a snapshot *before* anything is killed, and each member is remembered with its start
time, so a pid reused by a stranger in between is never signalled.

Never in a tree: this process, and the session and process group it belongs to. Elsewhere than
Linux (no /proc) the tree is empty and callers fall back to the agent's process group.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

log = logging.getLogger("minime")

TAG_VARIABLE = "MINIME_AGENT"
_PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Proc:
    """One process as /proc/<pid>/stat shows it; ``start`` tells a reused pid apart."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    start: int


def read_proc(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ")".
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return Proc(
            pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode(), int(fields[19])
        )
    except (IndexError, ValueError):
        return None


def all_procs() -> list[Proc]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    return [p for name in names if name.isdigit() and (p := read_proc(int(name))) is not None]


def has_tag(pid: int, tag: bytes) -> bool:
    """Whether the environment ``pid`` started with holds ``tag`` (``NAME=value``)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:  # gone, or not ours to read
        return False
    return (b"\0" + environ).find(b"\0" + tag + b"\0") >= 0


def snapshot(roots: Mapping[int, int | None], tag: str | None = None) -> dict[int, Proc]:
    """The live members of the tree seeded by ``roots`` (pid -> start time) and by the
    processes carrying ``tag``. A root's pid also counts as a session and group id, even once
    its process is gone (the kernel gives no new process a pid still used as one) — unless a
    process of another start time now has that pid: then it is not ours at all."""
    procs = [p for p in all_procs() if p.state != "Z"]
    by_pid = {p.pid: p for p in procs}
    me = os.getpid()
    spared_sessions = {os.getsid(0)}
    spared_groups = {os.getpgid(0)}
    members: dict[int, Proc] = {}
    leaders: set[int] = set()
    for pid, start in roots.items():
        now = by_pid.get(pid)
        if now is None:
            leaders.add(pid)
        elif start == now.start and pid != me:
            members[pid] = now
            leaders.add(pid)
    if tag:
        wanted = tag.encode()
        for p in procs:
            if p.pid != me and p.pid not in members and has_tag(p.pid, wanted):
                members[p.pid] = p
                leaders.add(p.pid)
    grown = True
    while grown:
        grown = False
        for p in procs:
            if p.pid in members or p.pid == me:
                continue
            if (
                p.ppid in members
                or (p.sid in leaders and p.sid not in spared_sessions)
                or (p.pgid in leaders and p.pgid not in spared_groups)
            ):
                members[p.pid] = p
                leaders.add(p.pid)
                grown = True
    return members


def signal_all(members: dict[int, Proc], sig: int) -> None:
    """Send ``sig`` to each member that is still the process the snapshot saw."""
    for pid, seen in members.items():
        now = read_proc(pid)
        if now is None or now.start != seen.start or now.state == "Z":
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def terminate_all(members: dict[int, Proc]) -> None:
    """SIGTERM every member as at one instant: all are stopped first, then signalled, then
    continued. Signalled one by one, a shell whose command (``sleep``) got its SIGTERM first
    ran its next line (``echo done > file``) before its own arrived."""
    signal_all(members, signal.SIGSTOP)
    signal_all(members, signal.SIGTERM)
    signal_all(members, signal.SIGCONT)


def alive(members: dict[int, Proc]) -> dict[int, Proc]:
    """The members that have not exited (a zombie has)."""
    live = {}
    for pid, seen in members.items():
        now = read_proc(pid)
        if now is not None and now.start == seen.start and now.state != "Z":
            live[pid] = seen
    return live


def kill_now(members: dict[int, Proc]) -> None:
    """SIGKILL every member: for when there is no time to wait (the program is ending)."""
    signal_all(members, signal.SIGKILL)


_subreaper = False
# Children of ours that asyncio waits for besides the agents (the client terminal's commands):
# never reaped here, never taken for adopted orphans.
waited: set[int] = set()


def become_subreaper() -> bool:
    """Make orphans of our descendants re-parent to this process (Linux; best effort), so an
    agent's detached commands stay in reach after their parent exits. Only for a program whose
    every child is an agent (the Neovim host): once no agent runs, its other children are
    taken for orphans of agents and ended with the last one."""
    global _subreaper
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError) as exc:
        log.debug("not a child subreaper: %s", exc)
    return _subreaper


def reap_adopted(keep: Iterable[int] = ()) -> None:
    """As a subreaper, collect our zombie children but ``keep`` (those asyncio waits for):
    adopted orphans would stay zombies until we exit. Never otherwise: the children of a
    program that embeds the library are its own to wait for."""
    if not _subreaper:
        return
    me = os.getpid()
    kept = set(keep) | waited
    for p in all_procs():
        if p.ppid == me and p.state == "Z" and p.pid not in kept:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(p.pid, os.WNOHANG)


def adopted(keep: Iterable[int] = ()) -> dict[int, Proc]:
    """Our live children other than ``keep``, if we are a subreaper (else none): orphans."""
    if not _subreaper:
        return {}
    me = os.getpid()
    kept = set(keep) | waited
    return {p.pid: p for p in all_procs() if p.ppid == me and p.state != "Z" and p.pid not in kept}
