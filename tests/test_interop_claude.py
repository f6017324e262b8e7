"""Interop with claude-agent-acp (npm ``@agentclientprotocol/claude-agent-acp`` 0.101.0: Claude
Code through the Claude Agent SDK), a real agent nobody here wrote, run with node and driven by
a scripted model on loopback (tests/agents/anthropic_model.py, reached through
``ANTHROPIC_BASE_URL``).

The editor runs the shipped definition (``agent = "claude"``, lua/minime/agents/claude.lua) with
claude-agent-acp found on PATH — through tests/agents/wiretap.py, so that the tests read what
crossed the wire. Its HOME has no settings: claude starts in ``auto`` (never asks), and only the
definition's ``mode = "default"`` makes it ask. ``IS_SANDBOX`` is emptied (the machine's own
would decide which modes claude offers) except where a test sets it.

What claude-agent-acp 0.101 does here, seen on its wire: it declares ``fs`` in nothing it sends
and its tools read and write the disk themselves (no ``fs/*`` request ever comes); it runs a
Bash command in a session of its own; it asks to approve a plan with an empty toolCall (the plan
came in the call's earlier update); it answers ``session/set_mode`` with a
``config_option_update`` and changes the mode itself with a ``current_mode_update``; its model
gets side requests (a session title, a prompt suggestion) beside each turn.
scripts/setup installs it (``npm install`` in tests/interop); without node or the package the
tests are skipped, except in CI.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents.anthropic_model import ModelServer, Reply, last_tool, serving, user_text
from conftest import process_gone
from helpers.procs import live_processes, stat_fields
from nvim_harness import REPO, wait_for
from plugin_harness import Editor, editor_with, lua_table, quit_leaves_no_bridge

BIN = REPO / "tests/interop/node_modules/.bin"
WIRETAP = REPO / "tests/agents/wiretap.py"
NODE = shutil.which("node")

if not (NODE and (BIN / "claude-agent-acp").exists()) and not os.environ.get("CI"):
    pytest.skip(
        "needs node and the npm packages of tests/interop (./scripts/setup)",
        allow_module_level=True,
    )

# The Bash commands the scripted model asks for, by the prompt's words.
COMMANDS = {
    "write out": "echo hi > out.txt && echo ran",
    "write rejected": "echo no > rejected.txt",
    "sleep": "echo $$ > shell.pid; sleep 1000; echo $$ > finished.txt",
}
CWD = [""]
MCP_READ = "mcp__minime__read_buffer"
# The editor's read_buffer over MCP, by the prompt's words: a buffer of the cwd, one outside.
READS = {
    "read the buffer": lambda: "notes.txt",
    "read outside": lambda: os.path.join(os.path.dirname(CWD[0]), "outside.txt"),
}
PLAN = "1. Write out.txt\n2. Check it"
QUESTION = {
    "question": "Which database should the service use?",
    "header": "Database",
    "options": [
        {"label": "Postgres", "description": "the usual one"},
        {"label": "SQLite", "description": "one file"},
    ],
    "multiSelect": False,
}


def script(messages: list[dict[str, Any]]) -> Reply:
    """A prompt naming a command: run it with Bash; its result: "All done: <output>"."""
    done, prompt = last_tool(messages), user_text(messages)
    if "update notes" in prompt and (done is None or done[0] == "Read"):
        notes = os.path.join(CWD[0], "notes.txt")
        if done is None:
            return Reply(text="Reading it.", tool="Read", input={"file_path": notes})
        return Reply(
            text="Writing it.", tool="Write", input={"file_path": notes, "content": "new\n"}
        )
    for words, path in READS.items():  # the editor's tool, over MCP (mcp__<server>__<tool>)
        if words in prompt and done is None:
            return Reply(text="Reading it.", tool=MCP_READ, input={"path": path()})
    if done is not None:
        return Reply(text="All done: " + done[1].strip())
    if "ask me" in prompt:
        return Reply(
            text="A question first.", tool="AskUserQuestion", input={"questions": [QUESTION]}
        )
    if "make a plan" in prompt:
        return Reply(text="Here is the plan.", tool="ExitPlanMode", input={"plan": PLAN})
    for words, command in COMMANDS.items():
        if words in prompt:
            return Reply(
                text="Running it.", tool="Bash", input={"command": command, "description": words}
            )
    return Reply(text="Hello from the script.")


class Claude:
    """What the tests read besides the editor: the wire (via the tap) and the model's log."""

    def __init__(self, ed: Editor, model: ModelServer, wire: Path) -> None:
        self.ed, self.model, self.wire_path = ed, model, wire

    def wire(self, direction: str, method: str | None = None) -> list[dict[str, Any]]:
        if not self.wire_path.exists():
            return []
        text = self.wire_path.read_text(encoding="utf-8")
        lines = [json.loads(x) for x in text[: text.rfind("\n") + 1].splitlines()]
        return [
            x["msg"]
            for x in lines
            if x["dir"] == direction
            and isinstance(x["msg"], dict)
            and (method is None or x["msg"].get("method") == method)
        ]

    def result_of(self, method: str) -> list[dict[str, Any]]:
        """The agent's answers to the client's ``method`` requests."""
        ids = {m["id"] for m in self.wire("in", method)}
        return [
            m.get("result") for m in self.wire("out") if m.get("id") in ids and "method" not in m
        ]


