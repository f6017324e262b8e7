"""Interop with codex-acp (npm ``@agentclientprotocol/codex-acp`` 2.6.0, with ``@openai/codex``'s
binary), a real agent nobody here wrote, started by the shipped definition
(lua/minime/agents/codex.lua) and driven by a scripted model on loopback
(tests/agents/responses_model.py, OpenAI's Responses API, named in ``CODEX_HOME/config.toml``).

What codex 2.6 does, seen here: its shell tool is ``exec_command`` (``{"cmd": "…"}``); in the
modes that ask (``read-only``, ``workspace-write``) a command the model asks to run outside the
sandbox (``sandbox_permissions: "require_escalated"``) brings ``session/request_permission``
with codex's own options; its output travels only in ``_meta.terminal_output_delta`` chunks
(no rawOutput), its exit in ``_meta.terminal_exit``. It starts in ``agent`` ("Auto review"),
where a reviewer model (a request asking for a JSON verdict) decides and no permission request
comes. Its commands run in a session of their own; after a cancel, one that ran over a second
keeps running, and its final ``tool_call_update`` comes when it ends. No login, update check or
other network is needed beyond the model. scripts/setup installs it (``npm install`` in
tests/interop); without node or the package the tests are skipped, except in CI.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agents.responses_model import ModelServer, Reply, last_call, serving, user_text
from conftest import process_gone
from helpers.procs import cmdline, environ, live_processes, stat_fields
from nvim_harness import REPO, wait_for
from plugin_harness import Editor, editor_with, group_members, quit_leaves_no_bridge

BIN = REPO / "tests/interop/node_modules/.bin"
CODEX_ACP = BIN / "codex-acp"
NODE = shutil.which("node")

if not (NODE and CODEX_ACP.exists()) and not os.environ.get("CI"):
    pytest.skip(
        "needs node and the npm packages of tests/interop (./scripts/setup)",
        allow_module_level=True,
    )

# Codex's own permission options, as it sends them for a command.
OPTIONS = [
    "1. Yes, proceed — allow once",
    "2. Yes, and don't ask again for commands that start with `touch made.txt` — Codex"
    " (codex-acp) will not ask again for this kind of request — its own rule",
    "3. No, and tell Codex what to do differently — reject once",
]
# Codex says this before each turn when its model is not one it knows (ours is "scripted").
UNKNOWN_MODEL = "Warning: Model metadata for `scripted` not found."


def command(cmd: str) -> Reply:
    """The model runs ``cmd`` outside codex's sandbox, which codex asks the user about."""
    arguments = {
        "cmd": cmd,
        "login": False,  # no login shell: the user's profile stays out of the output
        "sandbox_permissions": "require_escalated",
        "justification": "May I run this?",
    }
    return Reply(text=f"Running {cmd}.", tool="exec_command", arguments=arguments)


def script(items: list[dict[str, Any]]) -> Reply:
    """Each prompt is the command to run; after its output, "All done."."""
    if last_call(items) is None:
        return command(user_text(items))
    return Reply(text="All done.")


CONFIG = """
model = "scripted"
model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted"
base_url = "{base_url}"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false
"""


# Records the title of every permission float opened (Editor.prompts()).
WATCH = """
_G.prompts = {}
local permission = require('minime.ui.permission')
local open = permission.open
permission.open = function(req, on_answer)
  table.insert(_G.prompts, req.title)
  return open(req, on_answer)
end
"""


