"""The turn float (lua/minime/ui/turn/) and the statusline piece, in a real headless Neovim."""

from __future__ import annotations

import random

import nvim_harness
import pytest
from nvim_harness import wait_for

KEY = "/tmp/minime-proj"

# Test hooks: record MiniMeTurnDone events and notifications in Lua globals.
INIT = """
_G.minime_test = { done = {}, notes = {}, cancelled = {} }
vim.api.nvim_create_autocmd('User', {
  pattern = 'MiniMeTurnDone',
  callback = function(ev) table.insert(_G.minime_test.done, ev.data) end,
})
vim.notify = function(msg, level) table.insert(_G.minime_test.notes, { msg, level }) end
"""


@pytest.fixture
def nvim():
    with nvim_harness.start(INIT) as n:
        yield n
        errors = n.exec_lua("return require('minime.ui.turn').errors")
        assert errors == [], errors


def apply(nvim, *events, key=KEY):
    nvim.exec_lua("require('minime.ui.turn').apply(...)", key, list(events))


def begin(prompt="fix the bug", key=KEY, session_id="s1"):
    return {"kind": "begin", "prompt": prompt, "cwd": key, "session_id": session_id}


def text(s):
    return {"kind": "text", "text": s}


def get(nvim, key=KEY):
    return nvim.exec_lua("return require('minime.ui.turn').get(...)", key)


def lines(nvim, key=KEY):
    return nvim.exec_lua(
        "return vim.api.nvim_buf_get_lines(..., 0, -1, false)", get(nvim, key)["buf"]
    )


def answer(nvim, key=KEY):
    """The buffer lines after the prompt block and its blank line."""
    ls = lines(nvim, key)
    return ls[ls.index("") + 1 :]


def folds(nvim, win):
    """Per line (1-based index - 1): (foldlevel, foldclosed, foldclosedend) in `win`."""
    return [
        tuple(x)
        for x in nvim.exec_lua(
            """
            return vim.api.nvim_win_call(..., function()
              local r = {}
              for l = 1, vim.fn.line('$') do
                r[l] = { vim.fn.foldlevel(l), vim.fn.foldclosed(l), vim.fn.foldclosedend(l) }
              end
              return r
            end)
            """,
            win,
        )
    ]


def hl_rows(nvim, buf, group):
    """Rows (0-based) covered by extmarks with highlight `group`."""
    return nvim.exec_lua(
        """
        local buf, group = ...
        local rows = {}
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })) do
          local d = m[4]
          if d.hl_group == group then
            for r = m[2], d.end_row or m[2] do rows[#rows + 1] = r end
          end
        end
        return rows
        """,
        buf,
        group,
    )


def current_win(nvim):
    return nvim.exec_lua("return vim.api.nvim_get_current_win()")


def test_begin_opens_an_unfocused_markdown_float_with_the_prompt(nvim):
    main = current_win(nvim)
    apply(nvim, begin("fix\nthe bug"))
    st = get(nvim)
    assert st["running"] is True
    assert st["session_id"] == "s1"
    assert lines(nvim) == ["> fix", "> the bug"]
    cfg = nvim.exec_lua("return vim.api.nvim_win_get_config(...)", st["win"])
    assert cfg["relative"] == "editor"
    assert current_win(nvim) == main  # not focused
    info = nvim.exec_lua(
        """
        local buf = ...
        return { vim.b[buf].minime, vim.bo[buf].filetype, vim.bo[buf].syntax }
        """,
        st["buf"],
    )
    assert info == ["turn", "markdown", ""]  # no highlighting while it streams: see below


