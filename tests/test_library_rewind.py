"""The rewind for a Python program (minime.Checkpoints, Client.branch) through the fake mm:
files put back after turns that wrote them (the agent's own write, a shell command), in git
and outside it, the rewind undone, the checkpoints kept from `git gc` while they live and gone
after close(); the conversation continued from before an ask — forked where the agent forks at
a message, else a new session given the asks and answers before it."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import minime
from conftest import FakeMM

FILES = {"a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c0\n"}


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return out.stdout


def repo(cwd: Path) -> None:
    git(cwd, "init", "-q")
    (cwd / ".gitignore").write_text("trace.jsonl\nagent.yaml\n")
    for name, text in FILES.items():
        (cwd / name).write_text(text)
    git(cwd, "add", "-A")
    git(cwd, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "start")


def files(cwd: Path) -> dict[str, str | None]:
    names = [*FILES, "new.txt"]
    return {n: (cwd / n).read_text() if (cwd / n).exists() else None for n in names}


async def two_turns(mm: FakeMM, checkpoints: minime.Checkpoints) -> None:
    """Ask 1: the agent's own write of a.txt, a shell command creates new.txt. Ask 2: a shell
    command rewrites b.txt and deletes c.txt. The user edits nothing."""
    async with mm.client(on_permission=lambda _: minime.ALLOW) as client:
        session = await client.new_session(str(mm.dir))
        for prompt in (
            "/disk-write a.txt A1\n/shell-write new.txt N",
            "/shell-write b.txt B1\n/shell-write c.txt -",
        ):
            await checkpoints.take()
            await session.complete(prompt)
            await checkpoints.ended()


def rewind_all_and_undo(mm: FakeMM) -> None:
    async def main() -> None:
        # The fake's own files are not the user's: on the deny list (outside git, every file).
        checkpoints = minime.Checkpoints(str(mm.dir), deny=["trace.jsonl", "agent.yaml"])
        await two_turns(mm, checkpoints)
        after = files(mm.dir)
        assert after == {"a.txt": "A1\n", "b.txt": "B1\n", "c.txt": None, "new.txt": "N\n"}
        back = await checkpoints.rewind(2)
        assert (back.restored, back.removed, back.kept) == (["b.txt", "c.txt"], [], [])
        assert files(mm.dir) == {**FILES, "a.txt": "A1\n", "new.txt": "N\n"}
        back = await checkpoints.rewind(1)
        assert (back.restored, back.removed) == (["a.txt"], ["new.txt"])
        assert files(mm.dir) == {**FILES, "new.txt": None}
        undone = await checkpoints.undo()
        assert (undone.restored, undone.removed) == (["a.txt", "new.txt"], [])
        assert files(mm.dir) == {**FILES, "a.txt": "A1\n", "new.txt": "N\n"}
        await checkpoints.close()

    asyncio.run(main())


def test_checkpoints_in_git_rewind_and_undo(mm: FakeMM) -> None:
    repo(mm.dir)
    rewind_all_and_undo(mm)
    assert git(mm.dir, "for-each-ref", "refs/minime/") == "", "close() removed the ref"
    assert git(mm.dir, "status", "--porcelain") == " M a.txt\n?? new.txt\n"


def test_checkpoints_outside_git_rewind_and_undo(mm: FakeMM) -> None:
    for name, text in FILES.items():
        (mm.dir / name).write_text(text)
    rewind_all_and_undo(mm)


def test_a_checkpoint_survives_git_gc_and_a_crashed_process_ref_is_swept(mm: FakeMM) -> None:
    repo(mm.dir)
    dead = subprocess.run(["true"], check=True)  # a pid that is gone by now
    del dead

    async def main() -> None:
        checkpoints = minime.Checkpoints(str(mm.dir))
        await checkpoints.take()
        (mm.dir / "a.txt").write_text("A1\n")
        ref = git(mm.dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/minime/")
        name, tree = ref.split()
        assert name.startswith(f"refs/minime/{os.getpid()}/lib-")
        git(mm.dir, "update-ref", "refs/minime/999999999/t1", tree)  # no such process
        git(mm.dir, "gc", "--prune=now", "-q")
        assert (await checkpoints.rewind(1)).restored == ["a.txt"], "the tree outlived git gc"
        later = minime.Checkpoints(str(mm.dir))
        await later.take()
        refs = git(mm.dir, "for-each-ref", "--format=%(refname)", "refs/minime/").split()
        assert "refs/minime/999999999/t1" not in refs and name in refs
        await later.close()
        await checkpoints.close()

    asyncio.run(main())


def test_a_file_the_user_edited_after_a_turn_is_kept_unless_forced(mm: FakeMM) -> None:
    repo(mm.dir)

    async def main() -> None:
        checkpoints = minime.Checkpoints(str(mm.dir))
        async with mm.client(on_permission=lambda _: minime.ALLOW) as client:
            session = await client.new_session(str(mm.dir))
            await checkpoints.take()
            await session.complete("/shell-write a.txt A1\n/shell-write b.txt B1")
            await checkpoints.ended()
        (mm.dir / "b.txt").write_text("mine\n")
        back = await checkpoints.rewind(1)
        assert (back.restored, back.kept) == (["a.txt"], ["b.txt"])
        assert (mm.dir / "b.txt").read_text() == "mine\n"
        back = await checkpoints.rewind(1, force=True)
        assert back.restored == ["b.txt"] and (mm.dir / "b.txt").read_text() == "b0\n"
        await checkpoints.close()

    asyncio.run(main())


def prompts_of(mm: FakeMM, session_id: str) -> list[list[dict]]:
    return [
        m["params"]["prompt"]
        for m in mm.received("session/prompt")
        if m["params"]["sessionId"] == session_id
    ]


def test_branch_without_fork_carries_the_asks_and_answers_in_a_new_session(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.client() as client:
            old = await client.new_session(str(mm.dir))
            await old.complete("/say one")
            await old.complete("/say two")
            await old.complete("/say three")
            branch = await client.branch(old, 3)
            assert branch.how == "history" and branch.session is not old
            result = await branch.session.complete(branch.prompt("/say three, edited"))
            assert result.text.endswith("three, edited")
            (first,) = prompts_of(mm, branch.session.session_id)
            history, ask = first
            assert ask == {"type": "text", "text": "/say three, edited"}
            assert history["type"] == "text"  # mm takes no embedded resource
            text = history["text"]
            assert "ask 1:\n> /say one\n\nanswer 1:\n> one\n" in text
            assert "ask 2:\n> /say two\n\nanswer 2:\n> two\n" in text
            assert "three" not in text, "nothing of the dropped ask"
            # The fake mm read the history (each line of it echoed), then the new ask.
            assert "echo: > /say one" in result.text
            asks = [e.ask for e in branch.session.history.exchanges]
            assert asks[:2] == ["/say one", "/say two"] and len(asks) == 3
            assert asks[2].startswith("[minime] ") and asks[2].endswith("\n/say three, edited")
            first_ask = await client.branch(old, 1)
            assert first_ask.how == "new" and first_ask.prompt("again") == "again"

    asyncio.run(main())


def test_branch_forks_at_the_last_message_before_the_ask_where_the_agent_forks(
    mm: FakeMM,
) -> None:
    config = mm.config(fake={"fork": True})

    async def main() -> None:
        async with mm.client(config) as client:
            old = await client.new_session(str(mm.dir))
            for text in ("one", "two", "three"):
                await old.complete(f"/say {text}")
            branch = await client.branch(old, 3)
            assert branch.how == "fork" and branch.note is None
            result = await branch.session.complete(branch.prompt("/history\n/say again"))
            assert result.text == "history: /say one | /say two\nagain"
            (fork,) = mm.received("session/fork")
            point = fork["params"]["_meta"]["jetbrains"]["air"]["fork"]
            assert point["version"] == 1 and point["messageId"] == "m2"
            assert point["messageFingerprint"].startswith("sha256:")
            # A fork point the agent does not know: refused, and the history goes as text.
            old.history.exchanges[-2] = minime.Exchange("/say two", "two", "nope", "two")
            branch = await client.branch(old, 3)
            assert branch.how == "history" and "refused the fork" in (branch.note or "")

    asyncio.run(main())