@contextlib.contextmanager
def codex_editor(
    tmp_path: Path,
    next_step: Callable[[list[dict[str, Any]]], Reply] = script,
    review: dict[str, Any] | None = None,
    watch: bool = False,
    logs: Path | None = None,
    **opts: Any,
) -> Iterator[tuple[Editor, ModelServer]]:
    """Neovim with ``agent = "codex"`` (the shipped definition: its command, its mode), codex-acp
    on PATH and CODEX_HOME a fresh directory whose config.toml names the scripted model;
    ``watch``: permission floats recorded; ``logs``: codex-acp's APP_SERVER_LOGS."""
    cwd = tmp_path / "project"
    home = tmp_path / "codex"
    cwd.mkdir()
    home.mkdir()
    with serving(next_step, review) as model:
        (home / "config.toml").write_text(CONFIG.format(base_url=model.base_url))
        before = (
            f"vim.env.PATH = [==[{BIN}]==] .. ':' .. vim.env.PATH\n"
            f"vim.env.CODEX_HOME = [==[{home}]==]\n"
            "vim.env.SCRIPTED_API_KEY = 'scripted'\n"
            + (f"vim.env.APP_SERVER_LOGS = [==[{logs}]==]\n" if logs else "")
            + (WATCH if watch else "")
        )
        opts.setdefault("agent", "codex")
        with editor_with(cwd, opts, before, timeout=30.0) as ed:
            yield ed, model


def tool_lines(ed: Editor) -> list[str]:
    return [line for line in ed.turn_lines() if line.startswith("⚙ ")]


def test_a_command_asked_allowed_run_and_shown_with_its_output(tmp_path: Path) -> None:
    with codex_editor(tmp_path) as (ed, model):
        ed.ask("touch made.txt && echo made")
        shown = ed.permission_text().splitlines()
        assert shown[0] == "touch made.txt && echo made"
        assert [x for x in shown if x[:2] in ("1.", "2.", "3.")] == OPTIONS
        assert not Path(ed.cwd, "made.txt").exists(), "nothing ran before the answer"
        ed.answer_permission("1")
        done = ed.wait_done(1, timeout=60)
        assert done["stop_reason"] == "end_turn"
        assert Path(ed.cwd, "made.txt").exists(), "the command ran"

        text = ed.turn_text()
        assert tool_lines(ed) == ["⚙ touch made.txt && echo made  [execute] completed"]
        # Its output, from codex's terminal_output_delta chunks (it sends no rawOutput).
        assert "    made\n    (exit code 0)\n" in text
        assert UNKNOWN_MODEL in text
        assert "Running touch made.txt && echo made." in text
        assert text.rstrip().endswith(
            "All done.\n\n■ done (end_turn) · tokens: 24 input, 10 output, 34 total"
        )
        assert ed.turn_errors() == []
        assert not [n for n in ed.notes() if "error" in n.lower()]
        # What codex told its model: the command's output.
        assert "Process exited with code 0" in model.outputs()[0]
        assert model.outputs()[0].endswith("Output:\nmade\n")

        # Output that comes while the command runs travels in chunks of earlier updates (the
        # last one has the exit code alone): gathered. (Codex itself drops output written in
        # the command's first moments from the chunks, hence the sleep before the first.)
        ed.ask("sleep 1; echo one; sleep 0.5; echo two")
        ed.answer_permission("1")
        assert ed.wait_done(2, timeout=60)["stop_reason"] == "end_turn"
        assert "    one\n    two\n    (exit code 0)\n" in ed.turn_text()


def test_a_rejected_command_never_runs(tmp_path: Path) -> None:
    with codex_editor(tmp_path) as (ed, model):
        ed.ask("touch made.txt && echo made")
        assert "touch made.txt" in ed.permission_text()
        ed.answer_permission("3")
        # Codex ends the turn on "No, and tell Codex what to do differently": cancelled.
        assert ed.wait_done(1, timeout=60)["stop_reason"] == "cancelled"
        assert not Path(ed.cwd, "made.txt").exists()
        assert tool_lines(ed) == ["⚙ touch made.txt && echo made  [execute] failed"]
        assert len(model.turns()) == 1, "the model was not asked again: the turn ended"
        assert ed.turn_errors() == []

        # :MiniMeCancel while codex's prompt is open: the prompt goes, the turn ends
        # cancelled, and the command it asked about never runs.
        ed.ask("touch other.txt")
        ed.permission_win()
        ed.nvim.command("MiniMeCancel")
        assert ed.wait_done(2, timeout=30)["stop_reason"] == "cancelled"
        wait_for(lambda: not ed.permission_open(), 10, message="for the prompt to close")
        assert not Path(ed.cwd, "other.txt").exists()
        assert len(model.turns()) == 2 and ed.turn_errors() == []


