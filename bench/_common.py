"""Shared helpers for the benchmarks: percentiles, JSON-line output, the bare-SDK client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
AGENT = str(BENCH / "agent.py")
PYTHON = sys.executable
TOOL_RESULT_OK = {"content": [{"type": "text", "text": "ok"}], "isError": False}

for extra in (REPO / "rplugin" / "python3", REPO / "tests"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))


def quantile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 1]."""
    data = sorted(values)
    if not data:
        return float("nan")
    pos = (len(data) - 1) * q
    low = int(pos)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (pos - low)


def median(values: Sequence[float]) -> float:
    return quantile(values, 0.5)


def ms(ns_values: Sequence[int]) -> list[float]:
    return [v / 1e6 for v in ns_values]


def emit(bench: str, metric: str, value: Any, unit: str, **extra: Any) -> dict[str, Any]:
    """Print one measurement as a JSON line (and return it)."""
    if isinstance(value, float):
        value = round(value, 4)
    record = {"bench": bench, "metric": metric, "value": value, "unit": unit}
    for key, item in extra.items():
        record[key] = round(item, 4) if isinstance(item, float) else item
    print(json.dumps(record), flush=True)
    return record


def read_json(path: str | os.PathLike[str]) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class BareClient:
    """The ACP client side with nothing but the SDK: ext_method answers ``answer(method)``."""

    def __init__(self, answer: Callable[[str, dict[str, Any]], Any]) -> None:
        self.answer = answer

    async def request_permission(self, *_: Any, **__: Any) -> Any:
        raise RuntimeError("the bench agent never asks")

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> Any:
        return self.answer(method, params)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


class BareSession:
    """The bench agent driven through the SDK alone (spawned as design.md says: own stderr)."""

    def __init__(self, answer: Callable[[str, dict[str, Any]], Any]) -> None:
        self.client = BareClient(answer)
        self.proc: asyncio.subprocess.Process | None = None
        self.conn: Any = None
        self.session_id = ""

    async def start(self, cwd: str) -> BareSession:
        import acp
        from acp.schema import ClientCapabilities, Implementation

        self.proc = await asyncio.create_subprocess_exec(
            PYTHON,
            AGENT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=cwd,
            start_new_session=True,
            limit=1 << 24,
        )
        self.conn = acp.connect_to_agent(self.client, self.proc.stdin, self.proc.stdout)
        await self.conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="bench-bare", version="0"),
        )
        response = await self.conn.new_session(cwd=cwd, mcp_servers=[])
        self.session_id = response.session_id
        return self

    async def prompt(self, text: str) -> Any:
        import acp

        return await self.conn.prompt(session_id=self.session_id, prompt=[acp.text_block(text)])

    async def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()
            try:
                await asyncio.wait_for(self.proc.wait(), 5)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        if self.conn is not None:
            with contextlib.suppress(Exception):
                await self.conn.close()


def lua_str(value: str) -> str:
    return "[==[" + value + "]==]"


@contextlib.contextmanager
def plugin_editor(
    workdir: Path, opts_lua: str, extra_lua: str = "", args: tuple[str, ...] = ()
) -> Iterator[Any]:
    """A headless Neovim with the plugin set up with ``opts_lua``, its cwd ``workdir``."""
    from nvim_harness import start

    init = f"vim.o.swapfile = false\nrequire('minime').setup({opts_lua})\n{extra_lua}"
    with start(init, env={"MINIME_PYTHON": PYTHON}, args=args) as nvim:
        nvim.command(f"cd {workdir}")
        yield nvim