@contextlib.contextmanager
def claude_editor(
    tmp_path: Path, model_script: Any = None, lua_before: str = "", **opts: Any
) -> Iterator[Claude]:
    """The editor on claude-agent-acp, its model ``model_script`` (default: this module's);
    ``lua_before`` runs before setup."""
    cwd, home, bin_dir = tmp_path / "project", tmp_path / "home", tmp_path / "bin"
    for directory in (cwd, home, bin_dir):
        directory.mkdir()
    wire = tmp_path / "wire.jsonl"
    CWD[0] = os.path.realpath(cwd)
    tap = bin_dir / "claude-agent-acp"  # the name the shipped definition runs
    tap.write_text(
        "#!/bin/sh\n"
        f"exec {shlex.quote(sys.executable)} {shlex.quote(str(WIRETAP))} {shlex.quote(str(wire))}"
        f' {shlex.quote(str(BIN / "claude-agent-acp"))} "$@"\n'
    )
    tap.chmod(0o755)
    with serving(model_script or script) as model:
        env = {
            "PATH": f"{bin_dir}:{os.path.dirname(NODE or 'node')}:{os.environ['PATH']}",
            "ANTHROPIC_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": "scripted",
            "HOME": str(home),
            "IS_SANDBOX": opts.pop("is_sandbox", ""),
        }
        before = "\n".join(f"vim.env[ {lua_table(k)} ] = {lua_table(v)}" for k, v in env.items())
        before += "\n" + lua_before
        with editor_with(cwd, {"agent": "claude", **opts}, before, timeout=60.0) as ed:
            yield Claude(ed, model, wire)


def title(ed: Editor) -> str:
    turn = ed.lua("return require('minime.ui.turn').get(...)", ed.cwd)
    return "".join(part[0] for part in ed.float_config(turn["win"])["title"])


def wait_title(ed: Editor, needle: str) -> str:
    return wait_for(lambda: needle in title(ed) and title(ed), 20, message=f"for {needle!r}")


def option_key(ed: Editor, label: str) -> str:
    """The key of the permission float's option named ``label`` (claude's own words)."""
    for line in ed.permission_text().splitlines():
        key, _, rest = line.partition(". ")
        if rest.startswith(label + " — "):
            return key
    raise AssertionError(f"no option {label!r} in {ed.permission_text()!r}")


def answers(claude: Claude) -> list[Any]:
    """The client's answers to claude's session/request_permission, in order."""
    ids = {m["id"] for m in claude.wire("out", "session/request_permission")}
    return [
        m["result"]["outcome"]
        for m in claude.wire("in")
        if "method" not in m and m.get("id") in ids and "result" in m
    ]


