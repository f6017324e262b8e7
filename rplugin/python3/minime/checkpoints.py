"""Checkpoints of a working directory, for a program that drives an agent there: one taken
before each prompt, the files put back to any of them (a rewind), and the rewind undone.

    checkpoints = minime.Checkpoints(cwd)
    n = await checkpoints.take()         # before each prompt: its checkpoint's number
    ... the turn ...
    await checkpoints.ended()            # after it: what the user changes next is theirs
    result = await checkpoints.rewind(n) # every file changed since, back (minime.Rewound)
    await checkpoints.undo()             # what that rewind replaced, back
    await checkpoints.close()            # its refs and its git directory go

In git a checkpoint is a snapshot tree of the work tree (git_runner.py: nothing the repository
configures runs), kept from `git gc` by one ref, refs/minime/<pid>/<id>, whose tree names each
checkpoint ("3s" its start, "3e" its end); close() removes it, and a later Checkpoints in that
repository removes those of processes that are gone. Outside git it is the regular files under
the cwd (at most MAX_FILES of at most MAX_BYTES each), read off the event loop; a text that did
not change is shared with the checkpoint before, not copied.

"The user edited it": it changed between a turn's end (ended()) and the next checkpoint (or
now). Such files are kept by a rewind unless ``force``. Every write and unlink is checked at
its moment: under the cwd once resolved, not denied (``deny``: globs on the path relative to
the cwd and on the name), a regular file (or a free name), never through a link.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fnmatch
import os
import secrets
import stat
from collections.abc import Sequence

import msgspec

from . import git_runner
from .errors import Error

MAX_FILES = 10_000
MAX_BYTES = 4 * 1024 * 1024
Files = dict[str, bytes]  # relative path -> bytes (outside git)


class Rewound(msgspec.Struct):
    """What a rewind (or its undo) did; paths relative to the cwd."""

    n: int
    restored: list[str] = []
    removed: list[str] = []
    kept: list[str] = []  # the user edited them since: not touched (force restores them)
    failed: list[tuple[str, str]] = []  # (path, why)


class _Point(msgspec.Struct):
    tree: str | None = None
    ended_tree: str | None = None
    files: Files | None = None
    ended_files: Files | None = None


class Checkpoints:
    """The checkpoints of one working directory (see the module's docstring)."""

    def __init__(self, cwd: str, deny: Sequence[str] = ()) -> None:
        self.cwd = os.path.realpath(cwd)
        self.deny = list(deny)
        self._points: list[_Point] = []
        self._repo: git_runner.Repo | None = None
        self._found = False
        self._ref = f"refs/minime/{os.getpid()}/lib-{secrets.token_hex(4)}"
        # The last rewind, for undo: its checkpoint, and each file's text before and after it.
        self._last: tuple[int, dict[str, tuple[bytes | None, bytes | None]]] | None = None

    @property
    def count(self) -> int:
        """How many checkpoints were taken (the last one's number)."""
        return len(self._points)

    # -- taking them ------------------------------------------------------------------------

    def _denied(self, rel: str) -> bool:
        name = os.path.basename(rel)
        return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in self.deny)

    async def _git(self) -> git_runner.Repo | None:
        if not self._found:
            self._found = True
            self._repo = await git_runner.find(self.cwd)
            if self._repo is not None:
                await self._sweep(self._repo)
        return self._repo

    async def _snapshot(self) -> tuple[str | None, Files | None]:
        repo = await self._git()
        if repo is None:
            return None, await asyncio.to_thread(self._read_all)
        async with repo.lock:
            _copy_excludes(repo)
            r = await repo.plumbing(["ls-files", "-z", "-m", "-d", "-o", "--exclude-standard"])
            paths = [p for p in r.stdout.split(b"\0") if p]
            if r.code == 0 and paths:
                r = await repo.plumbing(
                    ["update-index", "-z", "--add", "--remove", "--stdin"],
                    b"\0".join(paths) + b"\0",
                )
            if r.code == 0:
                r = await repo.plumbing(["write-tree"])
        if r.code != 0:
            raise Error(f"git could not snapshot {self.cwd}: {r.stderr.strip()}")
        return r.stdout.decode().strip(), None

    def _read_all(self) -> Files:
        """Outside git: the regular files under the cwd (bounded), shared with the last
        checkpoint's where unchanged."""
        files: Files = {}
        for root, dirs, names in os.walk(self.cwd):
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
            for name in names:
                path = os.path.join(root, name)
                rel = os.path.relpath(path, self.cwd)
                if len(files) >= MAX_FILES or self._denied(rel):
                    continue
                text = _read(path)
                if text is not None:
                    files[rel] = text
        return files

    async def take(self) -> int:
        """A checkpoint of the files now (before a prompt): its number, from 1."""
        tree, files = await self._snapshot()
        self._points.append(_Point(tree=tree, files=files))
        n = len(self._points)
        if tree is not None:
            await self._publish()
        return n

    async def ended(self) -> None:
        """The turn after the last checkpoint ended: the files as it left them."""
        if not self._points:
            return
        tree, files = await self._snapshot()
        point = self._points[-1]
        point.ended_tree, point.ended_files = tree, files
        if tree is not None:
            await self._publish()

    # -- the refs that keep them from git gc -------------------------------------------------

    async def _publish(self) -> None:
        repo = self._repo
        assert repo is not None
        lines = []
        for i, point in enumerate(self._points, 1):
            for suffix, tree in (("s", point.tree), ("e", point.ended_tree)):
                if tree:
                    lines.append(f"040000 tree {tree}\t{i}{suffix}\n")
        r = await repo.plumbing(["mktree"], "".join(lines).encode())
        if r.code == 0:
            tree = r.stdout.decode().strip()
            await repo.refs(
                ["update-ref", "--stdin", "-z"], f"update {self._ref}\0{tree}\0\0".encode()
            )

    async def _sweep(self, repo: git_runner.Repo) -> None:
        """The refs of processes that are gone (a crash left them) removed."""
        r = await repo.refs(["for-each-ref", "--format=%(refname)", "refs/minime/"])
        stale = []
        for name in r.stdout.decode(errors="replace").splitlines():
            pid = name.split("/")[2] if name.count("/") >= 3 else ""
            if pid.isdigit() and not _alive(int(pid)):
                stale.append(f"delete {name}\0\0")
        if stale:
            await repo.refs(["update-ref", "--stdin", "-z"], "".join(stale).encode())

    async def close(self) -> None:
        """Its ref removed, its git directory too; it takes no more checkpoints."""
        repo = self._repo
        if repo is not None:
            await repo.refs(["update-ref", "--stdin", "-z"], f"delete {self._ref}\0\0".encode())
            repo.close()
        self._points = []

    # -- going back --------------------------------------------------------------------------

    async def _texts(self, tree: str, rels: list[str]) -> dict[str, bytes | None]:
        """The files ``rels`` in ``tree`` (None: not in it), one `git cat-file --batch`."""
        repo = self._repo
        assert repo is not None
        prefix = os.path.relpath(self.cwd, repo.root)
        specs = [f"{tree}:{rel if prefix == '.' else prefix + '/' + rel}" for rel in rels]
        r = await repo.plumbing(["cat-file", "--batch"], ("\n".join(specs) + "\n").encode())
        out, data, pos = {}, r.stdout, 0
        for rel in rels:
            eol = data.find(b"\n", pos)
            head = data[pos:eol].split(b" ")
            if len(head) == 3 and head[1] == b"blob":
                size = int(head[2])
                out[rel] = data[eol + 1 : eol + 1 + size]
                pos = eol + size + 2
            else:
                out[rel], pos = None, eol + 1
        return out

    async def _changed(self, a: str | None, b: str | None) -> set[str]:
        if not a or not b or self._repo is None:
            return set()
        args = ["diff-tree", "-r", "-z", "--no-renames", "--name-only", "--relative"]
        r = await self._repo.plumbing([*args, "--no-ext-diff", "--no-textconv", a, b])
        return {p.decode() for p in r.stdout.split(b"\0") if p}

    async def rewind(self, n: int, *, force: bool = False, remove: bool = True) -> Rewound:
        """Every file changed since checkpoint ``n`` put back as it was then; files created
        since removed (``remove``), deleted ones written back; a file the user edited since a
        turn's end kept unless ``force``."""
        if not 1 <= n <= len(self._points):
            raise Error(f"no checkpoint {n}: there are {len(self._points)}")
        point = self._points[n - 1]
        now_tree, now_files = await self._snapshot()
        edited: set[str] = set()
        if point.tree is not None:
            rels = sorted(await self._changed(point.tree, now_tree))
            then = await self._texts(point.tree, rels)
            for k in range(n - 1, len(self._points)):
                after = self._points[k + 1].tree if k + 1 < len(self._points) else now_tree
                edited |= await self._changed(self._points[k].ended_tree, after)
        else:
            files, now = point.files or {}, now_files or {}
            rels = sorted(set(files) | set(now))
            then = {rel: files.get(rel) for rel in rels}
            for k in range(n - 1, len(self._points)):
                end = self._points[k].ended_files
                nxt = self._points[k + 1].files if k + 1 < len(self._points) else now
                if end is not None and nxt is not None:
                    edited |= {r for r in set(end) | set(nxt) if end.get(r) != nxt.get(r)}
        plan = {rel: then[rel] for rel in rels if not self._denied(rel)}
        return await asyncio.to_thread(self._apply, n, plan, edited, force, remove)

    async def undo(self, *, force: bool = False) -> Rewound:
        """What the last rewind replaced, put back (a file changed since that rewind: kept
        unless ``force``)."""
        if self._last is None:
            raise Error("no rewind to undo")
        n, replaced = self._last
        self._last = None
        plan = {rel: before for rel, (before, _) in replaced.items()}

        def edited() -> set[str]:
            return {
                rel
                for rel, (_, after) in replaced.items()
                if _read_or_absent(os.path.join(self.cwd, rel)) != after
            }

        changed = await asyncio.to_thread(edited)
        return await asyncio.to_thread(self._apply, n, plan, changed, force, True, True)

    def _apply(
        self,
        n: int,
        plan: dict[str, bytes | None],
        edited: set[str],
        force: bool,
        remove: bool,
        undo: bool = False,
    ) -> Rewound:
        done = Rewound(n=n)
        replaced: dict[str, tuple[bytes | None, bytes | None]] = {}
        for rel, target in sorted(plan.items()):
            path = os.path.join(self.cwd, rel)
            now = _read_or_absent(path)
            if now == target or (target is None and not remove):
                continue
            if rel in edited and not force:
                done.kept.append(rel)
                continue
            why = _put(self.cwd, path, target)
            if why is not None:
                done.failed.append((rel, why))
                continue
            replaced[rel] = (now, target)
            (done.removed if target is None else done.restored).append(rel)
        self._last = None if undo else (n, replaced)
        return done


