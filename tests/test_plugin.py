"""The plugin end to end: a real headless Neovim, the Lua layer, the Python host, the fake mm."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import process_gone
from helpers.shared_nvim import SharedNvim
from nvim_harness import REPO, start, wait_for
from plugin_harness import DEMO_MM, FAKE_MM_BIN, Editor, agent_file, editor_with, init

VENV_PYTHON = str(Path(REPO) / ".venv" / "bin" / "python")


SHARED = SharedNvim()


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[Editor]:
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path, trace=False)}
    with SHARED.editor_with(tmp_path, opts) as ed:
        yield ed


@pytest.fixture
def own_editor(tmp_path: Path) -> Iterator[Editor]:
    """``editor`` in a Neovim of its own: a host whose log holds this test's agent alone."""
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path, trace=False)}
    with editor_with(tmp_path, opts) as ed:
        yield ed


def test_ask_streams_the_answer_into_the_turn_float(editor: Editor) -> None:
    editor.ask("hello there")
    done = editor.wait_done()
    text = editor.turn_text()
    assert "hello there" in text.split("echo:")[0], "the prompt comes first"
    assert "echo: hello there" in text
    assert done["stop_reason"] == "end_turn"
    assert done["cwd"] == editor.cwd and done["session_id"]
    turn = editor.lua("return require('minime.ui.turn').get(...)", editor.cwd)
    assert editor.lua("return vim.b[...].minime", turn["buf"]) == "turn"
    config = editor.lua("return vim.api.nvim_win_get_config(...)", turn["win"])
    assert config["relative"] == "editor"
    assert editor.lua("return vim.api.nvim_get_current_win()") != turn["win"], "focus stays"


def test_a_new_ask_in_the_same_cwd_continues_the_session(editor: Editor, tmp_path: Path) -> None:
    editor.ask("one")
    first = editor.wait_done(1)
    editor.ask("two")
    second = editor.wait_done(2)
    assert first["session_id"] == second["session_id"]
    other = tmp_path / "other"
    other.mkdir()
    editor.nvim.command(f"tcd {other}")
    editor.ask("three")
    third = editor.wait_done(3)
    assert third["cwd"] == os.path.realpath(other)
    assert third["session_id"] != first["session_id"], "two cwds, two sessions"
    assert "echo: three" in editor.turn_text(os.path.realpath(other))
    assert "echo: three" not in editor.turn_text()


def test_permission_float_answers_with_the_chosen_option(editor: Editor) -> None:
    editor.ask("/bash ls -la")
    win = wait_for(lambda: editor.lua("return require('minime.ui.permission').win()"), 20)
    buf = editor.lua("return vim.api.nvim_win_get_buf(...)", win)
    lines = "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf))
    assert "bash: ls -la" in lines
    for n, label in enumerate(["Allow", "Always allow", "Reject", "Never"], 1):
        assert f"{n}. {label}" in lines
    assert editor.lua("return vim.b[...].minime", buf) == "permission"
    editor.press(win, "1")
    editor.wait_done()
    assert "ran: ls -la" in editor.turn_text()


def test_permission_rejected_with_q(editor: Editor) -> None:
    editor.ask("/bash rm -rf build")
    win = wait_for(lambda: editor.lua("return require('minime.ui.permission').win()"), 20)
    editor.press(win, "q")
    editor.wait_done()
    assert "[bash rejected by user]" in editor.turn_text()


def test_cancel_ends_the_turn_as_cancelled(editor: Editor) -> None:
    editor.ask("/slow 400")
    editor.wait_text("slow 2")
    editor.nvim.command("MiniMeCancel")
    done = editor.wait_done()
    assert done["stop_reason"] == "cancelled"
    assert "cancelled" in editor.turn_text()