def test_claude_asks_in_the_shipped_mode_then_runs_the_command_it_was_allowed(
    tmp_path: Path,
) -> None:
    with claude_editor(tmp_path) as claude:
        ed = claude.ed
        ed.ask("write out")
        shown = ed.permission_text().splitlines()
        # claude-agent-acp started in "auto" (never asks); the definition's "default" was set
        # before the prompt went, and that is why it asks.
        (new,) = claude.result_of("session/new")
        assert new["modes"]["currentModeId"] == "auto"
        assert [m["id"] for m in new["modes"]["availableModes"]] == [
            "default",
            "acceptEdits",
            "plan",
            "auto",
        ]
        sent = [m["method"] for m in claude.wire("in") if "method" in m]
        assert sent[:4] == ["initialize", "session/new", "session/set_mode", "session/prompt"]
        assert claude.wire("in", "session/set_mode")[0]["params"]["modeId"] == "default"
        # The statusline says so while the turn runs (after its spinner and, once claude asks,
        # the waiting prompt), with the context window claude's usage_update reports (its cost
        # once it sends one).
        assert re.search(
            r"minime( · permission asked \(:MiniMePermission\))? · mode: Manual"
            r"( · \d+(k|M)?/\d+(k|M)?( · \$\d+\.\d\d)?)?$",
            ed.lua("return require('minime.status').statusline()"),
        )

        # Its own words and options; the text it streamed before asking is already shown.
        assert shown[0] == "echo hi > out.txt && echo ran"
        assert [x for x in shown if x[:2] in ("1.", "2.", "3.")] == [
            "1. Yes — allow once",
            "2. Yes, and allow access to project/ and echo hi * commands"
            " — Claude Code (claude-agent-acp) will not ask again for this kind of request"
            " — its own rule",
            "3. No — reject once",
        ]
        assert "Running it." in ed.turn_text()
        assert not Path(ed.cwd, "out.txt").exists(), "nothing ran before the answer"
        ed.answer_permission("1")
        done = ed.wait_done(1)
        assert done["stop_reason"] == "end_turn"
        assert answers(claude) == [{"outcome": "selected", "optionId": "allow-once"}]
        assert Path(ed.cwd, "out.txt").read_text() == "hi\n", "the command ran"
        assert claude.model.tool_results() == ["ran"], "its output went to the model"
        lines = ed.turn_lines()
        header = lines.index("⚙ echo hi > out.txt && echo ran  [execute] completed")
        assert lines[header + 2] == "    ran", "the command's output under its line"
        assert (
            ed.turn_text()
            .rstrip()
            .endswith("All done: ran\n\n■ done (end_turn) · tokens: 24 input, 10 output, 34 total")
        )
        assert ed.turn_errors() == []
        # The prompt, shown without taking the focus from the code window, said so once.
        assert [n.split(":")[1] for n in ed.notes()] == [" permission asked"]
        assert "mode: Manual" in title(ed)

        # Rejected: nothing ran, the model was told, the turn goes on to its end.
        ed.ask("write rejected")
        assert ed.permission_text().startswith("echo no > rejected.txt")
        ed.answer_permission("3")
        assert ed.wait_done(2)["stop_reason"] == "end_turn"
        assert answers(claude)[1] == {"outcome": "selected", "optionId": "reject"}
        assert not Path(ed.cwd, "rejected.txt").exists()
        assert "⚙ echo no > rejected.txt  [execute] failed" in ed.turn_lines()
        assert claude.model.tool_results()[-1] == "User refused permission to run tool"

        # :MiniMeCancel while its prompt is open: the prompt goes, the turn ends cancelled,
        # and the command never runs.
        ed.ask("write rejected")
        ed.permission_win()
        ed.nvim.command("MiniMeCancel")
        assert ed.wait_done(3)["stop_reason"] == "cancelled"
        wait_for(lambda: not ed.permission_open(), 10, message="for the prompt to close")
        assert claude.wire("in", "session/cancel"), "session/cancel crossed the wire"
        assert answers(claude)[2] == {"outcome": "cancelled"}
        assert not Path(ed.cwd, "rejected.txt").exists()
        assert (
            ed.turn_text().rstrip().endswith("■ cancelled · tokens: 12 input, 5 output, 17 total")
        )
        assert ed.turn_errors() == []


def test_claude_runs_bash_itself_though_the_client_terminal_is_offered(tmp_path: Path) -> None:
    """claude-agent-acp 0.101 never calls terminal/create (its dist/ has no call site; only its
    bundled SDK's schema names the method): offered ``terminal: true``, its Bash still runs the
    command itself, and the output reaches the model and the conversation as before. The day
    it does use the client terminal, this test says so."""
    with claude_editor(tmp_path) as claude:
        ed = claude.ed
        ed.ask("write out")
        ed.permission_win()
        ed.answer_permission("1")
        assert ed.wait_done(1)["stop_reason"] == "end_turn"
        (init,) = claude.wire("in", "initialize")
        assert init["params"]["clientCapabilities"]["terminal"] is True
        asked = [m["method"] for m in claude.wire("out") if "id" in m and "method" in m]
        assert not [m for m in asked if m.startswith("terminal/")], asked
        assert claude.model.tool_results() == ["ran"], "its output went to the model"
        lines = ed.turn_lines()
        header = lines.index("⚙ echo hi > out.txt && echo ran  [execute] completed")
        assert lines[header + 2] == "    ran", "the command's output under its line"