def test_no_whole_buffer_highlighter_while_streaming_nor_when_done(nvim):
    """Regex markdown syntax cost 11-50 ms a redraw, a tree-sitter highlighter re-parsed on each
    batch: markdown is highlighted block by block instead (tests/test_markdown.py)."""
    ts_active = "return vim.treesitter.highlighter.active[...] ~= nil"
    syntax = "return { vim.bo[...].syntax, vim.b[...].current_syntax or vim.NIL }"
    apply(nvim, begin(), text("# Title\n\nsome `code`"))
    buf = get(nvim)["buf"]
    assert nvim.exec_lua(ts_active, buf) is False
    assert nvim.exec_lua(syntax, buf) == ["", None]
    apply(nvim, {"kind": "done", "stop_reason": "end_turn"})
    assert nvim.exec_lua(ts_active, buf) is False
    assert nvim.exec_lua(syntax, buf) == ["", None]
    apply(nvim, begin("again"))
    # One buffer per conversation (issue 10: it was one per turn), and no whole-buffer
    # highlighter at all: markdown is highlighted block by block (minime.ui.turn.markdown).
    assert get(nvim)["buf"] == buf
    assert nvim.exec_lua(ts_active, buf) is False
    assert nvim.exec_lua(syntax, buf) == ["", None], "no regex syntax"
    assert nvim.exec_lua("return vim.bo[...].filetype", buf) == "markdown"
    assert nvim.exec_lua("return vim.b[...].minime", buf) == "turn"


def test_text_chunks_split_lines_anywhere(nvim):
    apply(nvim, begin(), text("Hel"), text("lo\nwor"))
    apply(nvim, text("ld\n\n- a"))
    apply(nvim, text("\n- b"), text(""), text("\n"))
    assert answer(nvim) == ["Hello", "world", "", "- a", "- b", ""]


def test_thinking_is_dimmed_and_folded(nvim):
    apply(
        nvim,
        begin(),
        {"kind": "thinking", "text": "let me\nthink "},
        {"kind": "thinking", "text": "about it\n"},
        text("The answer."),
    )
    st = get(nvim)
    ls = lines(nvim)
    assert ls[2:] == ["let me", "think about it", "", "The answer."]
    assert set(hl_rows(nvim, st["buf"], "MiniMeThinking")) == {2, 3}
    f = folds(nvim, st["win"])
    assert f[2] == (1, 3, 4)  # lines 3-4 form one closed fold
    assert f[3] == (1, 3, 4)
    assert f[5][0] == 0  # the answer is not folded
    foldtext = nvim.exec_lua(
        "return vim.api.nvim_win_call(..., function() return vim.fn.foldtextresult(3) end)",
        st["win"],
    )
    assert "thinking" in foldtext
    assert "let me" in foldtext
    # A second thinking block gets a fold of its own.
    apply(nvim, {"kind": "thinking", "text": "more\nthoughts"}, text("ok"))
    f = folds(nvim, st["win"])
    assert f[7] == (1, 8, 9)
    assert f[10][0] == 0


def test_tool_call_is_an_upsert_and_its_result_is_folded_beneath(nvim):
    apply(
        nvim,
        begin(),
        text("Let me look."),
        {
            "kind": "tool_call",
            "id": "t1",
            "title": "bash: ls",
            "tool_kind": "execute",
            "status": "pending",
            "input": {"command": "ls"},
        },
    )
    assert answer(nvim) == [
        "Let me look.",
        "",
        "⚙ bash: ls  [execute] pending",
        '    input: {"command":"ls"}',
    ]
    apply(  # the call as the library merged it: what the update did not name stays said
        nvim,
        {
            "kind": "tool_call",
            "id": "t1",
            "title": "bash: ls",
            "tool_kind": "execute",
            "status": "in_progress",
        },
        text("Meanwhile..."),
    )
    assert answer(nvim) == [
        "Let me look.",
        "",
        "⚙ bash: ls  [execute] in_progress",
        '    input: {"command":"ls"}',
        "",
        "Meanwhile...",
    ]
    apply(
        nvim,
        {"kind": "tool_result", "id": "t1", "status": "completed", "output": "a.txt\nb.txt\n"},
        text(" done"),
    )
    ls = lines(nvim)
    assert answer(nvim) == [
        "Let me look.",
        "",
        "⚙ bash: ls  [execute] completed",
        '    input: {"command":"ls"}',
        "    a.txt",
        "    b.txt",
        "",
        "Meanwhile... done",
    ]
    header = ls.index("⚙ bash: ls  [execute] completed")
    f = folds(nvim, get(nvim)["win"])
    # The tool line and its body form one closed fold; the text after it is not folded.
    for row in range(header, header + 4):
        assert f[row] == (1, header + 1, header + 4)
    assert f[header + 5][0] == 0
    assert hl_rows(nvim, get(nvim)["buf"], "MiniMeStatusDone") == [header]


