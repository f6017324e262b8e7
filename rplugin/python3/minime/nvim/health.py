"""``python -m minime.nvim.health '<json>'``: what ``:checkhealth minime`` needs from Python.

Prints one JSON object a line, flushed as soon as known, so a check that hangs or dies still
leaves the earlier lines: ``{"python": …, "packages": …}``, then (only when every package is
installed: else the one thing to say is to install them) ``{"agent_file": …}`` when the
arguments name one, then ``{"live": …}`` when asked to start the agent. Arguments (one
JSON object, the agent as lua/minime/agents/ resolved it): ``command``, ``env``,
``agent_file``, ``discovery``, ``cwd``, ``live``, ``timeout`` (seconds for ``initialize``).
The live check starts the agent, runs ``initialize``, reports its name, version and
capabilities, opens a session in ``cwd`` (``session/new``: an agent whose login or model
settings are wrong answers initialize and fails only here, in ``session_error``), and stops it.

Only the standard library is imported up front: a broken environment still says what it
lacks.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

PACKAGES = ("pynvim", "agent-client-protocol", "msgspec", "pyyaml")


def emit(**item: Any) -> None:
    print(json.dumps(item), flush=True)


def versions() -> dict[str, Any]:
    from importlib import metadata

    found: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return {
        "python": {
            "executable": sys.executable,
            "version": ".".join(map(str, sys.version_info[:3])),
        },
        "packages": found,
    }


def agent_file(path: str) -> dict[str, Any]:
    """Whether mm's agent file parses, and what it says about client tools."""
    report: dict[str, Any] = {"path": path}
    try:
        from . import agentfile

        block = agentfile.client_tools(path)
    except FileNotFoundError:
        report["error"] = "not found"
        return report
    except Exception as exc:
        report["error"] = f"{type(exc).__name__}: {exc}"
        return report
    mode = block.get("discovery")
    report["discovery"] = mode if mode in ("meta", "request") else None
    report["enabled"] = block.get("enabled", True) is not False
    return report


async def live(args: dict[str, Any]) -> dict[str, Any]:
    """Start the agent, ``initialize``, open a session, and stop it."""
    from ..client import connect
    from ..errors import Error
    from .agent_env import agent_env

    stderr: list[str] = []
    began = time.monotonic()
    client = await connect(
        command=args.get("command") or None,
        env=agent_env(args.get("env")),
        discovery=args.get("discovery") or "meta",
        cwd=args.get("cwd") or None,
        on_stderr=stderr.append,
        ready_timeout=float(args.get("timeout") or 15),
    )
    seconds = time.monotonic() - began
    try:
        report: dict[str, Any] = {
            "argv": client.argv,
            "seconds": round(seconds, 3),
            "agent_info": client.agent_info,
            "capabilities": client.agent_capabilities,
        }
        began = time.monotonic()
        try:
            session = await client.new_session(args.get("cwd") or None)
        except Error as exc:
            report["session_error"] = str(exc)
        else:
            report["session_seconds"] = round(time.monotonic() - began, 3)
            client.forget(session)
        return report
    finally:
        await client.close(grace=2.0)


def main(argv: list[str]) -> int:
    found = versions()
    emit(**found)
    if None in found["packages"].values():
        return 0  # the agent file and the live check need them: the one fix is to install them
    args = json.loads(argv[0]) if argv else {}
    if not isinstance(args, dict):
        args = {}
    if args.get("agent_file"):
        report = agent_file(os.path.abspath(os.path.expanduser(args["agent_file"])))
        emit(agent_file=report)
        # As the host does: mm gives tools only to a client in the file's mode.
        args["discovery"] = report.get("discovery") or "meta"
    if args.get("live"):
        import asyncio

        try:
            report = asyncio.run(live(args))
        except Exception as exc:
            report = {"error": str(exc) or type(exc).__name__}
        emit(live=report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