def test_claudes_question_reaches_the_user_and_the_choice_its_model(tmp_path: Path) -> None:
    """claude-agent-acp offers AskUserQuestion only to a client that advertises
    elicitation.form: the question is a float, one key answers it, the model reads the choice."""
    with claude_editor(tmp_path) as claude:
        ed = claude.ed
        ed.ask("ask me")
        win = wait_for(
            lambda: ed.lua("return require('minime.ui.elicitation').win()"), 60, message="float"
        )
        wait_for(lambda: ed.lua("return require('minime.ui.elicitation').live()"), 10)
        lines = ed.float_lines(win)
        ed.press(win, "2")
        done = ed.wait_done(1)
        offered = claude.wire("in", "initialize")[0]["params"]["clientCapabilities"]
        (asked,) = claude.wire("out", "elicitation/create")
        results = claude.model.tool_results()
    assert offered["elicitation"] == {"form": {}}
    assert asked["params"]["mode"] == "form"
    assert lines[0] == "Which database should the service use?"
    assert "  1  Postgres — the usual one" in lines and "  2  SQLite — one file" in lines
    assert done["stop_reason"] == "end_turn"
    assert len(results) == 1 and "SQLite" in results[0] and "Postgres" not in results[0], results


def test_claude_mode_switches_and_the_one_it_changes_itself(tmp_path: Path) -> None:
    """:MiniMeMode plan crosses the wire; claude's plan approval switches the mode itself (a
    ``current_mode_update``), and the float's title follows both."""
    with claude_editor(tmp_path) as claude:
        ed = claude.ed
        ed.turn("hello")
        assert ed.lua("return vim.fn.getcompletion('MiniMeMode ', 'cmdline')") == [
            "default",
            "acceptEdits",
            "plan",
            "auto",
        ], "claude's modes, in its order"
        ed.nvim.command("MiniMeMode plan")
        wait_title(ed, "mode: Plan")
        wait_for(lambda: len(claude.wire("in", "session/set_mode")) == 2, 10, message="set_mode")
        assert claude.wire("in", "session/set_mode")[1]["params"]["modeId"] == "plan"

        ed.ask("make a plan")
        # claude asks with nothing but a title; the plan comes in the call's update, sent just
        # before the request or just after it.
        shown = wait_for(
            lambda: (
                "plan: " in ed.permission_text().splitlines() and ed.permission_text().splitlines()
            ),
            10,
            message="for the plan in the prompt",
        )
        (asked,) = claude.wire("out", "session/request_permission")
        assert asked["params"]["toolCall"]["content"] == []
        assert shown[0] == "Approve Plan"
        assert shown[shown.index("plan: ") + 1 :][:2] == ["  1. Write out.txt", "  2. Check it"]
        assert [x for x in shown if " — " in x] == [
            "1. Yes, manually approve edits — allow once",
            "2. Yes, and use auto mode — Claude Code (claude-agent-acp) will not ask again for"
            " this kind of request — its own rule",
            "3. No, keep planning — reject once",
        ]
        ed.answer_permission(option_key(ed, "Yes, manually approve edits"))
        assert ed.wait_done(2)["stop_reason"] == "end_turn"
        updates = [m["params"]["update"] for m in claude.wire("out", "session/update")]
        assert {"sessionUpdate": "current_mode_update", "currentModeId": "default"} in updates
        wait_title(ed, "mode: Manual")
        assert (
            ed.turn_text()
            .rstrip()
            .endswith(
                "All done: User has approved exiting plan mode. You can now proceed.\n\n"
                "■ done (end_turn) · tokens: 24 input, 10 output, 34 total"
            )
        )
        # claude's usage_update: tokens in context of its window, and the cost so far.
        assert re.fullmatch(
            r"minime · mode: Manual · \d+(k|M)?/\d+(k|M)? · \$\d+\.\d\d",
            ed.lua("return require('minime.status').statusline()"),
        )
        assert ed.turn_errors() == []