def test_with_queue_false_a_second_ask_while_a_turn_runs_is_refused(editor: Editor) -> None:
    editor.lua("require('minime.config').options.queue = false")  # refused, not queued
    editor.ask("/slow 400")
    editor.wait_text("slow 1")
    editor.ask("again")
    wait_for(lambda: any("already running" in n for n in editor.notes()), 10)
    editor.nvim.command("MiniMeCancel")
    editor.wait_done()


def test_crash_is_reported_plainly_and_the_next_ask_restarts(editor: Editor) -> None:
    first_pid = editor.agent_pid()
    editor.wait_done(1)
    editor.ask("/crash 3")
    done = editor.wait_done(2)
    assert done["stop_reason"] == "error"
    text = editor.turn_text()
    assert "exit status 3" in text
    assert "Traceback" not in text
    editor.ask("after the crash")
    editor.wait_done(3)
    assert "echo: after the crash" in editor.turn_text()
    assert process_gone(first_pid)


def test_range_sends_the_lines_as_context(editor: Editor, tmp_path: Path) -> None:
    source = tmp_path / "notes.txt"
    source.write_text("alpha line\nbeta line\ngamma line\n")
    editor.nvim.command(f"edit {source}")
    editor.nvim.command("2,3MiniMeAsk explain")
    editor.wait_done()
    text = editor.turn_text()
    assert "echo: From notes.txt, lines 2-3:" in text
    assert "echo: beta line" in text and "echo: gamma line" in text
    assert "alpha line" not in text


def test_a_client_tool_reads_the_editor(editor: Editor, tmp_path: Path) -> None:
    """The tool asks permission first (yolo off): the float's first option allows it."""
    source = tmp_path / "main.py"
    source.write_text("print('saved')\n")
    editor.nvim.command(f"edit {source}")
    editor.nvim.current.buffer[:] = ["print('unsaved edit')"]
    editor.ask('/tool read_buffer {"path": "main.py"}')
    win = wait_for(lambda: editor.lua("return require('minime.ui.permission').win()"), 20)
    buf = editor.lua("return vim.api.nvim_win_get_buf(...)", win)
    assert "client: read_buffer" in "\n".join(editor.nvim.buffers[buf][:])
    editor.press(win, "1")
    editor.wait_done()
    text = editor.turn_text()
    assert "client_read_buffer ->" in text
    assert "unsaved edit" in text


def test_reset_starts_a_new_session(editor: Editor) -> None:
    editor.ask("one")
    first = editor.wait_done(1)
    editor.nvim.command("MiniMeReset")
    editor.ask("two")
    second = editor.wait_done(2)
    assert first["session_id"] != second["session_id"]


def test_log_shows_agent_stderr(own_editor: Editor) -> None:
    editor = own_editor
    editor.ask("/stderr a line for the log")
    editor.wait_done()
    editor.nvim.command("MiniMeLog")
    wait_for(lambda: editor.lua("return vim.b.minime") == "log", 10)
    lines = editor.nvim.current.buffer[:]
    assert "a line for the log" in "\n".join(lines)
    assert any("mm v0.0.0-fake" in line for line in lines), "mm's banner is in the log"


def test_stop_ends_the_agent(editor: Editor) -> None:
    pid = editor.agent_pid()
    editor.nvim.command("MiniMeStop")
    wait_for(lambda: process_gone(pid), 10, message="for the agent to exit")


def test_turn_done_notifies_when_the_float_is_hidden(editor: Editor) -> None:
    editor.ask("/slow 3")
    editor.wait_text("slow 0")
    editor.lua("require('minime.ui.turn').close(...)", editor.cwd)
    editor.wait_done()  # the notification comes just before MiniMeTurnDone
    info = editor.lua("return vim.log.levels.INFO")
    said = [(n["msg"], n["level"]) for n in editor.lua("return _G.notes")]
    # The thread is named (its agent and first ask), and where to see it.
    assert ("minime: mm · /slow 3: turn finished (done) (:MiniMeThreads)", info) in said, said
    editor.nvim.command("MiniMeShow")
    assert editor.lua("return require('minime.ui.turn').get(...).win", editor.cwd)