# -- a command that runs until it is ended ------------------------------------------------------


def running(argv: list[str], home: Path) -> list[int]:
    """The processes running ``argv`` whose environment names this test's CODEX_HOME."""
    wanted = "\0".join(argv).encode() + b"\0"
    tag = f"CODEX_HOME={home}".encode()
    return [pid for pid, _ in live_processes() if cmdline(pid) == wanted and tag in environ(pid)]


def session_of(pid: int) -> int:
    return int(stat_fields(pid)[3])


def start_sleep(ed: Editor, home: Path) -> tuple[int, int]:
    """Ask for ``sleep 1000``, allow it; (the agent's pid, the sleep's pid) once it runs, in a
    session of its own (so killing the agent's process group alone would leave it)."""
    ed.ask("sleep 1000")
    assert ed.permission_text().splitlines()[0] == "sleep 1000"
    ed.answer_permission("1")
    found = wait_for(lambda: running(["sleep", "1000"], home), 30, message="for sleep 1000")
    assert len(found) == 1
    agents = ed.lua("return vim.tbl_keys(require('minime.host').agents)")
    assert len(agents) == 1
    assert session_of(found[0]) == found[0] != session_of(agents[0]), "it left the agent's session"
    ed.wait_line("⚙ sleep 1000  [execute] in_progress")
    return agents[0], found[0]


def test_minime_stop_mid_command_ends_codex_and_the_command(tmp_path: Path) -> None:
    with codex_editor(tmp_path) as (ed, _):
        agent, sleep = start_sleep(ed, tmp_path / "codex")
        ed.nvim.command("MiniMeStop")
        ed.wait_note("minime: agent stopped")
        wait_for(lambda: process_gone(agent) and process_gone(sleep), 10, message="for the end")
        assert group_members(agent) == [] and group_members(sleep) == []
        assert running(["sleep", "1000"], tmp_path / "codex") == []


def test_quitting_mid_command_leaves_nothing_running(tmp_path: Path) -> None:
    with codex_editor(tmp_path) as (ed, _):
        agent, sleep = start_sleep(ed, tmp_path / "codex")
        host = ed.host_pid()
        with contextlib.suppress(OSError, EOFError):
            ed.nvim.command("qa!")
    wait_for(lambda: all(map(process_gone, (host, agent, sleep))), 10, message="for the end")
    assert group_members(agent) == [] and group_members(sleep) == []


def test_cancel_mid_command_and_the_late_update_stays_out_of_the_next_turn(
    tmp_path: Path,
) -> None:
    home = tmp_path / "codex"
    logs = tmp_path / "logs"
    with codex_editor(tmp_path, logs=logs) as (ed, _):
        _, sleep = start_sleep(ed, home)
        # A command cancelled within its first ~second codex kills with the turn; one that
        # has run longer it leaves running (its unified exec keeps it), and sends the call's
        # final tool_call_update when it ends, turns later. This test wants the latter.
        wait_for(lambda: age(sleep) > 1.5, 10, message="for the command to have run 1.5 s")
        ed.nvim.command("MiniMeCancel")
        assert ed.wait_done(1, timeout=30)["stop_reason"] == "cancelled"
        assert not process_gone(sleep), "codex left the command running"

        ed.ask("echo next")
        ed.permission_win()
        os.kill(sleep, signal.SIGTERM)
        wait_for(lambda: process_gone(sleep), 10, message="for the sleep to end")
        # Codex has reported the sleep's end (app-server's item/completed, which codex-acp
        # sends on as a tool_call_update with exit code 143) before the answer below.
        wait_for(lambda: ended_in_log(logs, exit_code=143), 10, message="for the late update")
        ed.answer_permission("1")
        assert ed.wait_done(2, timeout=60)["stop_reason"] == "end_turn"
        assert tool_lines(ed) == ["⚙ echo next  [execute] completed"]
        # Its exit status in any shape (not a bare 143: the cwd shown in the echo's input is
        # pytest's numbered tmp directory, which was once pytest-143).
        late = re.search(r"exit[ _]?code\W*143", ed.turn_text(), re.IGNORECASE)
        assert late is None, "the cancelled command's end is not this turn's"
        assert ed.turn_errors() == []