def test_claude_starts_as_root_with_is_sandbox_yes(tmp_path: Path) -> None:
    """claude-agent-acp takes any IS_SANDBOX for a sandbox, its CLI only "1": as root, with
    IS_SANDBOX=yes, session/new failed ("--dangerously-skip-permissions cannot be used with
    root/sudo privileges"). The shipped definition passes it as "1"."""
    with claude_editor(tmp_path, is_sandbox="yes") as claude:
        ed = claude.ed
        ed.ask("write out")
        ed.answer_permission("1")
        assert ed.wait_done(1)["stop_reason"] == "end_turn"
        assert Path(ed.cwd, "out.txt").exists()
        (agent,) = ed.lua("return vim.tbl_keys(require('minime.host').agents)")
        environ = Path(f"/proc/{agent}/environ").read_bytes().split(b"\0")
        assert b"IS_SANDBOX=1" in environ


def test_the_library_drives_claude_and_keeps_its_messages_apart(tmp_path: Path) -> None:
    """``minime.connect`` without an editor: the mode set, the permission asked with what the
    call is, and the answer's two messages (before and after the tool) a paragraph apart."""
    import asyncio

    import minime

    cwd = Path(os.path.realpath(tmp_path / "project"))
    cwd.mkdir()
    asked: list[minime.PermissionRequest] = []

    def allow(request: minime.PermissionRequest) -> Any:
        asked.append(request)
        return minime.ALLOW

    async def turn(model: ModelServer) -> minime.Result:
        env = {
            "ANTHROPIC_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": "scripted",
            "HOME": str(tmp_path),
            "IS_SANDBOX": "",
        }
        client = await minime.connect(
            command=[str(BIN / "claude-agent-acp")], cwd=cwd, env=env, on_permission=allow
        )
        try:
            session = await client.new_session()
            assert session.modes is not None and session.modes.current == "auto"
            await session.set_mode("default")
            return await session.complete("write out")
        finally:
            await client.close()

    with serving(script) as model:
        result = asyncio.run(turn(model))
    assert result.stop_reason == "end_turn"
    assert result.text == "Running it.\n\nAll done: ran"
    (request,) = asked
    assert request.tool_call.input["command"] == "echo hi > out.txt && echo ran"
    assert (cwd / "out.txt").read_text() == "hi\n"


# -- the process tree ---------------------------------------------------------------------------


def stat(pid: int) -> dict[str, int]:
    fields = stat_fields(pid)
    return {"ppid": int(fields[1]), "pgid": int(fields[2]), "sid": int(fields[3])}


def tree(root: int) -> list[int]:
    """``root`` and every live process below it."""
    children: dict[int, list[int]] = {}
    for pid, fields in live_processes():
        children.setdefault(int(fields[1]), []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def run_sleep(claude: Claude, count: int) -> tuple[int, list[int]]:
    """Ask for ``sleep 1000`` and allow it; (the shell running it, the agent's whole tree),
    once the shell runs — in a session of its own, not the agent's (so killing the agent's
    process group would leave it)."""
    ed = claude.ed
    pidfile = Path(ed.cwd, "shell.pid")
    pidfile.unlink(missing_ok=True)
    ed.ask("sleep")
    ed.answer_permission("1")
    shell = int(wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), 30))
    wait_for(lambda: len(tree(shell)) >= 2, 10, message="for sleep to start")
    (agent,) = (
        p
        for p in ed.lua("return vim.tbl_keys(require('minime.host').agents)")
        if not process_gone(p)
    )
    members = tree(agent)
    assert shell in members, "the command is the agent's descendant"
    assert stat(shell)["sid"] == shell != stat(agent)["sid"], "in a session of its own"
    assert len(ed.done()) == count - 1, "the turn still runs"
    return shell, members


