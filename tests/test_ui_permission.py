"""Permission prompts (lua/minime/ui/permission.lua) in a real headless Neovim."""

from __future__ import annotations

import nvim_harness
import pytest
from helpers.permission_ui import INIT, answers, ask, pending, request, shown
from nvim_harness import wait_for


@pytest.fixture
def nvim():
    with nvim_harness.start(INIT) as n:
        yield n


def test_shows_the_request_and_the_options_as_sent_numbered(nvim):
    main = nvim.exec_lua("return vim.api.nvim_get_current_win()")
    options = [
        {"option_id": "proceed_once", "name": "Yes, once", "kind": "allow_once"},
        {"option_id": "x-custom", "name": "Weird label ✓", "kind": "other"},
    ]
    ask(nvim, request(options=options))
    lines = shown(nvim)
    assert lines[0] == "bash: rm -rf build"
    assert "kind: execute" in lines
    assert "command: rm -rf build" in lines
    # Each option: the agent's label, then what its kind does in words; then what `a` does.
    assert lines[-3:] == [
        "1. Yes, once — allow once",
        "2. Weird label ✓",
        "a. allow, and allow the same request (same input) until :MiniMeReset",
    ]
    win = nvim.exec_lua("return require('minime.ui.permission').win()")
    info = nvim.exec_lua(
        """
        local win = ...
        local buf = vim.api.nvim_win_get_buf(win)
        return { vim.api.nvim_get_current_win() == win, vim.b[buf].minime,
                 vim.api.nvim_win_get_config(win).relative, vim.bo[buf].modifiable }
        """,
        win,
    )
    assert info == [True, "permission", "editor", False]  # it takes focus
    assert main != win


def test_number_key_answers_that_option_and_gives_focus_back(nvim):
    main = nvim.exec_lua("return vim.api.nvim_get_current_win()")
    ask(nvim, request())
    nvim.input("2")
    wait_for(lambda: answers(nvim), message="an answer")
    assert answers(nvim) == [["r1", "allow_always"]]
    assert shown(nvim) is None
    assert nvim.exec_lua("return vim.api.nvim_get_current_win()") == main
    assert pending(nvim) == []


@pytest.mark.parametrize("key", ["q", "<Esc>"])
def test_q_and_esc_answer_nil(nvim, key):
    ask(nvim, request())
    nvim.input(key)
    wait_for(lambda: answers(nvim), message="an answer")
    assert answers(nvim) == [["r1", "nil"]]
    assert shown(nvim) is None


def test_enter_answers_the_option_under_the_cursor(nvim):
    ask(nvim, request())
    lines = shown(nvim)
    row = lines.index("3. Reject — reject once") + 1
    nvim.exec_lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", row)
    nvim.input("<CR>")
    wait_for(lambda: answers(nvim), message="an answer")
    assert answers(nvim) == [["r1", "reject"]]


def test_enter_elsewhere_does_nothing(nvim):
    ask(nvim, request())
    nvim.exec_lua("vim.api.nvim_win_set_cursor(0, {1, 0})")
    nvim.input("<CR>")
    nvim.input("1")
    wait_for(lambda: answers(nvim), message="an answer")
    assert answers(nvim) == [["r1", "allow"]]


def test_enter_where_the_float_opens_answers_nothing(nvim):
    """A habit's <CR> (the conversation's "reply" key) lands on no option: the cursor starts on
    the line above them."""
    ask(nvim, request())
    typed = (
        "vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(..., true, false, true), 'mx', false)"
    )
    nvim.exec_lua(typed, "<CR>")  # typed and run before this returns
    assert answers(nvim) == [] and pending(nvim) == ["r1"]
    nvim.exec_lua(typed, "j<CR>")  # onto the first option: now <CR> answers it
    assert answers(nvim) == [["r1", "allow"]]


def test_prompts_queue_and_show_one_at_a_time(nvim):
    ask(nvim, request("r1", title="first"))
    ask(nvim, request("r2", title="second"))
    assert shown(nvim)[0] == "first"
    assert pending(nvim) == ["r1", "r2"]
    wins = nvim.exec_lua(
        "return #vim.tbl_filter(function(w) return vim.b[vim.api.nvim_win_get_buf(w)].minime "
        "== 'permission' end, vim.api.nvim_list_wins())"
    )
    assert wins == 1
    title = nvim.exec_lua(
        "return vim.api.nvim_win_get_config(require('minime.ui.permission').win()).title"
    )
    assert "+1 waiting" in title[0][0]
    nvim.input("1")
    wait_for(lambda: shown(nvim) and shown(nvim)[0] == "second", message="second prompt")
    assert answers(nvim) == [["r1", "allow"]]
    nvim.input("4")
    wait_for(lambda: len(answers(nvim)) == 2, message="second answer")
    assert answers(nvim) == [["r1", "allow"], ["r2", "never"]]
    assert shown(nvim) is None