def test_tool_result_for_an_unknown_id_creates_the_line(nvim):
    apply(
        nvim,
        begin(),
        {"kind": "tool_result", "id": "x9", "status": "failed", "output": "boom"},
    )
    assert answer(nvim) == ["⚙ x9 failed", "    boom"]
    assert hl_rows(nvim, get(nvim)["buf"], "MiniMeStatusFailed") == [2]


def test_tool_call_with_none_fields_and_consecutive_tools(nvim):
    apply(
        nvim,
        begin(),
        {"kind": "tool_call", "id": "a", "title": "read", "tool_kind": None, "input": None},
        {"kind": "tool_call", "id": "b", "title": "write", "tool_kind": "edit", "input": {}},
        {"kind": "tool_result", "id": "a", "status": "completed", "output": "1\n2"},
    )
    assert answer(nvim) == [
        "⚙ read completed",
        "    1",
        "    2",
        "⚙ write  [edit] pending",
    ]
    f = folds(nvim, get(nvim)["win"])
    assert f[2] == (1, 3, 5)
    assert f[5] == (0, -1, -1)


def test_plan_is_shown_then_replaced_in_place(nvim):
    apply(
        nvim,
        begin(),
        {
            "kind": "plan",
            "entries": [
                {"content": "read code", "status": "in_progress", "priority": "high"},
                {"content": "write tests", "status": "pending", "priority": "medium"},
            ],
        },
        text("Working."),
    )
    assert answer(nvim) == ["Plan", "◐ read code (high)", "☐ write tests", "", "Working."]
    apply(
        nvim,
        {
            "kind": "plan",
            "entries": [
                {"content": "read code", "status": "completed", "priority": "high"},
                {"content": "write tests", "status": "completed", "priority": "medium"},
                {"content": "ship", "status": "pending", "priority": "low"},
            ],
        },
        text(" Still."),
    )
    assert answer(nvim) == [
        "Plan",
        "☑ read code (high)",
        "☑ write tests",
        "☐ ship",
        "",
        "Working. Still.",
    ]


def test_done_shows_usage_fires_the_event_and_stops_the_turn(nvim):
    apply(nvim, begin(session_id="sess-42"), text("All good."))
    apply(
        nvim,
        {
            "kind": "done",
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1200, "output_tokens": 34, "total_tokens": 1234},
            "error": None,
        },
    )
    last = lines(nvim)[-1]
    assert "end_turn" in last
    assert "1200 input" in last
    assert "34 output" in last
    assert "1234 total" in last
    st = get(nvim)
    assert st["running"] is False
    assert st["stop_reason"] == "end_turn"
    done = nvim.exec_lua("return _G.minime_test.done")
    assert done == [{"thread": KEY, "cwd": KEY, "session_id": "sess-42", "stop_reason": "end_turn"}]
    title = nvim.exec_lua("return vim.api.nvim_win_get_config(...).title", st["win"])
    assert title[0][0].startswith(" done · "), "the state first"
    # Visible float: no notification.
    assert nvim.exec_lua("return _G.minime_test.notes") == []


def test_done_error_is_one_line_of_plain_words(nvim):
    trace = (
        "Traceback (most recent call last):\n"
        '  File "x.py", line 3, in <module>\n'
        "    f()\n"
        "minime.Error: mm exited: exit status 2\n"
    )
    apply(nvim, begin(), {"kind": "done", "stop_reason": None, "usage": None, "error": trace})
    ls = lines(nvim)
    assert ls[-1] == "✗ error: minime.Error: mm exited: exit status 2"
    assert not any("Traceback" in line or "File" in line for line in ls)
    done = nvim.exec_lua("return _G.minime_test.done")
    assert done[0]["error"] == "minime.Error: mm exited: exit status 2"