def test_no_process_is_left_after_quit(tmp_path: Path) -> None:
    config = agent_file(tmp_path, trace=False)
    opts = {"mm": FAKE_MM_BIN, "config": config}
    with start(init(opts)) as nvim:
        nvim.command(f"cd {tmp_path}")
        ed = Editor(nvim, tmp_path)
        pid = ed.agent_pid()
        ed.wait_done()
        ed.ask("/spawn-child")
        child = int(ed.wait_text("child ").split("child ", 1)[1].split()[0])
        ed.wait_done(2)
        host = nvim.exec_lua("return vim.fn.jobpid(require('minime.host').chan)")
        ed.ask("/slow 1000")  # quit during a turn
        ed.wait_text("slow 1")
        with contextlib.suppress(OSError, EOFError):
            nvim.command("qa!")
    for what in (pid, child, host):
        wait_for(lambda what=what: process_gone(what), 10, message=f"for pid {what} to be gone")


def test_missing_mm_is_said_plainly(tmp_path: Path) -> None:
    config = agent_file(tmp_path, trace=False)
    opts = {"mm": str(tmp_path / "no-such-mm"), "config": config}
    with start(init(opts)) as nvim:
        nvim.command(f"cd {tmp_path}")
        nvim.command("MiniMeAsk hello")
        notes = [n["msg"] for n in nvim.exec_lua("return _G.notes")]
        assert any("mm not found" in n and "no-such-mm" in n for n in notes)


def test_the_rplugin_route(tmp_path: Path) -> None:
    """`:UpdateRemotePlugins` in one Neovim, the ask in a second one (design.md's recipe)."""
    config = agent_file(tmp_path, trace=False)
    xdg = tmp_path / "xdg-data"
    xdg.mkdir()
    env = {"XDG_DATA_HOME": str(xdg)}
    prog = f"vim.g.python3_host_prog = [==[{VENV_PYTHON}]==]\n"
    with start(prog, env=env) as nvim:
        nvim.command("UpdateRemotePlugins")
    manifest = xdg / "nvim" / "rplugin.vim"
    assert "MiniMeNotify" in manifest.read_text()
    opts = {"mm": DEMO_MM, "config": config, "host": "rplugin"}
    with start(prog + init(opts), env=env) as nvim:
        nvim.command(f"cd {tmp_path}")
        ed = Editor(nvim, tmp_path)
        ed.ask("through the rplugin host")
        ed.wait_done()
        assert "echo: through the rplugin host" in ed.turn_text()
        ed.lua("require('minime.host').notify(...)", "ask", {"cwd": 42})
        ed.wait_note("a malformed ask request from Lua was ignored")  # decoded on this route too
        assert nvim.exec_lua("return require('minime.host').chan") is None, "no job host"
        commands = nvim.exec_lua("return vim.api.nvim_get_commands({})")
        assert "MiniMeAsk" in commands


def test_probe_answers_during_a_ten_thousand_chunk_stream(editor: Editor) -> None:
    from fake_mm import chunks_text

    bound = editor.probe_bound()
    editor.ask("/chunks 10000")
    latencies = editor.probes_while_running()
    print(f"probes: {len(latencies)}, slowest {max(latencies):.3f} s, bound {bound:.3f} s")
    assert max(latencies) < bound, f"Neovim was frozen for {max(latencies):.1f} s"
    lines = editor.turn_lines()
    assert "".join(chunks_text(10000, 16)) in "".join(lines)