def test_close_removes_a_queued_prompt_without_answering(nvim):
    ask(nvim, request("r1", title="first"))
    ask(nvim, request("r2", title="second"))
    ask(nvim, request("r3", title="third"))
    assert nvim.exec_lua("return require('minime.ui.permission').close('r2')") is True
    assert pending(nvim) == ["r1", "r3"]
    nvim.input("1")
    wait_for(lambda: shown(nvim) and shown(nvim)[0] == "third", message="third prompt")
    assert answers(nvim) == [["r1", "allow"]]
    assert nvim.exec_lua("return require('minime.ui.permission').close('nope')") is False


def test_close_of_the_shown_prompt_closes_it_and_shows_the_next(nvim):
    ask(nvim, request("r1", title="first"))
    ask(nvim, request("r2", title="second"))
    assert nvim.exec_lua("return require('minime.ui.permission').close('r1')") is True
    assert shown(nvim)[0] == "second"
    assert answers(nvim) == []
    nvim.exec_lua("require('minime.ui.permission').close('r2')")
    assert shown(nvim) is None
    assert answers(nvim) == []
    assert pending(nvim) == []


def test_diff_content_is_shown_as_a_unified_diff(nvim):
    content = [
        {
            "type": "diff",
            "path": "src/app.py",
            "oldText": "a = 1\nb = 2\nc = 3\n",
            "newText": "a = 1\nb = 20\nc = 3\n",
        },
        {"type": "diff", "path": "new.txt", "oldText": None, "newText": "hello"},
        {"type": "text", "text": "Why: tidy up"},
        {"type": "terminal", "terminalId": "t1"},
    ]
    ask(
        nvim,
        request(
            title="Edit src/app.py",
            tool_kind="edit",
            input={"path": "src/app.py", "new_string": "x\ny"},
            content=content,
        ),
    )
    lines = shown(nvim)
    diff = lines[lines.index("--- a/src/app.py") :]
    assert diff[:7] == [
        "--- a/src/app.py",
        "+++ b/src/app.py",
        "@@ -1,3 +1,3 @@",
        " a = 1",
        "-b = 2",
        "+b = 20",
        " c = 3",
    ]
    assert "--- /dev/null" in lines
    assert "+hello" in lines
    assert "Why: tidy up" in lines
    assert "[terminal]" in lines
    assert "new_string: (2 lines)" in lines  # the diff already shows it
    ft = nvim.exec_lua("return vim.bo[vim.api.nvim_win_get_buf(0)].filetype")
    assert ft == "diff"
    # The cursor sits on the line just above the options, so they are in view (and <CR> there
    # answers nothing).
    cursor = nvim.exec_lua("return vim.api.nvim_win_get_cursor(0)[1]")
    assert lines[cursor - 1] == "" and lines[cursor].startswith("1. Allow — allow once")


def test_closing_the_float_another_way_answers_nil_once(nvim):
    ask(nvim, request("r1"))
    ask(nvim, request("r2", title="second"))
    nvim.command("close")
    wait_for(lambda: answers(nvim), message="an answer")
    wait_for(lambda: shown(nvim) and shown(nvim)[0] == "second", message="second prompt")
    assert answers(nvim) == [["r1", "nil"]]


def test_focus_can_be_configured_off(nvim):
    main = nvim.exec_lua("return vim.api.nvim_get_current_win()")
    nvim.exec_lua("require('minime').setup({ permission = { key_delay = 0, focus = false } })")
    ask(nvim, request())
    assert nvim.exec_lua("return vim.api.nvim_get_current_win()") == main
    assert nvim.exec_lua("return require('minime.ui.permission').focus()") is True
    nvim.input("3")
    wait_for(lambda: answers(nvim), message="an answer")
    assert answers(nvim) == [["r1", "reject"]]