def test_q_hides_the_float_events_still_land_and_reopen_shows_them(nvim):
    main = current_win(nvim)
    apply(nvim, begin(), text("first"))
    win = get(nvim)["win"]
    nvim.exec_lua("vim.api.nvim_set_current_win(...)", win)
    nvim.input("q")
    wait_for(lambda: get(nvim).get("win") is None, message="float closed by q")
    assert current_win(nvim) == main
    assert get(nvim)["running"] is True
    apply(nvim, text(" second"), {"kind": "done", "stop_reason": "end_turn"})
    assert answer(nvim)[0] == "first second"
    assert get(nvim).get("win") is None  # not reopened by events
    notes = nvim.exec_lua("return _G.minime_test.notes")
    assert len(notes) == 1
    assert "finished" in notes[0][0]
    assert nvim.exec_lua("return require('minime.ui.turn').reopen_last()") is True
    st = get(nvim)
    assert st["win"] is not None
    shown = nvim.exec_lua("return vim.api.nvim_win_get_buf(...)", st["win"])
    assert shown == st["buf"]
    assert current_win(nvim) == main
    # The view is at the end of the turn.
    cursor = nvim.exec_lua("return vim.api.nvim_win_get_cursor(...)", st["win"])
    assert cursor[0] == len(lines(nvim))


def test_open_and_close_by_key(nvim):
    turn = "require('minime.ui.turn')"
    assert nvim.exec_lua(f"return {turn}.open('/nowhere')") is False
    apply(nvim, begin(), text("x"))
    nvim.exec_lua(f"{turn}.close(...)", KEY)
    assert get(nvim).get("win") is None
    assert nvim.exec_lua(f"return {turn}.open(...)", KEY) is True
    assert get(nvim)["win"] is not None


def test_follows_the_stream_unless_scrolled_up(nvim):
    apply(nvim, begin(), text("\n".join(f"line {i}" for i in range(100))))
    st = get(nvim)
    win = st["win"]

    def cursor():
        return nvim.exec_lua("return vim.api.nvim_win_get_cursor(...)[1]", win)

    assert cursor() == len(lines(nvim))
    apply(nvim, text("\nmore"))
    assert cursor() == len(lines(nvim))
    # The user scrolls up: new text no longer moves the view.
    nvim.exec_lua("vim.api.nvim_win_set_cursor(..., {5, 0})", win)
    apply(nvim, text("\nand more\nand more"))
    assert cursor() == 5
    top = nvim.exec_lua("return vim.fn.line('w0', ...)", win)
    assert top <= 5
    # Back at the bottom (G): following again.
    nvim.exec_lua("vim.api.nvim_win_call(..., function() vim.cmd('normal! G') end)", win)
    apply(nvim, text("\nlast"))
    assert cursor() == len(lines(nvim))
    assert nvim.exec_lua("return vim.fn.line('w$', ...)", win) == len(lines(nvim))


def test_ctrl_c_in_the_float_calls_the_cancel_hook(nvim):
    nvim.exec_lua(
        "require('minime.ui.turn').on_cancel = function(key) "
        "table.insert(_G.minime_test.cancelled, key) end"
    )
    apply(nvim, begin(), text("working"))
    nvim.exec_lua("vim.api.nvim_set_current_win(...)", get(nvim)["win"])
    # feedkeys, not nvim_input: an input <C-c> that lands while Neovim is busy is an
    # interrupt, not a key (seen under load), and the test is about the mapping.
    nvim.exec_lua(
        "vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<C-c>', true, false, true),"
        " 'mx', false)"
    )
    wait_for(lambda: nvim.exec_lua("return _G.minime_test.cancelled") == [KEY])
    assert get(nvim)["win"] is not None  # the float stays until the turn ends


