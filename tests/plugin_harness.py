"""What the end-to-end plugin tests share: a headless Neovim with the plugin set up (``init``,
``editor``, ``editor_with``), mm's agent file for the fake mm (``agent_file``) and ``Editor``,
what the user sees of that Neovim. Used by test_plugin.py, test_plugin_tools.py, test_faults.py,
test_everyday.py, test_load.py, test_interop.py and bench/load.py."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from conftest import process_gone
from helpers.procs import cmdline, live_processes
from nvim_harness import REPO, start, wait_for

# The fake mm (tests/fake_mm.py: the demo's scripted mm plus faults) as an executable named mm.
FAKE_MM_BIN = str(REPO / "tests" / "fake" / "mm")
DEMO_MM = str(REPO / "demo" / "mm")  # the offline demo agent itself, without the faults
# The least Editor.probe_bound allows: a loaded 2-core machine answers in well under it, a
# frozen main loop (a blocking wait, a synchronous render of a whole stream) does not.
PROBE_FLOOR_S = 2.0

ALLOW_CLIENT_TOOLS = [{"pattern": "client: *", "decision": "allow"}]

# Notifications go to _G.notes, MiniMeTurnDone data to _G.done; the first %s is Lua run before
# setup(), the second setup()'s options.
INIT = """
_G.notes, _G.done = {}, {}
vim.notify = function(msg, level) table.insert(_G.notes, {msg = msg, level = level}) end
vim.api.nvim_create_autocmd('User', { pattern = 'MiniMeTurnDone', callback = function(ev)
  table.insert(_G.done, ev.data)
end })
%s
require('minime').setup(%s)
"""


def lua_table(value: Any) -> str:
    """``value`` as a Lua expression (dict keys in brackets, so any key works)."""
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"[ {lua_table(k)} ] = {lua_table(v)}" for k, v in value.items()) + "}"
        )
    if isinstance(value, list | tuple):
        return "{" + ", ".join(lua_table(v) for v in value) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return "[==[" + str(value) + "]==]"


def init(opts: Any, before: str = "") -> str:
    """The init Lua: ``before``, then setup() with ``opts`` (a dict, or Lua text as it is)."""
    return INIT % (before, opts if isinstance(opts, str) else lua_table(opts))


def agent_file(
    directory: Path,
    *,
    fake: dict[str, Any] | None = None,
    name: str = "agent.yaml",
    trace: bool = True,
    **extra: Any,
) -> str:
    """mm's agent file for the fake mm (request discovery, yolo off), in ``directory/name``;
    with ``trace``, the fake traces every message to ``directory/trace.jsonl``."""
    data: dict[str, Any] = {"yolo": False, "acp": {"clientTools": {"discovery": "request"}}}
    data.update(extra)
    if trace or fake is not None:
        traced = {"trace": str(directory / "trace.jsonl")} if trace else {}
        data["fake"] = {**traced, **(fake or {})}
    path = directory / name
    path.write_text(yaml.safe_dump(data))
    return str(path)


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group ``pgid``."""
    return [pid for pid, fields in live_processes() if int(fields[2]) == pgid]


def tool_answer(text: str, name: str) -> str:
    """The last answer the model read from editor tool ``name`` in a turn's text (the fake mm's
    ``client_<name> -> …`` line)."""
    return text.rsplit(f"client_{name} -> ", 1)[1].split("\n■", 1)[0].strip()


def running_with(argument: str) -> list[int]:
    """Pids of live (non-zombie) processes whose command line contains ``argument``."""
    found = []
    for pid, _ in live_processes():
        if argument in cmdline(pid).decode(errors="replace"):
            found.append(pid)
    return found


def quit_with_one_agent(ed: Editor) -> int:
    """``:qa!`` in an editor that runs exactly one agent; that agent's pid (its group's id)."""
    pids = ed.lua("return vim.tbl_keys(require('minime.host').agents)")
    assert len(pids) == 1
    with contextlib.suppress(OSError, EOFError):
        ed.nvim.command("qa!")
    return int(pids[0])


# The editor's MCP server as agents run it (lua/minime/agents/: editor_tools = "mcp").
MCP_BRIDGE = str(REPO / "rplugin/python3/minime/mcp.py")


def quit_leaves_no_bridge(ed: Editor) -> None:
    """``:qa!`` in an editor whose session runs the editor's MCP server: every bridge ends."""
    bridges = running_with(MCP_BRIDGE)
    assert bridges, "the bridge runs while the session does"
    with contextlib.suppress(OSError, EOFError):
        ed.nvim.command("qa!")
    for pid in bridges:
        wait_for(lambda pid=pid: process_gone(pid), 10, message="for the bridge to end")