def _read_or_absent(path: str) -> bytes | None:
    return _read(path) if os.path.lexists(path) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(path: str) -> bytes | None:
    """A regular file's bytes (None: no regular file, too big, unreadable); never blocks on a
    FIFO, never follows a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not _regular(st.st_mode) or st.st_size > MAX_BYTES:
            return None
        return f.read(MAX_BYTES + 1)


def _regular(mode: int) -> bool:
    return stat.S_ISREG(mode)


def _copy_excludes(repo: git_runner.Repo) -> None:
    """The repository's info/exclude as the library's (a regular file only)."""
    ours = os.path.join(repo.dir, "info", "exclude")
    text = _read(os.path.join(repo.common_dir, "info", "exclude"))
    if text is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(ours)
        return
    with open(ours, "wb") as f:
        f.write(text)


def _put(cwd: str, path: str, text: bytes | None) -> str | None:
    """``path`` made to hold ``text`` (None: removed), checked now: nil, or why not."""
    directory = os.path.dirname(path)
    if text is not None:
        with contextlib.suppress(OSError):
            os.makedirs(directory, exist_ok=True)
    real_dir = os.path.realpath(directory)
    if real_dir != directory or not (real_dir + "/").startswith(cwd + "/"):
        return "its directory is no longer under the working directory (a link?)"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not _regular(st.st_mode):
        return "not a regular file"
    if text is None:
        if st is not None:
            os.unlink(path)
        return None
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags | (os.O_CREAT | os.O_EXCL if st is None else 0), 0o644)
    except OSError as exc:
        return "it was replaced meanwhile" if exc.errno in (errno.EEXIST, errno.ELOOP) else str(exc)
    with os.fdopen(fd, "wb") as f:
        now = os.fstat(f.fileno())
        if st is not None and (now.st_ino, now.st_dev) != (st.st_ino, st.st_dev):
            return "it was replaced meanwhile"
        f.truncate(0)
        f.write(text)
    return None