def test_odd_text_never_breaks(nvim):
    long_line = "x" * 200_000
    apply(
        nvim,
        begin("nul\x00prompt"),
        text("a\x00b\r\nc\rd\n"),
        {"kind": "thinking", "text": b"bad \xff\xfe utf8\n"},
        text(long_line),
        {"kind": "tool_call", "id": 7, "title": "t\nwith newline", "input": {"k": "\x00"}},
        {"kind": "tool_result", "id": 7, "output": b"\xc3"},
        {"kind": "notice", "text": "two\nlines"},
        {"kind": "plan", "entries": [{"content": "a\nb"}, "bare string"]},
    )
    checks = nvim.exec_lua(
        """
        local buf = ...
        local l = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
        local has = function(s) return vim.tbl_contains(l, s) end
        -- The long line comes in lines of at most 12000 bytes (see turn.lua), nothing lost.
        local xs = vim.tbl_filter(function(s) return s:match('^x+$') ~= nil end, l)
        local short = #xs > 1 and #vim.tbl_filter(function(s) return #s > 12000 end, xs) == 0
        return {
          l[1] == 'nul\\0prompt' or l[1] == '> nul\\0prompt',
          has('a\\0b'), has('c\\rd'), has('bad \\xff\\xfe utf8'),
          short and table.concat(xs) == string.rep('x', 200000),
          has('⚙ t⏎with newline completed'), has('    \\xc3'), has('ℹ two'), has('  lines'),
          has('☐ a b'), has('☐ bare string'),
        }
        """,
        get(nvim)["buf"],
    )
    assert checks == [True] * 11


def test_apply_never_throws_and_records_failures(nvim):
    nvim.exec_lua(
        """
        local T = require('minime.ui.turn')
        T.apply(..., { { kind = 'begin', prompt = 'p' }, 'not an event', { kind = 'bogus' } })
        T.apply(..., 'not a list')
        T.apply(..., { { kind = 'text', text = 'still fine' } })
        """,
        KEY,
    )
    errors = nvim.exec_lua(
        "local T = require('minime.ui.turn'); local e = T.errors; T.errors = {}; return e"
    )
    assert len(errors) == 2
    assert "bogus" in errors[1]
    assert answer(nvim) == ["still fine"]


def test_a_new_turn_in_the_same_cwd_appends_to_the_conversation(nvim):
    """Issue 10: this test asserted that each ask wiped the float; now the turns stay, in order."""
    apply(nvim, begin("one"), text("answer one"), {"kind": "done", "stop_reason": "end_turn"})
    first = get(nvim)
    apply(nvim, begin("two", session_id="s2"), text("answer two"))
    second = get(nvim)
    assert second["buf"] == first["buf"], "one buffer per conversation"
    assert second["win"] == first["win"]
    assert lines(nvim) == [
        *["> one", "", "answer one", "", "■ done (end_turn)"],
        *["", "> two", "", "answer two"],
    ]
    assert second["running"] is True
    title = nvim.exec_lua("return vim.api.nvim_win_get_config(...).title", second["win"])
    assert "running" in title[0][0]


def test_reset_empties_the_conversation_and_opens_nothing(nvim):
    apply(nvim, begin("one"), text("answer one"), {"kind": "done", "stop_reason": "end_turn"})
    first = get(nvim)
    apply(nvim, {"kind": "reset"})
    st = get(nvim)
    assert lines(nvim) == [""]
    assert st["buf"] != first["buf"], "a fresh buffer: the old one's highlighter goes with it"
    assert nvim.exec_lua("return vim.api.nvim_buf_is_valid(...)", first["buf"]) is False
    assert st["win"] == first["win"]
    assert st["state"] == "idle"
    apply(nvim, begin("two"), text("answer two"))
    assert lines(nvim) == ["> two", "", "answer two"]
    # A reset for a cwd with no float yet opens none.
    apply(nvim, {"kind": "reset"}, key="/elsewhere")
    assert get(nvim, "/elsewhere").get("win") is None