def age(pid: int) -> float:
    """Seconds since ``pid`` started."""
    with open(f"/proc/{pid}/stat") as f:
        started = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    with open("/proc/uptime") as f:
        return float(f.read().split()[0]) - started


def ended_in_log(logs: Path, exit_code: int) -> bool:
    """Codex-acp's app-server log (APP_SERVER_LOGS) has a command's item/completed with
    ``exit_code``."""
    for path in logs.glob("*.log"):
        for line in path.read_text(errors="replace").splitlines():
            if '"item/completed"' in line and f'"exitCode":{exit_code}' in line:
                return True
    return False


# -- modes -----------------------------------------------------------------------------------


MODES = [
    ("read-only", "Read-only"),
    ("workspace-write", "Workspace access"),
    ("agent", "Auto review"),
    ("agent-full-access", "Full access"),
]


def modes(ed: Editor) -> tuple[str, list[tuple[str, str]]]:
    state = ed.lua("return require('minime.modes').get(...)", ed.cwd)
    return state["mode"], [(m["id"], m["name"]) for m in state["modes"]]


# The reviewer's answer (the json_schema codex asks it for): the command may run.
APPROVE = {"outcome": "allow", "risk_level": "low", "user_authorization": "high", "rationale": "ok"}


def test_the_shipped_read_only_mode_asks_and_auto_review_does_not(tmp_path: Path) -> None:
    with codex_editor(tmp_path, review=APPROVE, watch=True) as (ed, model):
        ed.ask("touch asked.txt")
        assert ed.permission_text().splitlines()[0] == "touch asked.txt"
        ed.answer_permission("1")
        assert ed.wait_done(1, timeout=60)["stop_reason"] == "end_turn"
        assert Path(ed.cwd, "asked.txt").exists()
        # codex.lua's mode applied: "read-only" is what codex calls it, among its four.
        assert modes(ed) == ("read-only", MODES)
        assert "mode: Read-only" in ed.lua("return require('minime.modes').label(...)", ed.cwd)

        ed.nvim.command("MiniMeMode agent")
        wait_for(lambda: modes(ed)[0] == "agent", 10, message="for the mode agent")
        ed.ask("touch unasked.txt")
        assert ed.wait_done(2, timeout=60)["stop_reason"] == "end_turn"
        assert ed.prompts() == ["touch asked.txt"], "auto review asks no one"
        assert Path(ed.cwd, "unasked.txt").exists(), "the command ran"
        # Codex asked its reviewer model instead (ours allows), and shows that as a tool call.
        assert tool_lines(ed) == [
            "⚙ touch unasked.txt  [execute] completed",
            "⚙ Guardian Review  [think] completed",
        ]
        assert "Status: Approved" in ed.turn_text()
        reviews = [json.dumps(body["input"]) for body in model.reviews()]
        assert any("touch unasked.txt" in review for review in reviews)
        assert modes(ed)[0] == "agent" and ed.turn_errors() == []