@contextlib.contextmanager
def ui_attached(nvim: Any, sock: Path, stamps: Path) -> Iterator[Callable[[], list[int]]]:
    """bench/ui_client.py (its own process) attached to the Neovim listening on ``sock``;
    yields a function reading the UI's ``flush`` stamps (``time.monotonic_ns()``)."""
    import subprocess

    proc = subprocess.Popen(
        [PYTHON, str(BENCH / "ui_client.py"), str(sock), str(stamps)],
        stdin=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not (stamps.exists() and stamps.read_text().startswith("attached")):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("the UI did not attach")
            time.sleep(0.01)
        if not nvim.api.list_uis():
            raise RuntimeError("Neovim lists no UI")
        yield lambda: [int(x) for x in stamps.read_text().split()[1:]]
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def fake_mm_opts(workdir: Path) -> str:
    """setup{} options for the fake mm (demo/mm) with an agent file: yolo, discovery request."""
    import yaml

    config = workdir / "agent.yaml"
    data = {"yolo": True, "acp": {"clientTools": {"discovery": "request"}}}
    config.write_text(yaml.safe_dump(data))
    mm = REPO / "demo" / "mm"
    return f"{{ mm = {lua_str(str(mm))}, config = {lua_str(str(config))} }}"


def bench_agent_opts(discovery: str = "meta") -> str:
    """setup{} options for bench/agent.py as the agent (``agent.cmd``). It speaks mm's
    client-tool dialect, so ``editor_tools = "client"``: an agent definition without an agent
    file gets the tools over MCP by default, and bench/agent.py's ``tool`` would
    find none (the turn fails, its OUT file never appears)."""
    cmd = f"{{ {lua_str(PYTHON)}, {lua_str(AGENT)} }}"
    return (
        f"{{ agent = {{ cmd = {cmd} }}, editor_tools = 'client',"
        f" discovery = {lua_str(discovery)} }}"
    )


def wait_file(
    path: Path,
    timeout: float = 120.0,
    interval: float = 0.005,
    ended: Callable[[], str | None] | None = None,
) -> None:
    """Wait for the agent's OUT file. ``ended`` (asked every 0.5 s, not to load Neovim while
    it is timed) returns why the turn ended without it, or None while it runs: a failed turn
    is then said at once, not after ``timeout``."""
    deadline = time.monotonic() + timeout
    next_look = time.monotonic() + 0.5
    while not path.exists():
        now = time.monotonic()
        if now > deadline:
            raise RuntimeError(f"{path} did not appear within {timeout} s")
        if ended is not None and now > next_look:
            next_look = now + 0.5
            why = ended()
            if why is not None and not path.exists():
                raise RuntimeError(f"the turn ended without writing {path.name}: {why}")
        time.sleep(interval)


TURN_END = """
if _G.bench_done < ... then return vim.NIL end
local s = require('minime.ui.turn').get(vim.fn.getcwd())
if s == nil or not vim.api.nvim_buf_is_valid(s.buf) then return 'no conversation' end
return vim.api.nvim_buf_get_lines(s.buf, -2, -1, false)[1] or ''
"""


def turn_ended(nvim: Any, turn: int) -> Callable[[], str | None]:
    """For ``wait_file``: once turn ``turn`` ended (EXTRA_INIT's ``_G.bench_done``
    counts MiniMeTurnDone), the float's last line (the error a failed turn shows)."""
    return lambda: nvim.exec_lua(TURN_END, turn)


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    import subprocess

    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env
    ).stdout


def make_repo(root: Path, files: int = 10_000, dirs: int = 100) -> None:
    """A git repository of `files` files in `dirs` directories, committed, then 10 files
    changed and 10 new untracked ones (what a snapshot finds at a turn's start)."""
    for i in range(files):
        d = root / f"d{i % dirs:03d}"
        d.mkdir(exist_ok=True)
        (d / f"f{i:05d}.txt").write_text(f"file {i}\n" + "line\n" * 20)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.email=b@example.com", "-c", "user.name=b", "commit", "-qm", "10k")
    for i in range(10):
        (root / f"d{i:03d}" / f"f{i:05d}.txt").write_text("changed\n")
        (root / f"new{i}.txt").write_text("new\n")