def test_the_demo_command_starts(tmp_path: Path) -> None:
    """README's first command: the bundled default answers with the offline demo agent."""
    env = dict(os.environ, MM_BIN="", PATH="/usr/bin:/bin")
    script = REPO / "scripts" / "demo"
    lua = (
        "vim.cmd('MiniMeAsk hello');"
        "local function finished() local t = require('minime.ui.turn').get(vim.fn.getcwd())"
        " return t and not t.running and t.stop_reason ~= nil end;"
        # The tour asks two permissions: answer each with its first option, as a user would.
        "vim.wait(30000, function() local w = require('minime.ui.permission').win();"
        " if w then vim.api.nvim_set_current_win(w); vim.api.nvim_feedkeys('1', 'x', false) end;"
        " return finished() end, 50);"
        "local t = require('minime.ui.turn').get(vim.fn.getcwd());"
        "io.stdout:write(table.concat(vim.api.nvim_buf_get_lines(t.buf, 0, -1, false), '\\n'));"
        "vim.cmd('qa!')"
    )
    out = subprocess.run(
        [str(script), "--headless", "-c", f"lua {lua}"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Offline demo agent" in out.stdout, out.stdout + out.stderr
    assert "client_open_buffers ->" in out.stdout
    assert "ran: echo hello from the demo" in out.stdout


def test_setup_loads_only_the_options_and_the_code_reads_them_when_it_loads() -> None:
    """Start-up budget (+1 ms): setup() loads the root module and the options, nothing else;
    what loads later reads the options then. A bad user tool is still reported by setup()."""
    opts = {"window": {"width": 33, "focus": True}, "permission": {"focus": False}}
    with start(init(opts)) as nvim:
        loaded = nvim.exec_lua(
            "local l = {} for name in pairs(package.loaded) do"
            " if name:match('^minime') then l[#l + 1] = name end end table.sort(l) return l"
        )
        # Not even the key clock: it starts with the plugin's first use (the next test).
        assert loaded == ["minime", "minime.config"]
        nvim.exec_lua(TURN_BEGIN)
        assert nvim.exec_lua(FLOAT_WIDTH) == 33  # the option, not the default 0.4
        assert nvim.exec_lua(CURRENT_WIN) == nvim.exec_lua(TURN_WIN)  # focus = true
    bad = "{ tools = { { name = 'x' } } }"
    with start(init(bad)) as nvim:
        notes = [n["msg"] for n in nvim.exec_lua("return _G.notes")]
        assert any("user tool" in n and "handler must be a function" in n for n in notes), notes


def test_setup_without_options_loads_nothing_and_the_defaults_apply() -> None:
    """Start-up budget (+1 ms, issue 34): setup() with no options has nothing to merge, so
    not even minime.config loads (~0.15 ms at every start); it loads when first read, with the
    defaults. A setup() with options after that takes them as usual."""
    for opts in ("", "{}"):
        with start(f"require('minime').setup({opts})") as nvim:
            loaded = nvim.exec_lua(
                "local l = {} for name in pairs(package.loaded) do"
                " if name:match('^minime') then l[#l + 1] = name end end table.sort(l) return l"
            )
            assert loaded == ["minime"], (opts, loaded)
            # The options as they stand are the defaults (the harness's float layout aside).
            same = "local c = require('minime.config') return c.options.permission.focus"
            assert nvim.exec_lua(same) == "agent"
            nvim.exec_lua("require('minime').setup({ window = { width = 33 } })")
            assert nvim.exec_lua("return require('minime.config').options.window.width") == 33
            nvim.exec_lua("require('minime').setup({})")  # loaded now: back to the defaults
            assert nvim.exec_lua("return require('minime.config').options.window.width") is None


LOADED = "return package.loaded[...] ~= nil"
LAST_KEY = "return require('minime.ui.last_key').ms()"
OUR_FOCUS_AUTOCMDS = (
    "local ok, a = pcall(vim.api.nvim_get_autocmds, { group = 'minime.os_notify' })"
    " return ok and #a or 0"
)


@pytest.mark.parametrize("warm", [True, False])
def test_the_key_clock_and_the_focus_watch_start_with_the_plugin_s_first_use(
    tmp_path: Path, warm: bool
) -> None:
    """Start-up budget (issue 34): the key clock (a prompt never takes the focus right after a
    key) and the FocusGained/FocusLost watch (notify.os) are not set up at Neovim's start but
    at the plugin's first use. The keys of the first `:MiniMe…` command are timed, with or
    without `warm`; once the host has started, a lost focus is known."""
    opts = {"mm": FAKE_MM_BIN, "config": agent_file(tmp_path), "warm": warm}
    with start(init(opts)) as nvim:
        nvim.command(f"cd {tmp_path}")
        assert nvim.exec_lua(LOADED, "minime.ui.last_key") is False
        assert nvim.exec_lua(OUR_FOCUS_AUTOCMDS) == 0
        nvim.input(":MiniMeAs")
        wait_for(lambda: nvim.exec_lua(LOADED, "minime.ui.last_key"), 10)
        before = nvim.exec_lua(LAST_KEY)
        nvim.input("k")  # typed once the clock runs: timed
        wait_for(lambda: nvim.exec_lua(LAST_KEY) > before, 10, message="for the key's time")
        nvim.input("<Esc>")
        nvim.command("MiniMeAsk hello")  # starts the host
        wait_for(lambda: nvim.exec_lua(OUR_FOCUS_AUTOCMDS) == 2, 10)  # one an event
        nvim.command("doautocmd FocusLost")
        assert nvim.exec_lua("return require('minime.ui.os_notify').focused") is False
        nvim.command("doautocmd FocusGained")
        assert nvim.exec_lua("return require('minime.ui.os_notify').focused") is True


# A turn float opened by one batch; its window and its width and border as drawn.
TURN_BEGIN = (
    "require('minime.ui.turn').apply('/tmp/minime-h', {{kind = 'begin', prompt = 'p',"
    " cwd = '/tmp/minime-h', session_id = 's'}, {kind = 'text', text = 'x'}})"
)
TURN_WIN = "return require('minime.ui.turn').get('/tmp/minime-h').win"
TURN_CFG = f"return vim.api.nvim_win_get_config((function() {TURN_WIN} end)())"
FLOAT_WIDTH = f"return (function() {TURN_CFG} end)().width"
PROMPT = (
    "require('minime.ui.permission').open({id = ..., title = 'bash: ls', options ="
    " {{option_id = 'ok', name = 'Allow', kind = 'allow_once'}}}, function() end)"
)
PROMPT_WIN = "return require('minime.ui.permission').win()"
CURRENT_WIN = "return vim.api.nvim_get_current_win()"
N_MODULES = "local n = 0 for _ in pairs(package.loaded) do n = n + 1 end return n"


def test_a_second_setup_is_what_every_module_uses_next_without_reloading() -> None:
    """Options are read, not copied: after setup() again, the loaded turn float and
    permission prompt use the new values (no module re-required, nothing re-pushed).
    Catches a module that keeps its own copy of an option, taken at load or at setup."""
    first = {"window": {"width": 30, "border": "single"}, "permission": {"focus": False}}
    with start(init(first)) as nvim:
        nvim.exec_lua(TURN_BEGIN)
        assert nvim.exec_lua(FLOAT_WIDTH) == 30
        assert nvim.exec_lua(TURN_CFG)["border"][0] == "┌"
        nvim.exec_lua(PROMPT, "r1")
        assert nvim.exec_lua(PROMPT_WIN) != nvim.exec_lua(CURRENT_WIN)  # focus = false
        nvim.exec_lua("require('minime.ui.permission').close('r1')")
        modules = nvim.exec_lua(N_MODULES)
        nvim.exec_lua(
            "require('minime').setup({ window = { width = 50, border = 'double' },"
            " permission = { focus = 'idle', key_delay = 0, idle = 0 } })"
        )
        assert nvim.exec_lua(N_MODULES) == modules, "setup() loads nothing more"
        # The turn float: VimResized and the next batch place it with the options as they are.
        nvim.exec_lua("vim.api.nvim_exec_autocmds('VimResized', {})")
        assert nvim.exec_lua(FLOAT_WIDTH) == 50
        assert nvim.exec_lua(TURN_CFG)["border"][0] == "╔"
        # The permission prompt: now it takes focus, its keys live at once (key_delay 0).
        nvim.exec_lua("require('minime.ui.turn').close('/tmp/minime-h')")
        nvim.exec_lua(PROMPT, "r2")
        assert nvim.exec_lua(PROMPT_WIN) == nvim.exec_lua(CURRENT_WIN)
        footer = nvim.exec_lua(
            f"return vim.api.nvim_win_get_config((function() {PROMPT_WIN} end)()).footer"
        )
        assert footer[0][1:] != ["Comment"], "not dimmed: no key delay"
        # A third setup back to key_delay 0.5: the next prompt's keys wait (footer dimmed).
        nvim.exec_lua("require('minime.ui.permission').close('r2')")
        nvim.exec_lua("require('minime').setup({ permission = { focus = 'idle', idle = 0 } })")
        nvim.exec_lua(PROMPT, "r3")
        footer = nvim.exec_lua(
            f"return vim.api.nvim_win_get_config((function() {PROMPT_WIN} end)()).footer"
        )
        assert footer[0][1:] == ["Comment"]
        # The turn float, shown again: back to the default width (0.4 of the editor, beside).
        nvim.exec_lua("require('minime.ui.turn').open('/tmp/minime-h')")
        # The default width (the harness pins the float layout: 0.4 of the columns its border
        # leaves).
        usable = nvim.exec_lua("return select(1, require('minime.ui.window').area())")
        assert nvim.exec_lua(FLOAT_WIDTH) == int(usable * 0.4)


def test_a_section_that_is_not_a_table_is_said_and_keeps_its_defaults() -> None:
    """Bad input gets a clear error and loses nothing: `window = 'big'` is reported by
    setup() and the float still opens with the default placement."""
    with start(init("{ window = 'big' }")) as nvim:
        notes = [n["msg"] for n in nvim.exec_lua("return _G.notes")]
        assert any("`window` must be a table" in n for n in notes), notes
        nvim.exec_lua(TURN_BEGIN)
        # The defaults, not the harness's float (it pins no layout in a window that is not a
        # table): the panel at its default width.
        assert nvim.exec_lua(FLOAT_WIDTH) == int(nvim.exec_lua("return vim.o.columns") * 0.4)
        assert nvim.exec_lua("return require('minime.ui.turn').errors") == []
        nvim.exec_lua("require('minime').setup('big')")  # not even a table: said, no traceback
        notes = [n["msg"] for n in nvim.exec_lua("return _G.notes")]
        assert "minime: setup() takes a table of options (got string): the defaults apply" in notes
        assert nvim.exec_lua("return require('minime.config').options.window.layout") == "split"


# require("minime"): the documented verbs (:h minime-api) and fields.
PUBLIC = {
    "setup",
    "ask",
    "cancel",
    "reset",
    "new",
    "stop",
    "log",
    "sessions",
    "load_session",
    "install",
    "show",
    "toggle",
    "statusline",
    "min_version",
}


def test_require_minime_is_exactly_the_public_surface() -> None:
    """No metatable forwarding: an unknown key is nil, and the names are the documented verbs;
    what the host calls is minime.rpc's. Catches a host callback leaking back into the public
    module, or a verb dropped."""
    with start(init({})) as nvim:
        names, no_meta, unknown_nil = nvim.exec_lua(
            "local m = require('minime') local l = {} for k in pairs(m) do l[#l + 1] = k end"
            " return {l, getmetatable(m) == nil, m.agent_payload == nil and m.host_op == nil}"
        )
        assert set(names) == PUBLIC
        assert no_meta and unknown_nil
        rpc = nvim.exec_lua(
            "local l = {} for k, v in pairs(require('minime.rpc')) do"
            " if type(v) == 'function' then l[#l + 1] = k end end return l"
        )
        host_calls = {"apply", "notify", "permission", "permission_close", "tool"}
        assert set(rpc) >= host_calls | {"ask_accepted", "pick_session", "show_log"}