def test_codex_starts_in_auto_review_without_a_mode(tmp_path: Path) -> None:
    """An inline definition without ``mode``: codex keeps its own start, "agent" (Auto review),
    in which no permission request ever comes; hence codex.lua's ``read-only``."""
    agent = {"cmd": ["codex-acp"]}
    with codex_editor(tmp_path, agent=agent) as (ed, _):
        ed.ask("echo hi")
        ed.wait_done(1, timeout=60)
        assert modes(ed) == ("agent", MODES)


def test_the_library_drives_codex_without_an_editor(tmp_path: Path) -> None:
    """``minime.connect(command=…)``: the mode set, codex's permission answered by
    ``on_permission`` with its own option id, the output gathered into the tool result."""
    import asyncio

    import minime

    cwd = Path(os.path.realpath(tmp_path / "project"))
    home = tmp_path / "codex"
    cwd.mkdir()
    home.mkdir()
    asked: list[minime.PermissionRequest] = []

    def allow(request: minime.PermissionRequest) -> minime.Decision:
        asked.append(request)
        return minime.ALLOW

    async def turn(model: ModelServer) -> list[minime.Event]:
        env = {"CODEX_HOME": str(home), "SCRIPTED_API_KEY": "scripted"}
        client = await minime.connect(
            command=[str(CODEX_ACP)], cwd=cwd, env=env, on_permission=allow
        )
        try:
            session = await client.new_session()
            await session.set_mode("read-only")
            return [event async for event in session.stream("touch lib.txt && echo lib")]
        finally:
            await client.close()

    with serving(script) as model:
        (home / "config.toml").write_text(CONFIG.format(base_url=model.base_url))
        events = asyncio.run(turn(model))
    assert [r.tool_call.title for r in asked] == ["touch lib.txt && echo lib"]
    assert [o.option_id for o in asked[0].options] == [
        "allow_once",
        "accept_execpolicy_amendment",
        "cancel",
    ]
    (result,) = [e for e in events if e.kind == "tool_result"]
    assert (result.status, result.output) == ("completed", "lib\n(exit code 0)")
    assert events[-1].kind == "done" and events[-1].stop_reason == "end_turn"
    assert (cwd / "lib.txt").exists()


def test_codex_reads_the_unsaved_buffer_over_mcp_and_nothing_outside(tmp_path: Path) -> None:
    """codex-acp spawns the editor's MCP server from session/new's mcpServers and offers its
    tools to the model in the namespace ``mcp__minime``; codex asks before the call (its own
    prompt, in the float); the model reads the buffer's unsaved text; outside the cwd: refused."""
    (tmp_path / "outside.txt").write_text("OUTSIDE_SECRET\n")
    reads = {"read the buffer": "notes.txt", "read outside": str(tmp_path / "outside.txt")}

    def step(items: list[dict[str, Any]]) -> Reply:
        if last_call(items) is None:
            path = reads[user_text(items)]
            return Reply(
                text="Reading.",
                tool="read_buffer",
                namespace="mcp__minime",
                arguments={"path": path},
            )
        return Reply(text="All done.")

    with codex_editor(tmp_path, step) as (ed, model):
        Path(ed.cwd, "notes.txt").write_text("on disk\n")
        ed.nvim.command("edit notes.txt")
        ed.nvim.current.buffer[:] = ["unsaved words"]
        ed.nvim.command(f"badd {tmp_path / 'outside.txt'}")
        ed.ask("read the buffer")
        assert ed.permission_text().startswith("mcp.minime.read_buffer"), ed.permission_text()
        ed.answer_permission("1")
        assert ed.wait_done(1, timeout=60)["stop_reason"] == "end_turn"
        namespaces = [t for t in model.turns()[0]["tools"] if t.get("name") == "mcp__minime"]
        offered = {t["name"]: t for t in namespaces[0]["tools"]}
        assert "read_buffer" in offered
        # Named as codex's model calls them in its namespace (I1), not mm's client_ names.
        assert "from open_buffers" in offered["read_buffer"]["description"]
        assert "client_" not in json.dumps(namespaces)
        read = model.outputs()[-1]
        assert '"text":"unsaved words"' in read, read
        # Its result comes only as rawOutput, the MCP CallToolResult wrapped: shown as its
        # text, not as the JSON around it (I2).
        lines = ed.turn_lines()
        header = next(x for x in lines if x.startswith("⚙ mcp.minime.read_buffer"))
        body = lines[lines.index(header) + 1 :]
        assert any(x.startswith('    {"path":"notes.txt"') for x in body), lines
        assert not any("structuredContent" in x for x in lines), lines

        ed.ask("read outside")
        ed.permission_text()
        ed.answer_permission("1")
        assert ed.wait_done(2, timeout=60)["stop_reason"] == "end_turn"
        refused = model.outputs()[-1]
        assert "not a file open" in refused and "OUTSIDE_SECRET" not in refused, refused
        assert "call open_buffers for" in refused, refused
        quit_leaves_no_bridge(ed)