def test_stop_cancel_and_quit_end_what_claude_runs(tmp_path: Path) -> None:
    with claude_editor(tmp_path) as claude:
        ed = claude.ed
        # :MiniMeCancel while the command runs: the turn ends cancelled and claude ends it.
        shell, _ = run_sleep(claude, 1)
        ed.nvim.command("MiniMeCancel")
        assert ed.wait_done(1)["stop_reason"] == "cancelled"
        wait_for(lambda: process_gone(shell), 10, message="for the command to end")
        # How claude ends its own command on a cancel is claude's: it sometimes kills sleep
        # before the shell, which then runs its last line (2 runs in 11 wrote finished.txt).
        # What is ours: the turn ended cancelled and the shell is gone.
        finished = Path(ed.cwd, "finished.txt")  # written if the shell outlived its sleep
        finished.unlink(missing_ok=True)
        assert "[execute] failed" in ed.wait_line("⚙ echo $$ > shell.pid")

        # :MiniMeStop: the agent and everything it started are gone; the editor goes on.
        shell, members = run_sleep(claude, 2)
        ed.nvim.command("MiniMeStop")
        wait_for(lambda: all(process_gone(p) for p in members), 10, message=f"{members} gone")
        assert not process_gone(ed.host_pid())
        assert not finished.exists()

        # A new ask starts claude again; quitting Neovim mid-command leaves nothing behind.
        shell, members = run_sleep(claude, 3)
        host = ed.host_pid()
        with contextlib.suppress(OSError, EOFError):
            ed.nvim.command("qa!")
    wait_for(lambda: all(process_gone(p) for p in [host, *members]), 10, message=f"{members} gone")
    assert not finished.exists()


def test_claude_writes_the_disk_and_its_prompt_shows_what_it_replaces(tmp_path: Path) -> None:
    """claude-agent-acp is offered fs/read_text_file and fs/write_text_file but its tools use
    the disk; its Write asks with a diff without oldText (a "new file") over an existing one."""
    with claude_editor(tmp_path) as claude:
        ed = claude.ed
        Path(ed.cwd, "notes.txt").write_text("old\n")
        ed.nvim.command("edit notes.txt")
        ed.ask("update notes")
        shown = ed.permission_text().splitlines()
        (asked,) = claude.wire("out", "session/request_permission")
        (item,) = asked["params"]["toolCall"]["content"]
        assert item["type"] == "diff" and item["oldText"] is None
        assert shown[0] == "Write notes.txt"
        start = shown.index("--- a/notes.txt")
        assert shown[start : start + 6] == [
            "--- a/notes.txt",
            "+++ b/notes.txt",
            "(the agent sent no old text: compared with the file as it is now)",
            "@@ -1 +1 @@",
            "-old",
            "+new",
        ]
        assert "--- /dev/null" not in shown
        ed.answer_permission("1")
        assert ed.wait_done(1)["stop_reason"] == "end_turn"
        assert Path(ed.cwd, "notes.txt").read_text() == "new\n"
        # Written on disk behind the editor's back; the buffer follows the disk.
        buffer = ed.nvim.current.buffer
        wait_for(lambda: buffer[:] == ["new"], 10, message="for the buffer to follow the disk")
        offered = claude.wire("in", "initialize")[0]["params"]["clientCapabilities"]["fs"]
        assert offered == {"readTextFile": True, "writeTextFile": True}
        asked_fs = [m for m in claude.wire("out") if str(m.get("method", "")).startswith("fs/")]
        assert asked_fs == [], "no fs/* request: its Read and Write use the disk"
        lines = ed.turn_lines()
        assert "⚙ Write notes.txt  [edit] completed" in lines
        assert ed.turn_errors() == []


