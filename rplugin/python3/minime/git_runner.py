"""How the library runs git (checkpoints.py), by the rules of the editor's lua/minime/git.lua:
nothing the repository configures ever runs.

The repository's settings are the agent's to write, and several make git run a program
(core.fsmonitor, filters, textconv and external diff drivers, hooks, a promisor's fetch). So:
  * every command but the discovery and the ref commands runs with GIT_DIR set to the
    library's own directory for the repository (a config stating the object format and nothing
    else; its own index), on the user's work tree and object store;
  * `rev-parse` (the discovery) and `update-ref`/`for-each-ref` (the checkpoints' refs) read
    the repository's config, and touch no index, no work tree file, no object transport;
  * no system or global config, no transport, no GIT_* variable of the caller's environment;
    `-c` flags (FLAGS) against what executes, as a second line of defence;
  * every command is bounded (TIMEOUT, then killed).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile

import msgspec

TIMEOUT = 10.0

FLAGS = [
    *("-c", "core.fsmonitor=false"),
    *("-c", "core.hooksPath=/dev/null"),
    *("-c", "protocol.allow=never"),
    *("-c", "gc.auto=0"),
    *("-c", "maintenance.auto=false"),
    *("-c", "submodule.recurse=false"),
    *("-c", "core.logAllRefUpdates=false"),
]


class Result(msgspec.Struct):
    code: int  # 124: killed at the timeout; -1: git could not start
    stdout: bytes
    stderr: str


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_ATTR_NOSYSTEM="1",
        GIT_ALLOW_PROTOCOL="",
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_REPLACE_OBJECTS="1",
    )
    env.update(extra or {})
    return env


async def run(
    args: list[str], cwd: str, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> Result:
    """``git FLAGS args`` in ``cwd``: its result (never raises)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            *FLAGS,
            *args,
            cwd=cwd,
            env=environment(env),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return Result(-1, b"", str(exc))
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), TIMEOUT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return Result(124, b"", f"git {args[0]} did not answer within {TIMEOUT:g} s")
    return Result(proc.returncode or 0, out, err.decode(errors="replace"))


class Repo:
    """A repository found from a cwd, with the library's own git directory for it."""

    def __init__(self, root: str, git_dir: str, common_dir: str, fmt: str) -> None:
        self.root, self.git_dir, self.common_dir = root, git_dir, common_dir
        self.dir = tempfile.mkdtemp(prefix="minime-git-")
        os.makedirs(os.path.join(self.dir, "refs"))
        os.makedirs(os.path.join(self.dir, "info"))
        with open(os.path.join(self.dir, "HEAD"), "w") as f:
            f.write("ref: refs/heads/minime\n")
        config = "[core]\n\trepositoryformatversion = 0\n"
        if fmt != "sha1":
            config = (
                f"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = {fmt}\n"
            )
        with open(os.path.join(self.dir, "config"), "w") as f:
            f.write(config)
        self.lock = asyncio.Lock()  # one command on its index at a time

    async def plumbing(self, args: list[str], stdin: bytes | None = None) -> Result:
        """A command through the library's git directory (its index, the user's objects)."""
        env = {
            "GIT_DIR": self.dir,
            "GIT_WORK_TREE": self.root,
            "GIT_OBJECT_DIRECTORY": os.path.join(self.common_dir, "objects"),
            "GIT_INDEX_FILE": os.path.join(self.dir, "index"),
        }
        return await run(args, self.root, env, stdin)

    async def refs(self, args: list[str], stdin: bytes | None = None) -> Result:
        """A ref command on the user's repository (see the module's docstring)."""
        return await run(args, self.root, {"GIT_DIR": self.git_dir}, stdin)

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


async def find(cwd: str) -> Repo | None:
    """The repository whose work tree holds ``cwd`` (None: none, or no git)."""
    args = ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir"]
    r = await run([*args, "--git-common-dir", "--show-object-format"], cwd)
    lines = r.stdout.decode(errors="replace").splitlines()
    if r.code != 0 or len(lines) != 4:
        return None
    return Repo(*lines)