def test_codex_advertises_its_slash_commands_and_status_completes_and_runs(
    tmp_path: Path,
) -> None:
    """codex-acp 2.6 sends ``available_commands_update`` for each session (``/status``,
    ``/review``, ``/compact``, …): they complete on :MiniMeAsk, and ``/status``, sent as the
    prompt's text, is answered by codex itself (its model is not asked)."""
    with codex_editor(tmp_path, lambda items: Reply(text="Hello.")) as (ed, model):
        ed.turn("hi")

        def offered() -> list[str] | None:
            got = ed.lua("return vim.fn.getcompletion('MiniMeAsk /', 'cmdline')")
            return got if "/status" in got else None

        found = wait_for(offered, 20, message="for codex's commands")
        assert {"/status", "/review", "/compact"} <= set(found), found
        assert ed.lua("return vim.fn.getcompletion('MiniMeAsk /sta', 'cmdline')") == ["/status"]
        done, text = ed.turn("/status", timeout=60)
        assert done["stop_reason"] == "end_turn"
        assert "**Model:** scripted" in text and "**Sandbox:** read-only" in text, text
        assert len(model.turns()) == 1, "codex answered /status itself"
        assert ed.turn_errors() == []


# -- apply_patch reviewed ----------------------------------------------------------------------

PATCH = """*** Begin Patch
*** Update File: a.txt
@@
 l2
-l3
+X3
 l4
*** End Patch
"""


def patching(items: list[dict[str, Any]]) -> Reply:
    """The model asks codex to apply PATCH (its apply_patch, through the shell tool as codex's
    models do), then says it is done."""
    if last_call(items) is None:
        cmd = f"apply_patch <<'EOF'\n{PATCH}EOF\n"
        return Reply(text="Patching.", tool="exec_command", arguments={"cmd": cmd})
    return Reply(text="All done.")


def test_codex_apply_patch_is_reviewed_and_rejected(tmp_path: Path) -> None:
    """Codex applies the patch itself, on disk, once allowed ("Edit files", its diff shown);
    outside git the file, not loaded, is recorded when the call names it, so :MiniMeReview
    lists the hunk and :MiniMeReject puts the file back."""
    with codex_editor(tmp_path, next_step=patching, watch=True) as (ed, model):
        a = Path(ed.cwd, "a.txt")
        a.write_text("l1\nl2\nl3\nl4\nl5\n")
        ed.ask("patch a.txt")
        ed.permission_win()
        assert ed.prompts() == ["Edit files"]
        assert a.read_text() == "l1\nl2\nl3\nl4\nl5\n", "nothing written before the answer"
        ed.answer_permission("1")
        assert ed.wait_done(1, timeout=60)["stop_reason"] == "end_turn"
        assert a.read_text() == "l1\nl2\nX3\nl4\nl5\n", "codex applied its patch"
        assert "⚙ Editing files  [edit] completed" in ed.turn_lines()

        items = (
            "return vim.tbl_map(function(i) return { vim.fn.fnamemodify("
            "vim.api.nvim_buf_get_name(i.bufnr), ':t'), i.lnum, i.text } end,"
            " vim.fn.getqflist())"
        )
        ed.nvim.command("MiniMeReview")
        wait_for(lambda: ed.lua(items) == [["a.txt", 3, "+1 -1 X3"]], 20, message="the review")
        assert ed.lua("return vim.fn.getqflist({ title = 1 }).title").startswith("minime review: ")
        ed.nvim.command("MiniMeReject")
        assert a.read_text() == "l1\nl2\nl3\nl4\nl5\n", "rejected: the file as it was"
        ed.nvim.command("MiniMeReview")
        ed.wait_note("nothing to review")
        assert ed.turn_errors() == [] and len(model.turns()) == 2


