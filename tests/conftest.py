"""Fixtures for the library tests: the fake mm as a real ``mm`` executable, and its agent files."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shlex
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

FAKE_MM = Path(__file__).with_name("fake_mm.py")


@pytest.fixture(scope="session")
def fake_mm_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An executable named ``mm`` that runs tests/fake_mm.py with this interpreter.

    If ``$FAKE_MM_SPAWNED`` names a file, each start creates it (tests that nothing spawned).
    """
    path = tmp_path_factory.mktemp("bin") / "mm"
    path.write_text(
        "#!/bin/sh\n"
        '[ -n "$FAKE_MM_SPAWNED" ] && : > "$FAKE_MM_SPAWNED"\n'
        f'exec {shlex.quote(sys.executable)} {shlex.quote(str(FAKE_MM))} "$@"\n'
    )
    path.chmod(0o755)
    return str(path)


class FakeMM:
    """The fake mm for one test: agent files, a started agent, and what crossed the wire."""

    def __init__(self, binary: str, directory: Path) -> None:
        self.bin = binary
        self.dir = directory
        self.trace_path = directory / "trace.jsonl"
        self.stderr: list[str] = []

    def config(
        self,
        *,
        yolo: bool = False,
        max_output: int | None = None,
        client_tools: dict[str, Any] | None = None,
        fake: dict[str, Any] | None = None,
        trace: bool = True,
        name: str = "agent.yaml",
    ) -> str:
        """Write an agent file; by default the fake traces every message to ``trace_path``."""
        data: dict[str, Any] = {"model": "fake", "yolo": yolo}
        if max_output is not None:
            data["maxOutput"] = max_output
        if client_tools is not None:
            data["acp"] = {"clientTools": client_tools}
        data["fake"] = dict(fake or {})
        if trace:
            data["fake"].setdefault("trace", str(self.trace_path))
        path = self.dir / name
        path.write_text(yaml.safe_dump(data))
        return str(path)

    @contextlib.asynccontextmanager
    async def agent(self, config: str | None = None, **options: Any) -> AsyncIterator[Any]:
        """``minime.start`` on the fake (cwd: the test's directory), closed on the way out."""
        import minime

        options.setdefault("mm", self.bin)
        options.setdefault("cwd", str(self.dir))
        options.setdefault("on_stderr", self.stderr.append)
        agent = await minime.start(config or self.config(), **options)
        try:
            yield agent
        finally:
            await agent.close()

    @contextlib.asynccontextmanager
    async def client(self, config: str | None = None, **options: Any) -> AsyncIterator[Any]:
        """``minime.connect`` on the fake, closed on the way out."""
        import minime

        options.setdefault("mm", self.bin)
        options.setdefault("cwd", str(self.dir))
        options.setdefault("on_stderr", self.stderr.append)
        client = await minime.connect(config or self.config(), **options)
        try:
            yield client
        finally:
            await client.close()

    def trace(self) -> list[dict[str, Any]]:
        """Every message so far: ``{"dir": "in" | "out" | "raw", "msg": ...}``, from mm's side."""
        if not self.trace_path.exists():
            return []
        text = self.trace_path.read_text(encoding="utf-8")
        complete = text[: text.rfind("\n") + 1]  # the fake may be writing the last line
        return [json.loads(line) for line in complete.splitlines()]

    def sent(self, method: str | None = None) -> list[dict[str, Any]]:
        """Messages mm sent (requests and notifications), optionally of one method."""
        return [
            t["msg"]
            for t in self.trace()
            if t["dir"] == "out" and "method" in t["msg"] and method in (None, t["msg"]["method"])
        ]

    def received(self, method: str | None = None) -> list[dict[str, Any]]:
        """Messages the client sent to mm, optionally of one method."""
        return [
            t["msg"]
            for t in self.trace()
            if t["dir"] == "in" and "method" in t["msg"] and method in (None, t["msg"]["method"])
        ]

    def answer_to(self, request_id: Any) -> dict[str, Any] | None:
        """The client's response to mm's request ``request_id``, if it came."""
        for t in self.trace():
            msg = t["msg"]
            if t["dir"] == "in" and "method" not in msg and msg.get("id") == request_id:
                return msg
        return None

    @staticmethod
    async def until(
        predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition"
    ) -> Any:
        """Wait for ``predicate()`` to be truthy; fail the test after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            await asyncio.sleep(0.01)


@pytest.fixture
def mm(fake_mm_bin: str, tmp_path: Path) -> FakeMM:
    return FakeMM(fake_mm_bin, tmp_path)


def process_gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):  # reaped between open() and read()
        return True


@pytest.fixture
def gone() -> Callable[[int], bool]:
    return process_gone


@pytest.fixture(scope="module", autouse=True)
def shared_nvim(request: pytest.FixtureRequest) -> Iterator[None]:
    """A module's ``SHARED = SharedNvim(...)`` (helpers/shared_nvim.py) closes with the module."""
    # Imported here: it imports plugin_harness, which imports this module.
    from helpers.shared_nvim import SharedNvim

    shared = getattr(request.module, "SHARED", None)
    if not isinstance(shared, SharedNvim):
        yield
        return
    with shared:
        yield


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``MINIME_TEST_REVERSE=1``: the tests in reverse order; ``MINIME_TEST_SHUFFLE=<seed>``:
    each module's tests shuffled. A test that passes only after the one before it (a shared
    Neovim's reset, helpers/shared_nvim.py) shows."""
    if os.environ.get("MINIME_TEST_REVERSE"):
        items.reverse()
    if seed := os.environ.get("MINIME_TEST_SHUFFLE"):
        modules: dict[str, list[pytest.Item]] = {}
        for item in items:
            modules.setdefault(item.nodeid.split("::")[0], []).append(item)
        shuffler = random.Random(seed)
        for group in modules.values():
            shuffler.shuffle(group)
        items[:] = [item for group in modules.values() for item in group]