def test_an_erroring_callback_does_not_block_the_queue(nvim):
    nvim.exec_lua(
        """
        vim.notify = function() end
        require('minime.ui.permission').open(..., function() error('boom') end)
        """,
        request("bad"),
    )
    ask(nvim, request("r2", title="second"))
    nvim.input("1")
    wait_for(lambda: shown(nvim) and shown(nvim)[0] == "second", message="second prompt")
    errors = nvim.exec_lua("return require('minime.ui.permission').errors")
    assert len(errors) == 1
    assert "boom" in errors[0]


def test_no_options_can_still_be_dismissed(nvim):
    ask(nvim, request(options=[], input=None, tool_kind=None, title=None))
    lines = shown(nvim)
    assert lines[0] == "Permission"
    nvim.input("q")
    wait_for(lambda: answers(nvim), message="an answer")
    assert answers(nvim) == [["r1", "nil"]]


def test_a_prompt_during_the_command_line_does_not_take_focus(nvim):
    main = nvim.exec_lua("return vim.api.nvim_get_current_win()")
    nvim.input(":")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "c", message="command-line mode")
    ask(nvim, request())
    assert shown(nvim)[0] == "bash: rm -rf build"
    nvim.input("<Esc>")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "n", message="normal mode")
    assert nvim.exec_lua("return vim.api.nvim_get_current_win()") == main
    assert answers(nvim) == []
    nvim.exec_lua("require('minime.ui.permission').focus()")
    nvim.input("2")
    wait_for(lambda: answers(nvim), message="an answer")
    assert answers(nvim) == [["r1", "allow_always"]]


def test_a_diff_path_reads_relative_to_the_cwd(nvim):
    """Agents send absolute paths: `a//tmp/proj/src/x.py` was the header."""
    content = [
        {"type": "diff", "path": "/tmp/proj/src/x.py", "oldText": "1\n", "newText": "2\n"},
        {"type": "diff", "path": "/etc/hosts", "oldText": "1\n", "newText": "2\n"},
    ]
    ask(nvim, request(content=content))
    lines = shown(nvim)
    assert lines[lines.index("--- a/src/x.py") + 1] == "+++ b/src/x.py"
    assert lines[lines.index("--- /etc/hosts") + 1] == "+++ /etc/hosts"  # outside: as it is


def test_a_diff_without_old_text_over_an_existing_file_compares_with_it(nvim, tmp_path):
    """claude-agent-acp's Write asks with oldText null over an existing file: shown as a new
    file, the prompt hid what the write replaces. A file under the cwd is compared with the
    editor's text of it (a loaded buffer's unsaved lines, else the disk); a file outside the
    cwd, or one that does not exist, stays a new file (nothing outside is read)."""
    project, outside = tmp_path / "project", tmp_path / "outside.txt"
    project.mkdir()
    (project / "disk.txt").write_text("on disk\n")
    (project / "open.txt").write_text("saved\n")
    outside.write_text("secret\n")
    nvim.command(f"edit {project / 'open.txt'}")
    nvim.current.buffer[:] = ["unsaved"]
    content = [
        {"type": "diff", "path": str(project / "disk.txt"), "oldText": None, "newText": "new\n"},
        {"type": "diff", "path": str(project / "open.txt"), "newText": "new\n"},
        {"type": "diff", "path": str(outside), "oldText": None, "newText": "new\n"},
        {"type": "diff", "path": str(project / "fresh.txt"), "oldText": None, "newText": "x\n"},
    ]
    ask(nvim, request(cwd=str(project), content=content))
    lines = shown(nvim)
    note = "(the agent sent no old text: compared with the file as it is now)"
    for name, before in (("disk.txt", "-on disk"), ("open.txt", "-unsaved")):
        at = lines.index(f"--- a/{name}")
        assert lines[at : at + 6] == [
            f"--- a/{name}",
            f"+++ b/{name}",
            note,
            "@@ -1 +1 @@",
            before,
            "+new",
        ]
    assert lines[lines.index("--- /dev/null") + 1] == f"+++ {outside}"
    assert "-secret" not in lines
    assert lines.count("--- /dev/null") == 2 and "+++ b/fresh.txt" in lines


