"""The ACP file system through the library: tests/agents/fs_agent.py sends ``fs/*`` requests
and reports the client's answers; each test reads what crossed the wire."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import minime

AGENT = Path(__file__).with_name("agents") / "fs_agent.py"


class Disk:
    """Handlers over the real disk, recording what they were asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def read(self, session_id: str, path: str, line: int | None, limit: int | None) -> str:
        self.calls.append(("read", session_id, path, line, limit))
        return Path(path).read_text()

    async def write(self, session_id: str, path: str, content: str) -> None:
        self.calls.append(("write", session_id, path))
        Path(path).write_text(content)


async def answers(prompt: Any, cwd: Path, fs: Any) -> list[str]:
    client = await minime.connect(command=[sys.executable, str(AGENT)], cwd=cwd, fs=fs)
    try:
        session = await client.new_session()
        text = prompt if isinstance(prompt, str) else json.dumps(prompt)
        events = [e async for e in session.stream(text)]
        return "".join(e.text for e in events if e.kind == "text").split("FS ")
    finally:
        await client.close()


def fs_answers(prompt: Any, cwd: Path, fs: Any) -> list[dict[str, Any]]:
    import asyncio

    parts = asyncio.run(answers(prompt, cwd, fs))
    return [json.loads(p) for p in parts if p.strip()]


def read(path: str, **params: Any) -> dict[str, Any]:
    return {"method": "fs/read_text_file", "params": {"path": path, **params}}


def write(path: str, content: str, **params: Any) -> dict[str, Any]:
    return {"method": "fs/write_text_file", "params": {"path": path, "content": content, **params}}


def test_capability_is_advertised_only_with_fs(tmp_path: Path) -> None:
    import asyncio

    with_fs = asyncio.run(answers("caps", tmp_path, Disk()))
    without = asyncio.run(answers("caps", tmp_path, None))
    caps_on = json.loads(with_fs[0].removeprefix("CAPS "))
    caps_off = json.loads(without[0].removeprefix("CAPS "))
    assert caps_on["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert not (caps_off.get("fs") or {}).get("readTextFile")
    assert not (caps_off.get("fs") or {}).get("writeTextFile")


def test_read_and_write_inside_the_cwd(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    disk = Disk()
    got = fs_answers(
        [read(str(tmp_path / "a.txt"), line=1, limit=1), write(str(tmp_path / "b.txt"), "new")],
        tmp_path,
        disk,
    )
    assert got == [{"result": {"content": "hello\n"}}, {"result": {}}]
    assert (tmp_path / "b.txt").read_text() == "new"
    real = os.path.realpath(tmp_path)
    assert disk.calls[0] == ("read", "fs-1", f"{real}/a.txt", 1, 1)


def test_refusals_unknown_session_outside_symlink_relative(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "link").symlink_to(outside / "secret.txt")
    (cwd / "dirlink").symlink_to(outside)
    disk = Disk()
    got = fs_answers(
        [
            read(str(cwd / "x.txt"), sessionId="not-mine"),
            read(str(outside / "secret.txt")),
            read(str(cwd / ".." / "outside" / "secret.txt")),
            read(str(cwd / "link")),
            write(str(cwd / "dirlink" / "secret.txt"), "pwned"),
            read("x.txt"),
        ],
        cwd,
        disk,
    )
    assert [a["error"]["code"] for a in got] == [-32602] * 6
    details = [json.dumps(a["error"]) for a in got]
    assert "never opened" in details[0]
    assert all("outside the session's working directory" in d for d in details[1:5])
    assert "absolute" in details[5]
    assert disk.calls == []  # nothing was read or written
    assert (outside / "secret.txt").read_text() == "secret"


def test_a_read_handler_that_finds_no_file_answers_resource_not_found(tmp_path: Path) -> None:
    """A handler raising FileNotFoundError (Path.read_text on a missing file) is ACP's -32002,
    which agents tell from a refusal (qwen-code makes it ENOENT); the path is the agent's own."""
    got = fs_answers([read(str(tmp_path / "gone.txt"))], tmp_path, Disk())
    error = got[0]["error"]
    assert error["code"] == -32002 and error["message"] == "Resource not found"
    assert error["data"]["uri"] == str(tmp_path / "gone.txt")
    assert error["data"]["details"] == "No such file or directory"