def test_a_fresh_begin_starts_an_empty_conversation(nvim):
    apply(nvim, begin("one"), text("answer one"), {"kind": "done", "stop_reason": "end_turn"})
    loaded = {**begin("(loaded session s9)", session_id="s9"), "fresh": True}
    apply(nvim, loaded, {"kind": "user", "text": "old question"}, text("old answer"))
    assert lines(nvim) == ["> (loaded session s9)", "", "> old question", "", "old answer"]


def test_old_turns_tool_output_is_trimmed_and_stays_readable(nvim):
    keep, trim = nvim.exec_lua(
        "local c = require('minime.ui.turn.conversation') return { c.KEEP, c.TRIM_LINES }"
    )
    out = "\n".join(f"out {i}" for i in range(50))
    for i in range(keep + 2):
        apply(
            nvim,
            begin(f"ask {i}"),
            {"kind": "tool_call", "id": f"t{i}", "title": f"tool {i}", "status": "pending"},
            {"kind": "tool_result", "id": f"t{i}", "status": "completed", "output": out},
            text(f"answer {i}"),
            {"kind": "done", "stop_reason": "end_turn"},
        )
    all_lines = lines(nvim)
    for i in range(keep + 2):
        assert f"> ask {i}" in all_lines and f"answer {i}" in all_lines
    # The two oldest turns keep their first lines of output and say how many went.
    note = f"    … {50 - trim} lines of output trimmed (an older turn)"
    assert all_lines.count(note) == 2
    assert all_lines.count("    out 49") == keep
    first = all_lines.index("⚙ tool 0 completed")
    assert all_lines[first + 1 : first + trim + 2] == [
        *(f"    out {i}" for i in range(trim)),
        note,
    ]
    # Still folded under its header, the fold spanning the trimmed body.
    win = get(nvim)["win"]
    closed = nvim.exec_lua(
        "local win, l = ... return vim.api.nvim_win_call(win, function()"
        " return {vim.fn.foldclosed(l), vim.fn.foldclosedend(l)} end)",
        win,
        first + 2,
    )
    assert closed == [first + 1, first + trim + 2]


def test_one_float_per_cwd_and_one_shown_at_a_time(nvim):
    apply(nvim, begin("a", key="/a"), text("in a"), key="/a")
    apply(nvim, begin("b", key="/b"), text("in b"), key="/b")
    a, b = get(nvim, "/a"), get(nvim, "/b")
    assert a["buf"] != b["buf"]
    assert a.get("win") is None
    assert b["win"] is not None
    apply(nvim, text(" more"), key="/a")
    assert answer(nvim, "/a") == ["in a more"]
    assert nvim.exec_lua("return require('minime.ui.turn').running_count()") == 2


def test_setup_focus_and_size(nvim):
    nvim.exec_lua(
        "require('minime').setup({ window = { focus = true, width = 40, height = 0.5 } })"
    )
    apply(nvim, begin(), text("x"))
    st = get(nvim)
    assert current_win(nvim) == st["win"]
    cfg = nvim.exec_lua("return vim.api.nvim_win_get_config(...)", st["win"])
    assert cfg["width"] == 40
    assert cfg["border"][0] == "╭"  # the default border: rounded


def test_vimresized_resizes_the_float(nvim):
    apply(nvim, begin(), text("x"))
    win = get(nvim)["win"]
    before = nvim.exec_lua("return vim.api.nvim_win_get_config(...).width", win)
    nvim.exec_lua("vim.o.columns = 200; vim.api.nvim_exec_autocmds('VimResized', {})")
    after = nvim.exec_lua("return vim.api.nvim_win_get_config(...).width", win)
    assert after > before
    assert after == int((200 - 2) * 0.4)  # the side layout's default width