FOLLOWED = """
local f = require('minime.ui.follow')
local win = f.win and vim.api.nvim_win_is_valid(f.win) and f.win or nil
return win and vim.fn.fnamemodify(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)), ':t')
  or vim.NIL
"""


def test_follow_shows_the_file_codex_asks_to_patch(tmp_path: Path) -> None:
    """I3: codex names the files it edits only in its permission request's toolCall (an update
    of the call); follow shows them there, before the answer."""
    with codex_editor(tmp_path, next_step=patching, follow=True) as (ed, _):
        a = Path(ed.cwd, "a.txt")
        a.write_text("l1\nl2\nl3\nl4\nl5\n")
        Path(ed.cwd, "main.txt").write_text("main\n")
        ed.nvim.command("edit main.txt")
        ed.ask("patch a.txt")
        ed.permission_win()
        assert wait_for(lambda: ed.lua(FOLLOWED) == "a.txt" or None, 10, message="a.txt followed")
        assert ed.lua("return vim.fn.fnamemodify(vim.fn.bufname(), ':t')") == "main.txt"
        ed.answer_permission("1")
        assert ed.wait_done(1, timeout=60)["stop_reason"] == "end_turn"


PICKER = """
_G.picks = {}
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  for i, item in ipairs(items) do labels[i] = opts.format_item(item) end
  table.insert(_G.picks, labels)
  _G.pick = function(i) on_choice(items[i], i) end
end
"""


def test_a_reloaded_session_shows_its_commands_output(tmp_path: Path) -> None:
    """I4: on session/load codex replays a finished command as a call that comes already
    completed, then its output and exit in an update without a status: the reopened
    conversation shows the output, as the live turn did."""
    with codex_editor(tmp_path) as (ed, _):
        ed.ask("echo replayed-one; echo replayed-two")
        ed.answer_permission("1")
        assert ed.wait_done(1, timeout=60)["stop_reason"] == "end_turn"
        header = "⚙ echo replayed-one; echo replayed-two  [execute] completed"
        assert header in tool_lines(ed)
        ed.nvim.command("MiniMeStop")
        ed.wait_note("agent stopped")
        ed.lua(PICKER)
        ed.nvim.command("MiniMeSessions")
        picks = wait_for(lambda: ed.lua("return _G.picks"), 60, message="for the picker")
        assert len(picks[0]) == 1 and "echo replayed-one" in picks[0][0], picks
        ed.lua("_G.pick(1)")  # the session, then what to do with it: reopen
        wait_for(lambda: len(ed.lua("return _G.picks")) == 2, 10, message="for the actions")
        assert ed.lua("return _G.picks")[1][0].startswith("Reopen")
        ed.lua("_G.pick(1)")
        assert ed.wait_done(2, timeout=60)["stop_reason"] == "end_turn"
        lines = ed.conversation_lines()
        start = lines.index(header) + 1
        body = [line[4:] for line in lines[start : start + 4]]
        assert body[0].startswith("input: "), lines
        assert body[1:] == ["replayed-one", "replayed-two", "(exit code 0)"], lines
        assert "this client never created" not in "\n".join(lines)
