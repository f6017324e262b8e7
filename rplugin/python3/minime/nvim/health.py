"""``python -m minime.nvim.health '<json>'``: what ``:checkhealth minime`` needs from Python.

Prints one JSON object a line, flushed as soon as known, so a check that hangs or dies still
leaves the earlier lines: ``{"python": …, "packages": …}``, then (only when every package is
installed: else the one thing to say is to install them) ``{"agent_file": …}`` when the
arguments name one, then ``{"live": …}`` when asked to start the agent. Arguments (one
JSON object, the agent as lua/minime/agents/ resolved it): ``command``, ``env``,
``agent_file``, ``discovery``, ``cwd``, ``live``, ``timeout`` (seconds for ``initialize``),
``editor_tools``: with ``"mcp"``, ``{"bridge": …}`` says whether the editor's MCP server starts
(the bridge spawned as an agent would, ``initialize`` and ``tools/list`` answered, timed).
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
    """One JSON line for Lua, fit for Neovim (wire_text: an agentInfo with a lone surrogate
    made vim.json.decode refuse the line, and the live check said "no answer")."""
    from .wire_text import clean_all  # the standard library only

    print(json.dumps(clean_all(item, limit=sys.maxsize)), flush=True)


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
            "auth_methods": client.auth_methods,
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


async def bridge(cwd: str) -> dict[str, Any]:
    """Start the editor's MCP server as an agent would and time it to ``tools/list``."""
    import asyncio

    from ..mcp_host import McpHost
    from ..tools import Tool

    async def tools_for(_scope: Any) -> list[Tool]:
        return [Tool("health", lambda _request: "ok")]

    host = McpHost(tools_for)
    await host.start()
    try:
        entry = host.entry(host.grant(cwd))
        began = time.monotonic()
        env = dict(os.environ, **{pair["name"]: pair["value"] for pair in entry["env"]})
        proc = await asyncio.create_subprocess_exec(
            entry["command"],
            *entry["args"],
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h"}}
        requests = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        try:
            answers = [json.loads(await asyncio.wait_for(proc.stdout.readline(), 10)) for _ in "12"]
            listed = answers[1]["result"]["tools"]
            return {"seconds": round(time.monotonic() - began, 3), "tools": len(listed)}
        except (TimeoutError, ValueError, KeyError, IndexError):
            why = (await proc.stderr.read()).decode(errors="replace").strip()
            return {"error": why or "no answer to tools/list"}
        finally:
            proc.stdin.close()
            await proc.wait()
    finally:
        await host.close()


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
    if args.get("editor_tools") == "mcp":
        import asyncio

        try:
            report = asyncio.run(bridge(args.get("cwd") or os.getcwd()))
        except Exception as exc:
            report = {"error": str(exc) or type(exc).__name__}
        emit(bridge=report)
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