def test_claude_reads_the_unsaved_buffer_over_mcp_and_nothing_outside(tmp_path: Path) -> None:
    """claude-agent-acp spawns the editor's MCP server from session/new's mcpServers; its model
    calls ``mcp__minime__read_buffer``; claude asks first (its own prompt, in the float); the
    buffer's unsaved text reaches the model, a file outside the cwd does not."""
    (tmp_path / "outside.txt").write_text("OUTSIDE_SECRET\n")
    with claude_editor(tmp_path) as claude:
        ed = claude.ed
        Path(ed.cwd, "notes.txt").write_text("on disk\n")
        ed.nvim.command("edit notes.txt")
        ed.nvim.current.buffer[:] = ["unsaved words"]
        ed.nvim.command(f"badd {tmp_path / 'outside.txt'}")
        ed.ask("read the buffer")
        shown = ed.permission_text()  # claude asks before it calls an MCP tool
        assert "read_buffer" in shown, shown
        (new,) = claude.wire("in", "session/new")
        (entry,) = new["params"]["mcpServers"]
        assert entry["name"] == "minime" and entry["command"] == sys.executable
        capabilities = claude.wire("in", "initialize")[0]["params"]["clientCapabilities"]
        assert "org.mini-me/tools" not in json.dumps(capabilities), "no client tools beside MCP"
        # claude defers MCP tools (its ToolSearch): named to the model, described on demand.
        assert MCP_READ in json.dumps(claude.model.turns()[0]), "claude offers the editor's tools"
        ed.answer_permission("1")
        assert ed.wait_done(1)["stop_reason"] == "end_turn"
        read = json.loads(claude.model.tool_results()[-1])
        assert read["text"] == "unsaved words", "the model read the buffer, not the disk"

        ed.ask("read outside")
        ed.permission_text()
        ed.answer_permission("1")
        assert ed.wait_done(2)["stop_reason"] == "end_turn"
        refused = claude.model.tool_results()[-1]
        assert "not a file open" in refused and "OUTSIDE_SECRET" not in refused, refused
        # The error names the tool as claude's model can call it (I1), not mm's client_ name.
        assert "call mcp__minime__open_buffers for" in refused, refused
        quit_leaves_no_bridge(ed)


def test_claudes_disk_write_is_reviewed_and_rejected(tmp_path: Path) -> None:
    """claude-agent-acp's Write goes to the disk itself; the file, not loaded, is recorded when
    its tool call names it (before the permission lets it write); :MiniMeReview shows the hunk
    and :MiniMeReject puts the old text back on disk."""
    with claude_editor(tmp_path) as claude:
        ed = claude.ed
        notes = Path(ed.cwd, "notes.txt")
        notes.write_text("old\n")
        ed.ask("update notes")
        ed.permission_win()
        recorded = (
            "local cwd, path = ... return require('minime.review.baseline').last(cwd).texts[path]"
        )
        assert ed.lua(recorded, ed.cwd, str(notes)) == ["old"]
        ed.answer_permission("1")
        assert ed.wait_done(1)["stop_reason"] == "end_turn"
        assert notes.read_text() == "new\n"
        ed.nvim.command("MiniMeReview")
        items = "return vim.tbl_map(function(i) return { i.lnum, i.text } end, vim.fn.getqflist())"
        wait_for(lambda: ed.lua(items) == [[1, "+1 -1 new"]], 20, message="for the review")
        assert ed.lua("return vim.fn.getqflist({ title = 1 }).title") == (
            "minime review: Claude Code (claude-agent-acp), turn 1"
        )
        ed.nvim.command("MiniMeReject")
        assert notes.read_text() == "old\n"
        assert ed.nvim.current.buffer[:] == ["old"]


def test_follow_shows_the_file_claude_reads_and_writes(tmp_path: Path) -> None:
    """claude-agent-acp's Read and Write name their file in ACP ``locations`` (Read with a
    1-based line): with ``follow``, it shows in the follow window below the user's, unfocused,
    while the Write still waits for its permission."""
    opts = {"follow": True, "permission": {"idle": 0}}
    with claude_editor(tmp_path, **opts) as claude:
        ed = claude.ed
        Path(ed.cwd, "notes.txt").write_text("old\n")
        Path(ed.cwd, "main.txt").write_text("mine\n")
        ed.nvim.command("edit main.txt")
        mine = ed.lua("return vim.api.nvim_get_current_win()")
        ed.ask("update notes")
        ed.permission_win()
        shown = (
            "local f = require('minime.ui.follow') local w = f.win"
            " if not (w and vim.api.nvim_win_is_valid(w)) then return nil end"
            " local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w))"
            " return { vim.fn.fnamemodify(name, ':t'), vim.api.nvim_win_get_cursor(w)[1],"
            " vim.api.nvim_win_get_config(w).relative }"
        )
        wait_for(lambda: ed.lua(shown) == ["notes.txt", 1, ""], 20, message="for notes.txt")
        assert ed.lua("return require('minime.ui.follow').win") != mine
        assert ed.lua("return vim.api.nvim_get_current_win()") == mine, "never focused"
        ed.answer_permission("1")
        assert ed.wait_done(1)["stop_reason"] == "end_turn"
        assert ed.lua(shown)[0] == "notes.txt"
