"""mm's command line, ``-acp -config agent.yaml`` (anything else exits 2), and the serving loop."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable

from . import wire
from .agent import ScriptedMM
from .config import Config, load_config, log

DEFAULT_BANNER = "mm v0.0.0-scripted (scripted mm, no model): ACP on stdio"


async def serve(agent: ScriptedMM) -> str:
    """Speak ACP on stdio until the client closes its side; returns why it ended."""
    # mm (Go) has no recursion limit: deeply nested JSON (a test's /deep-input) must encode.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    reader, writer = await wire.stdio()
    path = agent.config.fake.get("trace")
    trace = None
    if path:  # errors="replace": a fault command's line may hold a lone surrogate
        trace = open(path, "a", encoding="utf-8", errors="replace", buffering=1)  # noqa: SIM115
    agent.wire = wire.Connection(reader, writer, agent.handle, agent.notified, trace)
    why = await agent.wire.run()
    await agent.closed(why)
    return why


def main(
    argv: list[str],
    make: Callable[[Config], ScriptedMM] = ScriptedMM,
    banner: str = DEFAULT_BANNER,
) -> int:
    """mm's command line; ``make`` builds the agent (tests/fake_mm.py passes its own)."""
    if len(argv) != 3 or argv[0] != "-acp" or argv[1] != "-config":
        log("usage: mm -acp -config <agent.yaml>")
        return 2
    try:
        config = load_config(argv[2])
    except (OSError, ValueError) as exc:
        log(f"error: agent file: {exc}")
        return 1
    banner = config.fake.get("banner", banner)
    if banner:
        log(str(banner).replace("{pid}", str(os.getpid())))
    agent = make(config)
    if (status := agent.before_serving()) is not None:
        return status
    try:
        asyncio.run(serve(agent))
    except KeyboardInterrupt:
        return 130
    return 0
