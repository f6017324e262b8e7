"""What a program passes to ``start`` / ``connect``: one Struct, checked once, before anything
is spawned — a wrong value is a :class:`~minime.Error` naming the option, never a TypeError
from deep inside (``os.fspath(123)``)."""

from __future__ import annotations

import logging
import os
from typing import Any

import msgspec

from . import agent_file
from . import tools as tools_mod
from .arguments import agent_argv, check_connect_arguments, working_directory
from .errors import Error
from .fs import file_system
from .mcp_servers import checked_servers
from .terminals import Terminals

log = logging.getLogger("minime")


class Options(msgspec.Struct, kw_only=True):
    """The options of ``start`` / ``connect`` (notes/library.md). Once checked,
    ``command`` is the whole command line run, ``cwd`` an absolute directory, ``tools`` a
    list of checked tools (or the function giving them), ``fs`` the file handlers or None,
    ``mcp_servers`` in ACP's shape, ``terminal`` a Terminals or None."""

    config: Any = None
    cwd: Any = None
    mm: Any = None
    tools: Any = ()
    discovery: Any = "meta"
    on_permission: Any = None
    on_stderr: Any = None
    command: Any = None
    env: Any = None
    ready_timeout: Any = 60.0
    cancel_timeout: Any = 30.0
    fs: Any = None
    tools_via: Any = "client"
    mcp_servers: Any = ()
    on_elicitation: Any = None
    terminal_auth: Any = False
    terminal: Any = False


NAMES = frozenset(Options.__struct_fields__)


def checked(where: str, given: dict[str, Any]) -> Options:
    """The options ``where`` (``start``, ``connect``) was called with, checked and resolved."""
    unknown = sorted(set(given) - NAMES)
    if unknown:
        raise Error(f"{where}() got unknown options: {', '.join(unknown)}")
    o = Options(**given)
    if not isinstance(o.terminal, bool | Terminals):
        kind = type(o.terminal).__name__
        raise Error(f"terminal must be True, False or a Terminals, got {kind}")
    if o.on_elicitation is not None and not callable(o.on_elicitation):
        kind = type(o.on_elicitation).__name__
        raise Error(f"on_elicitation must be a function, got {kind}")
    if not isinstance(o.terminal_auth, bool):
        raise Error(f"terminal_auth must be True or False, got {o.terminal_auth!r}")
    check_connect_arguments(
        config=o.config,
        cwd=o.cwd,
        mm=o.mm,
        tools=o.tools,
        discovery=o.discovery,
        on_permission=o.on_permission,
        on_stderr=o.on_stderr,
        command=o.command,
        env=o.env,
        ready_timeout=o.ready_timeout,
        cancel_timeout=o.cancel_timeout,
        tools_via=o.tools_via,
    )
    if o.discovery not in ("meta", "request"):
        raise Error(f'discovery must be "meta" or "request", got {o.discovery!r}')
    servers = checked_servers(o.mcp_servers)
    tools = o.tools
    if o.discovery == "meta" and callable(tools) and o.tools_via != "mcp":
        raise Error('tools given as a function need discovery="request" (or tools_via="mcp")')
    if not callable(tools):
        tools = tools_mod.validate(tools)  # refused before anything is spawned
    handlers = file_system(o.fs)
    workdir = working_directory(o.cwd)
    argv = agent_argv(o.config, o.mm, o.command)
    client_tools = o.tools_via != "mcp" and (callable(tools) or tools)
    if not o.command and client_tools:  # mm would say why only on its stderr
        for words in agent_file.mismatches(argv[-1], o.discovery):
            log.warning("%s", words)
    terminal = o.terminal
    if not isinstance(terminal, Terminals):
        terminal = Terminals() if terminal else None
    return msgspec.structs.replace(
        o,
        command=argv,
        cwd=workdir,
        tools=tools,
        fs=handlers,
        mcp_servers=servers,
        terminal=terminal,
        env=dict(os.environ, **o.env) if o.env else None,
    )