def test_a_later_update_of_the_call_fills_a_prompt_that_asked_with_nothing(nvim):
    """claude-agent-acp asks to approve a plan with an empty toolCall and may send the plan
    (the call's rawInput) just after: the prompt showed only "Approve Plan" for good."""
    plan = {"plan": "1. Write out.txt\n2. Check it"}
    asked = request(call_id="toolu_1", title="Approve Plan", tool_kind="switch_mode", input={})
    ask(nvim, asked)
    ask(nvim, request("r2", call_id="toolu_2", input={}))  # waiting: filled too, when shown
    before = shown(nvim)
    assert "plan: " not in before
    update = "require('minime.ui.permission').call_update(...)"
    nvim.exec_lua(update, "/tmp/proj", "toolu_other", plan)  # another call: nothing
    nvim.exec_lua(update, "/elsewhere", "toolu_1", plan)  # another cwd: nothing
    assert shown(nvim) == before
    nvim.exec_lua(update, "/tmp/proj", "toolu_1", plan)
    lines = shown(nvim)
    assert lines[lines.index("plan: ") + 1 :][:2] == ["  1. Write out.txt", "  2. Check it"]
    nvim.exec_lua(update, "/tmp/proj", "toolu_1", {"plan": "changed"})
    assert "  changed" not in shown(nvim), "what it asked about stays as asked"
    # The options moved down; their keys still answer them.
    cursor = nvim.exec_lua("return vim.api.nvim_win_get_cursor(0)[1]")
    assert lines[cursor - 1] == "1. Allow — allow once"
    nvim.input("<CR>")
    wait_for(lambda: answers(nvim) == [["r1", "allow"]])
    nvim.exec_lua(update, "/tmp/proj", "toolu_2", {"command": "make"})
    assert "command: make" in wait_for(lambda: shown(nvim))


ODD_REQUESTS = {
    "newline in a rawInput key": (
        {"input": {"pa\nth": "v"}},
        "pa⏎th: v",
    ),
    "newline in a diff path": (
        {"content": [{"type": "diff", "path": "a\nb", "oldText": "1\n", "newText": "2\n"}]},
        "+++ b/a⏎b",
    ),
    "CR in a value": ({"input": {"command": "ls\rrm -rf ~"}}, "command: ls\rrm -rf ~"),
    "escape sequence": ({"input": {"c": "\x1b[2Jx"}}, "c: \x1b[2Jx"),
    "newline in a key of a nested value": ({"input": {"k": {"a\nb": 1}}}, 'k: {"a\\nb":1}'),
    "newline in an option name": (
        {"options": [{"option_id": "x", "name": "Al\nlow", "kind": "allow_once"}]},
        "1. Al low — allow once",
    ),
    "very long value": (
        {"input": {"command": "x" * 30000}},
        "command: " + "x" * 19991 + " … [10009 more bytes]",
    ),
    "very many lines": (
        {"input": {"command": "\n".join(["l"] * 6000)}},
        "… [1003 more lines not shown: reject if unsure]",
    ),
}


@pytest.mark.parametrize("case", list(ODD_REQUESTS))
def test_any_request_text_is_shown(nvim, case):
    """The user sees every request (a newline in a key or a path made the float error, and the
    request was rejected unseen)."""
    extra, expected = ODD_REQUESTS[case]
    ask(nvim, request(**extra))
    assert expected in shown(nvim)
    assert pending(nvim) == ["r1"] and answers(nvim) == []
    assert nvim.exec_lua("return require('minime.ui.permission').errors") == []


def test_another_agents_always_options_say_it_is_its_own_rule(nvim):
    """ACP says only that an "always" option is remembered: the words name the agent and claim
    no more (an agent whose definition has no permission_reach)."""
    ask(nvim, request(agent="claude", agent_label="Claude Code (claude-agent-acp)"))
    assert shown(nvim)[-5:-1] == [
        "1. Allow — allow once",
        "2. Allow always — Claude Code (claude-agent-acp) will not ask again for this kind of"
        " request — its own rule",
        "3. Reject — reject once",
        "4. Never — Claude Code (claude-agent-acp) will reject this kind of request without"
        " asking — its own rule",
    ]


def test_an_input_that_came_after_the_request_takes_a_away(nvim):
    """`a` remembers the request as it was asked: when what the float shows came later (the
    call's update), it could not be exact, so it is not offered."""
    ask(nvim, request(input=None, call_id="c1"))
    assert shown(nvim)[-1].startswith("a. allow, and allow the same request")
    nvim.exec_lua(
        "require('minime.ui.permission').call_update(...)", "/tmp/proj", "c1", {"plan": "x"}
    )
    lines = shown(nvim)
    assert "plan: x" in lines and not any(x.startswith("a. ") for x in lines)
    typed = "vim.api.nvim_feedkeys('a', 'mx', false)"
    nvim.exec_lua(typed)
    assert answers(nvim) == []