def wait_tree_gone(pid: int, what: str) -> None:
    """The agent ``pid`` and every process of its group end (within 10 s)."""
    wait_for(lambda: process_gone(pid), 10, message=f"for {what} to be ended")
    assert group_members(pid) == []


class Editor:
    """One Neovim with the plugin set up; what the user sees of it.

    ``timeout`` is the default wait (``done_timeout``, if given, the one for MiniMeTurnDone);
    ``ask_command``: ``ask`` uses :MiniMeAsk for one line, else always require('minime').ask.
    """

    def __init__(
        self,
        nvim: Any,
        cwd: Path,
        *,
        timeout: float = 20.0,
        done_timeout: float | None = None,
        ask_command: bool = True,
    ) -> None:
        self.nvim = nvim
        self.cwd = os.path.realpath(cwd)
        self.timeout = timeout
        self.done_timeout = timeout if done_timeout is None else done_timeout
        self.ask_command = ask_command

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def ask(self, text: str) -> None:
        """:MiniMeAsk for one line; the same function for a multi-line prompt (a script)."""
        if self.ask_command and "\n" not in text:
            self.nvim.command("MiniMeAsk " + text)
        else:
            self.lua("require('minime').ask(...)", text)

    def turn_lines(self, cwd: str | None = None) -> list[str]:
        """The last turn of the conversation float: from its prompt to the end."""
        return self.lua(
            "local t = require('minime.ui.turn').get(...)"
            " return t and vim.api.nvim_buf_get_lines(t.buf, t.last_start, -1, false) or {}",
            cwd or self.cwd,
        )

    def turn_text(self, cwd: str | None = None) -> str:
        return "\n".join(self.turn_lines(cwd))

    def conversation_lines(self, cwd: str | None = None) -> list[str]:
        """The whole conversation float: every turn of the session, in order."""
        return self.lua(
            "local t = require('minime.ui.turn').get(...)"
            " return t and vim.api.nvim_buf_get_lines(t.buf, 0, -1, false) or {}",
            cwd or self.cwd,
        )

    def conversation_text(self, cwd: str | None = None) -> str:
        return "\n".join(self.conversation_lines(cwd))

    def done(self) -> list[dict[str, Any]]:
        return self.lua("return _G.done")

    def wait_done(self, count: int = 1, timeout: float | None = None) -> dict[str, Any]:
        timeout = self.done_timeout if timeout is None else timeout
        wait_for(lambda: len(self.done()) >= count, timeout, message="for MiniMeTurnDone")
        return self.done()[count - 1]

    def turn(self, text: str, timeout: float | None = None) -> tuple[dict[str, Any], str]:
        """Ask and wait for the end of that turn: (MiniMeTurnDone data, the float's text)."""
        count = len(self.done()) + 1
        self.ask(text)
        done = self.wait_done(count, timeout)
        return done, self.turn_text()

    def notes(self) -> list[str]:
        return [n["msg"] for n in self.lua("return _G.notes")]

    def wait_note(self, needle: str, timeout: float | None = None) -> str:
        return wait_for(
            lambda: next((n for n in self.notes() if needle in n), None),
            self.timeout if timeout is None else timeout,
            message=f"for a notification with {needle!r}",
        )

    def wait_text(self, needle: str, timeout: float | None = None, cwd: str | None = None) -> str:
        return wait_for(
            lambda: needle in self.turn_text(cwd) and self.turn_text(cwd),
            self.timeout if timeout is None else timeout,
            message=f"for {needle!r} in the turn float",
        )

    def wait_line(self, prefix: str, timeout: float | None = None, cwd: str | None = None) -> str:
        """The first line of the float starting with ``prefix`` (the prompt's lines start "> ")."""

        def found() -> str | None:
            return next((x for x in self.turn_lines(cwd) if x.startswith(prefix)), None)

        return wait_for(
            found, self.timeout if timeout is None else timeout, message=f"for a line {prefix!r}…"
        )

    def prompts(self) -> list[str]:
        """The titles of the permission floats shown (needs ``WATCH_PROMPTS`` before setup)."""
        return self.lua("return _G.prompts")

    def permission_win(self, other_than: int | None = None, timeout: float | None = None) -> int:
        """The permission float, once one (other than ``other_than``) is open."""

        def shown() -> int | None:
            win = self.lua("return require('minime.ui.permission').win()")
            return win if win != other_than else None

        return wait_for(
            shown, self.timeout if timeout is None else timeout, message="for the permission float"
        )

    def permission_text(self) -> str:
        return "\n".join(self.float_lines(self.permission_win()))

    def answer_permission(self, key: str) -> None:
        self.press(self.permission_win(), key)

    def permission_open(self) -> bool:
        return bool(self.lua("return require('minime.ui.permission').win() ~= nil"))

    def float_lines(self, win: int) -> list[str]:
        return self.lua(
            "return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(...), 0, -1, false)", win
        )

    def float_config(self, win: int) -> dict[str, Any]:
        return self.lua("return vim.api.nvim_win_get_config(...)", win)

    def press(self, win: int, keys: str) -> None:
        """Keys in ``win``; in a permission float, once its keys work (after ``key_delay``)."""
        if win == self.lua("return require('minime.ui.permission').win()"):
            wait_for(
                lambda: self.lua("return require('minime.ui.permission').live()"),
                self.timeout,
                message="for the permission float's keys to work",
            )
        self.lua("vim.api.nvim_set_current_win(...)", win)
        self.nvim.input(keys)

    def host_pid(self) -> int:
        return self.lua("return vim.fn.jobpid(require('minime.host').chan)")

    def agent_pid(self) -> int:
        """The agent's pid (also its process group: it runs in its own)."""
        self.turn("/pid")
        _, pid, _, pgid = self.wait_line("pid ").split()
        assert pid == pgid, "the agent leads its own process group"
        return int(pid)

    def tool(self, name: str, args: dict[str, Any], timeout: float = 30) -> str:
        """What the model reads from editor tool ``name`` called with ``args`` (through the
        fake mm's ``/tool``: its ``client_<name> -> …`` line)."""
        _, text = self.turn(f"/tool {name} {json.dumps(args)}", timeout=timeout)
        return tool_answer(text, name)

    def tool_json(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        answer = self.tool(name, args)
        assert answer.startswith("{"), answer
        return json.loads(answer)

    def turn_errors(self) -> list[str]:
        return self.lua("return require('minime.ui.turn').errors")

    def probe(self) -> float:
        """Seconds Neovim takes to answer one request (``1+1``): how long its main loop is busy."""
        start = time.monotonic()
        assert self.nvim.eval("1+1") == 2
        return time.monotonic() - start

    def probe_bound(self) -> float:
        """How long a probe may take while the plugin works: 50 times the median of 20 probes
        of the idle editor, measured now (a loaded machine raises it), and at least
        PROBE_FLOOR_S. A main loop frozen for seconds exceeds it; a busy one does not."""
        idle = sorted(self.probe() for _ in range(20))
        return max(PROBE_FLOOR_S, 50 * idle[len(idle) // 2])

    def probes_while_running(self, min_probes: int = 5) -> list[float]:
        """Probe Neovim until the next MiniMeTurnDone; each probe's seconds. Asserts that at
        least ``min_probes`` were answered before the turn ended (the probes met a working
        plugin, not one that was already done)."""
        done_before = len(self.done())
        deadline = time.monotonic() + self.done_timeout
        latencies: list[float] = []
        answered_while_running = 0
        while True:
            latencies.append(self.probe())
            if len(self.done()) > done_before:
                break
            assert time.monotonic() < deadline, "no MiniMeTurnDone in time"
            answered_while_running += 1
            time.sleep(0.001)
        assert answered_while_running >= min_probes, (
            f"only {answered_while_running} probes were answered while the turn ran"
        )
        return latencies


@contextlib.contextmanager
def editor_with(cwd: Path, opts: Any, before: str = "", **kw: Any) -> Iterator[Editor]:
    """A Neovim set up with ``opts`` (``before`` runs first), in ``cwd``; ``kw`` go to Editor."""
    with start(init(opts, before)) as nvim:
        nvim.command(f"cd {cwd}")
        yield Editor(nvim, cwd, **kw)


@contextlib.contextmanager
def editor(tmp_path: Path, **opts: Any) -> Iterator[Editor]:
    """A Neovim whose plugin is set up with ``opts`` (default: the fake mm, ``agent_file``),
    waiting up to 30 s by default."""
    opts.setdefault("mm", FAKE_MM_BIN)
    if "agent" not in opts and "config" not in opts:
        opts["config"] = agent_file(tmp_path)
    with editor_with(tmp_path, opts, timeout=30.0) as ed:
        yield ed