def test_notice_lines(nvim):
    apply(
        nvim,
        begin(),
        {"kind": "notice", "text": "one"},
        {"kind": "notice", "text": "two"},
        text("x"),
    )
    assert answer(nvim) == ["ℹ one", "ℹ two", "", "x"]


def test_statusline_spins_only_while_a_turn_runs(nvim):
    status = "require('minime.status')"
    assert nvim.exec_lua(f"return {status}.statusline()") == ""
    apply(nvim, begin(), text("x"))
    line = nvim.exec_lua(f"return {status}.statusline()")
    assert line.endswith(" minime")
    assert line[0] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
    assert nvim.exec_lua(f"return {status}.ticking()") is True
    apply(nvim, {"kind": "done", "stop_reason": "cancelled"})
    assert nvim.exec_lua(f"return {status}.statusline()") == ""
    assert nvim.exec_lua(f"return {status}.ticking()") is False
    assert lines(nvim)[-1] == "■ cancelled"


def test_ten_thousand_chunks_in_batches(nvim):
    rng = random.Random(1234)
    words = ["alpha", "béta", "日本語", "🙂", "`code`", "**bold**", "-", "#", "x\ty"]
    chunks = []
    while len(chunks) < 10_000:
        piece = " ".join(rng.choice(words) for _ in range(rng.randint(1, 4)))
        if rng.random() < 0.2:
            piece += "\n" * rng.randint(1, 2)
        cut = rng.randint(1, len(piece))
        chunks.extend(p for p in (piece[:cut], piece[cut:]) if p)
    chunks = chunks[:10_000]
    apply(nvim, begin("stream"))
    i = 0
    while i < len(chunks):
        n = rng.randint(1, 100)
        apply(nvim, *(text(c) for c in chunks[i : i + n]))
        i += n
    assert "\n".join(answer(nvim)) == "".join(chunks)
    st = get(nvim)
    cursor = nvim.exec_lua("return vim.api.nvim_win_get_cursor(...)[1]", st["win"])
    assert cursor == len(lines(nvim))


def test_user_message_chunks_are_quoted(nvim):
    apply(
        nvim,
        begin(),
        {"kind": "user", "text": "earlier "},
        {"kind": "user", "text": "question\nsecond line\n"},
    )
    apply(nvim, {"kind": "user", "text": "third\n"}, text("reply"))
    assert answer(nvim) == ["> earlier question", "> second line", "> third", "", "reply"]


def test_done_can_name_the_session_when_begin_could_not(nvim):
    apply(nvim, begin(session_id=""))
    apply(nvim, {"kind": "done", "stop_reason": "end_turn", "session_id": "late-id"})
    done = nvim.exec_lua("return _G.minime_test.done")
    assert done == [{"thread": KEY, "cwd": KEY, "session_id": "late-id", "stop_reason": "end_turn"}]


def test_done_with_an_error_stop_reason(nvim):
    apply(
        nvim,
        begin(),
        {"kind": "done", "stop_reason": "error", "error": "mm exited: exit status 1"},
    )
    assert lines(nvim)[-1] == "✗ error: mm exited: exit status 1"
    title = nvim.exec_lua("return vim.api.nvim_win_get_config(...).title", get(nvim)["win"])
    assert title[0][0].startswith(" error · "), "the state first"


def test_long_lines_are_broken_after_a_space_or_between_characters(nvim):
    """A line past 10,000 bytes is broken after a space, one without any at 12,000 bytes between
    two characters; the lines joined with "" give back the text exactly."""
    rng = random.Random(7)
    words = ["alpha", "béta", "日本語", "🙂", "supercalifragilistic", "x" * 1500]
    prose = " ".join(rng.choice(words) for _ in range(8000))
    wide = "日本語🙂" * 4000  # 52,000 bytes, no space
    short = "a line under the limit " * 400  # 9,200 bytes: kept whole
    chunks, i = [], 0
    for piece in (prose, "\n", wide, "\n", short, "\n"):
        while i < len(piece):
            n = rng.randint(1, 200)
            chunks.append(piece[i : i + n])
            i += n
        i = 0
    apply(nvim, begin("long"))
    for k in range(0, len(chunks), 50):
        apply(nvim, *(text(c) for c in chunks[k : k + 50]))
    got = answer(nvim)
    assert "".join(got) == prose + wide + short
    assert all(len(line.encode()) <= 12000 for line in got)
    assert got[-2:] == [short, ""]
    prose_lines = got[: next(i for i, line in enumerate(got) if line.startswith("日本語🙂"))]
    assert len(prose_lines) > 3
    assert all(line.endswith(" ") for line in prose_lines[:-1])
    assert all(len(line.encode()) <= 10000 for line in prose_lines[:-1] if "x" * 1500 not in line)


