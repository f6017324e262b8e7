"""Nothing an agent started outlives it: its tool commands, run in a session of their own (as
claude's and codex's shell tools do) or orphaned before anyone stops anything, end with it on
:MiniMeStop, on :qa!, when the Python host is killed, and on the library's Client.close().

The agent is tests/agents/spawner.py: each command it starts writes a marker file after a
minute unless it is ended. Each test first checks the command really escaped the agent's process
group (else the test could not fail), then that it is gone within a deadline and wrote nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import pytest
from conftest import process_gone
from nvim_harness import wait_for
from plugin_harness import Editor, editor_with

SPAWNER = Path(__file__).with_name("agents") / "spawner.py"
KINDS = ("setsid", "orphan", "scrubbed", "stubborn", "disguised")


def stat(pid: int) -> dict[str, int]:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return {"ppid": int(fields[1]), "pgid": int(fields[2]), "sid": int(fields[3])}


def spawned(text: str) -> list[int]:
    return [int(line.split()[1]) for line in text.splitlines() if line.startswith("spawned ")]


def ignores_sigterm(pid: int) -> bool:
    with open(f"/proc/{pid}/status") as f:
        ignored = next(line for line in f if line.startswith("SigIgn:")).split()[1]
    return bool(int(ignored, 16) & (1 << (signal.SIGTERM - 1)))


def assert_escaped(pids: list[int], agent: int, kinds: tuple[str, ...]) -> None:
    """The commands run, each in a session (and group) of its own, not the agent's; a stubborn
    one once it ignores SIGTERM (so only SIGKILL ends it)."""
    for pid, kind in zip(pids, kinds, strict=True):
        assert not process_gone(pid), f"command {pid} is running"
        seen = stat(pid)
        assert seen["sid"] == pid and seen["pgid"] == pid, (pid, seen)
        assert seen["sid"] != agent
        if kind == "stubborn":
            wait_for(lambda pid=pid: ignores_sigterm(pid), 10, message="for SIGTERM ignored")


def assert_ended(pids: list[int], marker: Path, timeout: float = 10) -> None:
    wait_for(
        lambda: all(process_gone(pid) for pid in pids),
        timeout,
        message=f"for the agent's commands {pids} to end",
    )
    assert list(marker.parent.glob(marker.name + ".*")) == [], "no command finished its work"


# ---------------------------------------------------------------------------------------------
# Through the plugin: a real Neovim, its Python host, the spawner as an inline agent.


@contextlib.contextmanager
def spawner_editor(tmp_path: Path):
    marker = tmp_path / "marker"
    agent = {"cmd": [sys.executable, str(SPAWNER)], "env": {"SPAWNER_MARKER": str(marker)}}
    with editor_with(tmp_path, {"agent": agent}, timeout=30.0) as ed:
        yield ed, marker


def start_commands(ed: Editor, kinds: tuple[str, ...]) -> tuple[int, list[int]]:
    """Ask for ``kinds`` of command; (the agent's pid, the commands' pids), all checked running."""
    done, text = ed.turn(" ".join(kinds))
    assert done["stop_reason"] == "end_turn", text
    pids = spawned(text)
    assert len(pids) == len(kinds), text
    tracked = ed.lua("return vim.tbl_keys(require('minime.host').agents)")
    live = [pid for pid in tracked if not process_gone(pid)]
    assert len(live) == 1, f"one agent runs: {tracked}"
    agent = live[0]
    assert stat(pids[0])["ppid"] == agent, "the setsid command is the agent's child"
    assert_escaped(pids, agent, kinds)
    return agent, pids


def test_minime_stop_ends_the_agents_commands(tmp_path: Path) -> None:
    with spawner_editor(tmp_path) as (ed, marker):
        agent, pids = start_commands(ed, KINDS)
        ed.nvim.command("MiniMeStop")
        ed.wait_note("minime: agent stopped")
        assert_ended([agent, *pids], marker)
        assert not process_gone(ed.host_pid()), "the host goes on"
        # The host adopted the orphans (a subreaper): it also collects them, no zombie is left.
        wait_for(
            lambda: not any(os.path.exists(f"/proc/{pid}") for pid in pids),
            5,
            message="for the host to reap what it adopted",
        )


def test_quitting_neovim_ends_the_agents_commands(tmp_path: Path) -> None:
    with spawner_editor(tmp_path) as (ed, marker):
        agent, pids = start_commands(ed, KINDS)
        host = ed.host_pid()
        with contextlib.suppress(OSError, EOFError):
            ed.nvim.command("qa!")
    assert_ended([host, agent, *pids], marker)


def test_a_reused_pid_of_a_stopped_agent_is_not_taken_for_it(tmp_path: Path) -> None:
    """An agent stopped long ago and a stranger now holding its pid (here: a session leader
    with a child in its session) — quitting ends the live agent's tree, not the stranger's."""
    import subprocess

    stranger = subprocess.Popen(
        ["sh", "-c", "sleep 60 & wait"], start_new_session=True, stdin=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: session_members(stranger.pid) >= 2, 10, message="for the stranger's child")
        with spawner_editor(tmp_path) as (ed, marker):
            agent, pids = start_commands(ed, ("setsid",))
            ed.lua("require('minime.host').agents[...] = '1'", stranger.pid)  # another start
            with contextlib.suppress(OSError, EOFError):
                ed.nvim.command("qa!")
        assert_ended([agent, *pids], marker)
        assert stranger.poll() is None and session_members(stranger.pid) == 2, "spared"
    finally:
        os.killpg(stranger.pid, signal.SIGKILL)
        stranger.wait()


def session_members(sid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, IndexError):
            if entry.isdigit() and stat(int(entry))["sid"] == sid and not process_gone(int(entry)):
                count += 1
    return count


def test_killing_the_host_ends_the_agents_commands(tmp_path: Path) -> None:
    """Lua ends them: the host cannot. A command that both left the tree and dropped the
    environment is out of reach once the host is gone (notes/faults.md)."""
    with spawner_editor(tmp_path) as (ed, marker):
        job = ed.lua("return vim.fn.jobstart({ 'sleep', '60' })")
        bystander = ed.lua("return vim.fn.jobpid(...)", job)
        agent, pids = start_commands(ed, ("setsid", "orphan", "stubborn"))
        os.kill(ed.host_pid(), signal.SIGKILL)
        ed.wait_note("Python host stopped")
        assert_ended([agent, *pids], marker)
        assert not process_gone(bystander), "a job of Neovim's own is not the agent's"
        ed.lua("vim.fn.jobstop(...)", job)


# ---------------------------------------------------------------------------------------------
# The library.


@pytest.mark.parametrize("kind", ["setsid", "orphan", "stubborn", "disguised"])
def test_client_close_ends_the_agents_commands(tmp_path: Path, kind: str) -> None:
    import minime

    marker = tmp_path / "marker"

    async def main() -> tuple[int, list[int]]:
        client = await minime.connect(
            command=[sys.executable, str(SPAWNER)],
            cwd=tmp_path,
            env={"SPAWNER_MARKER": str(marker)},
        )
        try:
            session = await client.new_session()
            result = await session.complete(kind)
            pids = spawned(result.text)
            assert len(pids) == 1, result.text
            assert_escaped(pids, client.process.pid, (kind,))
            if kind == "orphan":
                assert stat(pids[0])["ppid"] != client.process.pid, "re-parented already"
        finally:
            await client.close(grace=1.0)
        return client.process.pid, pids

    agent, pids = asyncio.run(main())
    assert_ended([agent, *pids], marker, timeout=5)


def test_closing_one_client_spares_another_clients_commands(tmp_path: Path) -> None:
    import minime

    marker = tmp_path / "marker"

    async def main() -> None:
        def connect() -> minime.Client:
            return minime.connect(
                command=[sys.executable, str(SPAWNER)],
                cwd=tmp_path,
                env={"SPAWNER_MARKER": str(marker)},
            )

        first, second = await connect(), await connect()
        try:
            ours = spawned((await (await first.new_session()).complete("setsid orphan")).text)
            theirs = spawned((await (await second.new_session()).complete("setsid orphan")).text)
            assert len(ours) == len(theirs) == 2
            await first.close(grace=1.0)
            assert_ended(ours, marker, timeout=5)
            assert not any(process_gone(pid) for pid in theirs), "the other agent's run on"
        finally:
            await second.close(grace=1.0)
        assert_ended(theirs, marker, timeout=5)

    asyncio.run(main())


def test_close_spares_a_process_that_is_not_the_agents(tmp_path: Path) -> None:
    """The tree is the agent's: a process of ours beside it (same session) is left alone."""
    import subprocess

    import minime

    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:

        async def main() -> None:
            client = await minime.connect(command=[sys.executable, str(SPAWNER)], cwd=tmp_path)
            await client.close(grace=1.0)

        asyncio.run(main())
        assert bystander.poll() is None, "the bystander still runs"
    finally:
        bystander.kill()
        bystander.wait()


def test_a_tree_is_terminated_as_at_one_instant(tmp_path: Path) -> None:
    """A shell waiting on ``sleep``, signalled with its ``sleep`` first (dict order): stopped,
    signalled and continued together, the shell never runs its next line. One by one, it
    sometimes did (claude's Bash on :qa!: finished.txt)."""
    import subprocess

    from minime import proctree

    written = 0  # one by one, about 1 run in 30 wrote it: 80 runs catch that nearly always
    for n in range(80):
        marker = tmp_path / f"ran{n}"
        argv = ["sh", "-c", f"sleep 1000; echo ran > {marker}"]
        shell = subprocess.Popen(argv, start_new_session=True)  # not the test's own group
        seen = proctree.read_proc(shell.pid)
        assert seen is not None
        roots = {shell.pid: seen.start}
        wait_for(lambda roots=roots: len(proctree.snapshot(roots)) == 2, 10)
        tree = proctree.snapshot(roots)
        child_first = dict(sorted(tree.items(), key=lambda item: item[0] == shell.pid))
        proctree.terminate_all(child_first)
        assert shell.wait(10) == -signal.SIGTERM  # reaped: no later write can come
        written += marker.exists()
    assert written == 0