def test_past_max_lines_the_oldest_turns_leave_with_a_note(nvim):
    nvim.exec_lua("require('minime.ui.turn.conversation').MAX_LINES = 60")
    body = "\n".join(f"answer {{}} line {j}" for j in range(20))
    for i in range(6):
        apply(
            nvim,
            begin(f"ask {i}"),
            {"kind": "thinking", "text": "hmm\nhmm"},
            {"kind": "tool_call", "id": f"t{i}", "title": f"tool {i}", "status": "pending"},
            {"kind": "tool_result", "id": f"t{i}", "output": "a\nb\nc"},
            text(body.replace("{}", str(i))),
            {"kind": "done", "stop_reason": "end_turn"},
        )
    shown = lines(nvim)
    assert len(shown) < 60 + 40, "bounded: MAX_LINES and the last turn or two"
    assert shown[0].startswith("… ") and "earlier turns not shown" in shown[0]
    dropped = int(shown[0].split()[1])
    assert shown[2] == f"> ask {dropped}", "the first kept turn follows the note"
    for i in range(dropped, 6):
        assert f"answer {i} line 19" in shown
    assert "answer 0 line 0" not in shown
    # Folds still line up with the kept tools and thinking blocks.
    win = get(nvim)["win"]
    row = shown.index("⚙ tool 5 completed") + 1
    closed = nvim.exec_lua(
        "local win, l = ... return vim.api.nvim_win_call(win, function()"
        " return {vim.fn.foldclosed(l), vim.fn.foldclosedend(l)} end)",
        win,
        row + 1,
    )
    assert closed == [row, row + 3]
    assert nvim.exec_lua("return require('minime.ui.turn').errors") == []


def test_folds_kept_up_edit_by_edit_are_each_tool_with_its_body(nvim):
    """Tool lines added and completed one batch at a time (interleaved, some without a body,
    text between): after all those edits each tool with a body is one closed fold from its
    line to its last body line, and nothing else is folded (foldexpr answers row by row after
    an edit and from all the regions on a full pass: ui/turn/folds.lua)."""
    apply(nvim, begin())
    rng = random.Random(7)
    for batch in range(12):
        calls = [f"b{batch}t{i}" for i in range(rng.randint(3, 25))]
        apply(
            nvim, *[{"kind": "tool_call", "id": c, "title": c, "status": "pending"} for c in calls]
        )
        rng.shuffle(calls)
        results = [
            {
                "kind": "tool_result",
                "id": c,
                "status": "completed",
                "output": "x\n" * rng.randint(0, 3),
            }
            for c in calls
        ]
        apply(
            nvim,
            *results[: len(results) // 2],
            text(f"between {batch}\n"),
            *results[len(results) // 2 :],
        )
    win = get(nvim)["win"]
    ls = lines(nvim)
    expected = [(0, -1, -1)] * len(ls)
    row = 0
    while row < len(ls):
        end = row
        if ls[row].startswith("⚙ "):
            while end + 1 < len(ls) and ls[end + 1].startswith("    "):
                end += 1
        if end > row:
            expected[row : end + 1] = [(1, row + 1, end + 1)] * (end - row + 1)
        row = end + 1
    assert sum(1 for line in ls if line.startswith("⚙ ")) > 100
    assert folds(nvim, win) == expected
