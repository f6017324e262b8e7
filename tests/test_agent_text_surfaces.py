"""Every string an agent sends, on every surface a user sees, read where it lands: the bytes a
real terminal UI writes to its terminal (``nvim --remote-ui`` on a pty, tests/helpers/pty_ui.py),
and the texts of the surfaces Neovim does not escape itself or that a picker or a notifier may
hand to a terminal as they are (float titles and footers, the statusline piece, the panel's
winbar and statusline, fold text, notifications, vim.ui.select and vim.ui.input prompts and
items, :checkhealth).

tests/adversary.py is the agent: every string field of every session/update type, of the
permission request, the question (elicitation), agentInfo and authMethods, session/list and
the JSON-RPC errors it answers holds escapes (ESC, CSI, OSC ended by BEL and by ST, C1
controls, bidirectional overrides, NUL, a lone surrogate, a line break) and a long run of text.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from helpers.pty_ui import PtyUI
from nvim_harness import start, wait_for
from plugin_harness import Editor, init

ADVERSARY = Path(__file__).with_name("adversary.py")

# The escapes each hostile string holds, each between two letters. What a terminal must never
# receive of them (TO_TERMINAL) is checked in the pty's bytes, what no surface may hold
# (UNPRINTABLE) in the surfaces' texts.
ESCAPES = (
    "\x1b]0;PWN\x07"  # OSC ended by BEL: sets the terminal's title
    "|\x1b]2;PWN\x1b\\"  # OSC ended by ST
    "|\x1b[4242J"  # CSI (ED, with a parameter no UI sends)
    "|\x9b4243J"  # CSI as one C1 control
    "|\x85|\u202e|\u2066|\x00|\ud800|\r\nNL"  # NEL, bidi override and isolate, NUL, surrogate
)
TO_TERMINAL = [
    b"\x1b]0;PWN",
    b"\x1b]2;PWN",
    b"\x1b[4242J",
    b"\x9b4243",
    b"|\xc2\x85|",
    b"\xe2\x80\xae",
    b"\xe2\x81\xa6",
    b"|\x00|",
]
UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f\x80-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
LONG = "ω" * 3000  # a very long line


def hostile(tag: str) -> str:
    """A string for field ``tag``: the tag (what a check finds), the escapes, a long run."""
    return f"{tag}<{ESCAPES}>{LONG}"


H = hostile

# vim.ui.select and vim.ui.input answered by the test: every offer kept in _G.offers (its
# prompt and its items as format_item shows them); a select picks its first item when
# _G.pick_first is set, else none; an input is dismissed.
PICK = """
_G.offers, _G.pick_first = {}, false
vim.ui.select = function(items, opts, on_choice)
  local shown = vim.tbl_map(opts.format_item or tostring, items)
  table.insert(_G.offers, { prompt = opts.prompt or '', items = shown })
  if _G.pick_first and items[1] then return on_choice(items[1], 1) end
  on_choice(nil, nil)
end
vim.ui.input = function(opts, on_confirm)
  table.insert(_G.offers, { prompt = opts.prompt or '', items = {} })
  on_confirm(nil)
end
"""


def update(body: dict[str, Any]) -> dict[str, Any]:
    params = {"sessionId": "@SID@", "update": body}
    return {"raw": json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})}


def rpc_error(tag: str) -> dict[str, Any]:
    return {"code": -32000, "message": H(f"{tag}-message"), "data": {"details": H(f"{tag}-data")}}


def script(cwd: str) -> dict[str, Any]:
    """The adversary's answers: agentInfo, authMethods, modes, config options, session/list,
    and errors for what the user asks of it."""
    caps = {"loadSession": True, "sessionCapabilities": {"list": {}, "close": {}, "delete": {}}}
    initialize = {
        "protocolVersion": 1,
        "agentCapabilities": caps,
        "agentInfo": {"name": H("info-name"), "title": H("info-title"), "version": H("info-ver")},
        "authMethods": [{"id": "m1", "name": H("auth-name"), "description": H("auth-desc")}],
    }
    modes = {
        "currentModeId": "ask",
        "availableModes": [
            {"id": "ask", "name": H("mode-ask"), "description": H("mode-ask-desc")},
            {"id": "plan", "name": H("mode-plan"), "description": H("mode-plan-desc")},
        ],
    }
    option = {
        "id": "model",
        "name": H("opt-name"),
        "description": H("opt-desc"),
        "type": "select",
        "currentValue": "a",
        "options": [{"value": "a", "name": H("opt-value"), "description": H("opt-value-desc")}],
    }
    stored = [
        {"sessionId": H("list-id"), "cwd": cwd, "title": H("list-title"), "updatedAt": H("at")},
        {"sessionId": "s2", "cwd": H("list-cwd"), "title": H("list-title-2")},
    ]
    return {
        "replies": {
            "initialize": {"result": initialize},
            "session/new": {
                "result": {"sessionId": "adv-1", "modes": modes, "configOptions": [option]}
            },
            "session/list": {"result": {"sessions": stored}},
            "session/set_mode": {"error": rpc_error("set-mode")},
            "session/set_config_option": {"error": rpc_error("set-config")},
            "authenticate": {"error": rpc_error("auth")},
            "session/close": {"error": rpc_error("close")},
        }
    }


def tool_fields(tag: str) -> dict[str, Any]:
    return {
        "title": H(f"{tag}-title"),
        "kind": H(f"{tag}-kind"),
        "status": H(f"{tag}-status"),
        "rawInput": {H(f"{tag}-in-key"): H(f"{tag}-in")},
        "rawOutput": {"output": H(f"{tag}-out")},
        "content": [
            {"type": "content", "content": {"type": "text", "text": H(f"{tag}-text")}},
            {
                "type": "diff",
                "path": H(f"{tag}-path"),
                "oldText": H(f"{tag}-old"),
                "newText": H(f"{tag}-new"),
            },
        ],
        "locations": [{"path": H(f"{tag}-loc"), "line": 3}],
    }


def chunk(kind: str, tag: str) -> dict[str, Any]:
    return update({"sessionUpdate": kind, "content": {"type": "text", "text": H(tag)}})


FORM = {
    "mode": "form",
    "message": H("ask-message"),
    "requestedSchema": {
        "type": "object",
        "properties": {
            "pick": {
                "type": "string",
                "title": H("field-pick"),
                "description": H("field-pick-desc"),
                "oneOf": [{"const": "x", "title": H("enum-label")}, {"const": "y", "title": "Y"}],
            },
            "name": {"type": "string", "title": H("field-name"), "description": H("field-desc")},
            "count": {"type": "integer", "title": H("field-count")},
        },
    },
}


def steps() -> list[dict[str, Any]]:
    """One turn: every session/update type, a permission request, a question, a terminal."""
    call = {"sessionUpdate": "tool_call", "toolCallId": H("call-id"), **tool_fields("call")}
    ended = {"sessionUpdate": "tool_call_update", "toolCallId": H("call-id")}
    ended |= tool_fields("update") | {"status": "completed"}
    plan = [{"content": H("plan"), "priority": "high", "status": "pending"}]  # enums: as ACP
    commands = [{"name": H("cmd"), "description": H("cmd-desc"), "input": {"hint": H("cmd-hint")}}]
    option = {
        "id": "model",
        "name": H("opt2-name"),
        "description": H("opt2-desc"),
        "type": "select",
        "currentValue": "a",
        "options": [{"value": "a", "name": H("opt2-value"), "description": H("opt2-vdesc")}],
    }
    usage = {"used": 53_000, "size": 200_000, "cost": {"amount": 0.42, "currency": H("cur")}}
    permission = {
        "method": "session/request_permission",
        "params": {
            "sessionId": "@SID@",
            "toolCall": {"toolCallId": "perm-1", **tool_fields("perm")},
            "options": [
                {"optionId": "ok", "name": H("perm-allow"), "kind": "allow_once"},
                {"optionId": "no", "name": H("perm-reject"), "kind": "reject_once"},
            ],
        },
    }
    printer = "cat escapes.txt"  # the escapes as bytes (hostile_screen writes the file)
    terminal = [{"type": "terminal", "terminalId": "term-1"}]
    return [
        chunk("agent_message_chunk", "message"),
        chunk("agent_thought_chunk", "thought"),
        chunk("user_message_chunk", "user"),
        update(call),
        update(ended),
        update({"sessionUpdate": "plan", "entries": plan}),
        update({"sessionUpdate": "available_commands_update", "availableCommands": commands}),
        update({"sessionUpdate": "current_mode_update", "currentModeId": "plan"}),
        update({"sessionUpdate": "current_mode_update", "currentModeId": H("mode-id")}),
        update({"sessionUpdate": "config_option_update", "configOptions": [option]}),
        update({"sessionUpdate": "session_info_update", "title": H("session-title")}),
        update({"sessionUpdate": "usage_update", **usage}),
        {"ask": permission},
        {"ask": {"method": "elicitation/create", "params": {"sessionId": "@SID@", **FORM}}},
        {
            "ask": {
                "method": "terminal/create",
                "params": {"sessionId": "@SID@", "command": printer},
            }
        },
        update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": H("term-call"),
                "content": terminal,
            }
        ),
        {
            "ask": {
                "method": "terminal/wait_for_exit",
                "params": {"sessionId": "@SID@", "terminalId": "term-1"},
            }
        },
        {"say": "x" * 300_000},  # a very long line in the conversation
        {"say": "turn one done"},
    ]


@contextmanager
def hostile_screen(tmp_path: Path, layout: str) -> Iterator[tuple[Editor, PtyUI]]:
    """A Neovim whose agent is the adversary, with a terminal UI attached on a pty."""
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "escapes.txt").write_bytes(ESCAPES.encode("utf-8", "replace") + b"\xff\xfe\n")
    path = tmp_path / "adversary.json"
    path.write_text(json.dumps(script(str(cwd.resolve()))))
    agent = {"cmd": [sys.executable, str(ADVERSARY), str(path)]}
    opts = {"agent": agent, "window": {"layout": layout}, "permission": {"key_delay": 0}}
    with tempfile.TemporaryDirectory(prefix="minime-pty-") as run:
        address = str(Path(run) / "nvim.sock")
        with start(init(opts, PICK), args=("--listen", address)) as nvim:
            nvim.command(f"cd {cwd}")
            with PtyUI(address) as ui:
                ui.sync(nvim)
                yield Editor(nvim, cwd, timeout=30.0), ui


def offers(ed: Editor) -> list[str]:
    return [" | ".join([o["prompt"], *o["items"]]) for o in ed.lua("return _G.offers")]


def surfaces(ed: Editor, when: str) -> dict[str, str]:
    """The texts of the surfaces Neovim does not escape (or a plugin may not) at ``when``: each
    window's float title and footer, winbar and statusline (as set), the statusline piece."""
    found = {}
    for win in ed.nvim.api.list_wins():
        config = ed.float_config(win.handle)
        for part in ("title", "footer"):
            if config.get(part):
                text = config[part]
                found[f"{when}: win {win.handle} {part}"] = (
                    "".join(c[0] for c in text) if isinstance(text, list) else text
                )
        for option in ("winbar", "statusline"):
            value = ed.nvim.api.get_option_value(option, {"win": win.handle})
            if value:
                found[f"{when}: win {win.handle} {option}"] = value
    found[f"{when}: status piece"] = ed.lua("return require('minime.status').statusline()")
    return found


# The lines of the first buffer whose b:minime (or 'filetype') is the given value; nil if none.
BUFFER_OF = """
local key, value = ...
for _, buf in ipairs(vim.api.nvim_list_bufs()) do
  local got = key == "filetype" and vim.bo[buf].filetype or vim.b[buf][key]
  if got == value then return vim.api.nvim_buf_get_lines(buf, 0, -1, false) end
end
"""


@pytest.mark.parametrize("layout", ["float", "split"])
def test_no_agent_string_reaches_the_terminal_raw_or_a_surface_unprintable(
    tmp_path: Path, layout: str
) -> None:
    with hostile_screen(tmp_path, layout) as (ed, ui):
        ed.nvim.command(
            "set laststatus=2 statusline=%{%v:lua.require'minime.status'.statusline()%}"
        )
        ed.lua("require('minime').ask(...)", json.dumps(steps()))
        # The permission float: what it shows, then its first option.
        ed.permission_win()
        ui.sync(ed.nvim)
        shown = {"permission float": ed.permission_text(), **surfaces(ed, "permission")}
        ed.answer_permission("1")
        # The question: its float, then <CR> fills the form through vim.ui (dismissed).
        question = wait_for(lambda: ed.lua("return require('minime.ui.elicitation').win()"), 20)
        wait_for(lambda: ed.lua("return require('minime.ui.elicitation').live()"), 10)
        ui.sync(ed.nvim)
        shown |= {"question float": "\n".join(ed.float_lines(question)), **surfaces(ed, "question")}
        ed.press(question, "<CR>")
        done = ed.wait_done(1)
        ed.wait_text("turn one done")
        ui.sync(ed.nvim)
        shown |= surfaces(ed, "turn done")
        conversation = ed.conversation_text()
        # Every fold closed: the tools' and the thinking's fold text on the screen.
        turn = ed.lua("return require('minime.ui.turn').get(...)", ed.cwd)
        ed.lua("vim.api.nvim_win_call(..., function() vim.cmd('normal! zM') end)", turn["win"])
        ui.sync(ed.nvim)
        folds = ed.lua(
            "local win = ... return vim.api.nvim_win_call(win, function()"
            " local out = {} for l = 1, vim.fn.line('$') do"
            "   if vim.fn.foldclosed(l) == l then out[#out + 1] = vim.fn.foldtextresult(l) end"
            " end return out end)",
            turn["win"],
        )
        # A turn that fails with the agent's error.
        ed.lua("require('minime').ask(...)", json.dumps([{"fail": rpc_error("prompt")}]))
        failed = wait_for(
            lambda: next((d for d in ed.done() if d.get("error")), None), 20, message="the failure"
        )
        ui.sync(ed.nvim)
        shown |= surfaces(ed, "turn failed")
        conversation_after = ed.conversation_text()
        # The client terminal's output, while its session is the thread's (the sessions
        # picker below reopens another: then there is none to show). It opens, and takes the
        # window, when the host answers.
        ed.nvim.command("MiniMeTerminal term-1")
        terminal = wait_for(lambda: ed.lua(BUFFER_OF, "minime", "terminal"), 20, message="it")
        ui.sync(ed.nvim)
        shown |= {f"terminal line {n}": line for n, line in enumerate(terminal)}
        shown |= surfaces(ed, "terminal")
        # The pickers and what the agent's errors say.
        ed.nvim.command("MiniMeCommands")
        ed.nvim.command("MiniMeMode")
        ed.nvim.command("MiniMeMode ask")
        ed.nvim.command("MiniMeConfig")
        ed.nvim.command("MiniMeConfig model")
        ed.nvim.command("MiniMeConfig model a")
        ed.nvim.command("MiniMeLogin")
        ed.nvim.command("MiniMeLogin m1")
        ed.lua("_G.pick_first = true")
        ed.nvim.command("MiniMeSessions")
        wait_for(lambda: any("list-title" in o for o in offers(ed)), 20, message="the sessions")
        ed.lua("_G.pick_first = false")
        said = ("set-mode-message<", "set-config-message<", "login to info-title<")
        wait_for(
            lambda: all(any(tag in n for n in ed.notes()) for tag in said),
            20,
            message="the agent's errors said",
        )
        ed.nvim.command("checkhealth minime")
        health = ed.lua(BUFFER_OF, "filetype", "checkhealth")  # whatever window is current
        ui.sync(ed.nvim)
        notes = ed.notes()
        picked = offers(ed)
        screen = ui.bytes()
    for n, text in enumerate(folds):
        shown[f"fold {n}"] = text
    for n, text in enumerate(notes):
        shown[f"note {n}"] = text
    for n, text in enumerate(picked):
        shown[f"offer {n}"] = text
    # Nothing the agent sent reached the terminal as an escape; no surface holds a control
    # character, a bidi control or a lone surrogate, and none is huge. Every finding is listed.
    problems = []
    for raw in TO_TERMINAL:
        for found in re.finditer(re.escape(raw), screen):
            problems.append(
                f"to the terminal: {screen[max(0, found.start() - 60) : found.end() + 20]!r}"
            )
    for where, text in shown.items():
        if where.endswith("float"):  # buffer text: Neovim shows its controls as ^[, <202e>
            continue
        if UNPRINTABLE.search(text):
            problems.append(f"{where}: {text[:200]!r}")
        if len(text) > 4100:
            problems.append(f"{where}: {len(text)} characters")
    assert not problems, "\n".join(dict.fromkeys(problems))
    # What the agent said is still there, as text.
    for tag in ("message", "thought", "user", "update-out", "update-new", "plan"):
        # a buffer's text, as the agent sent it: Neovim shows the ESC as ^[, the NUL is ␀
        assert f"{tag}<\x1b]0;PWN\x07|" in conversation, tag
    assert "|\u2400|\ufffd|" in conversation  # NUL, lone surrogate
    for tag in ("call-title", "term-call"):  # a tool line: printable
        assert f"{tag}<^[]0;PWN^G|^[]2;PWN^[\\|^[[4242J|\ufffd4243J|" in conversation, tag
    assert "call-in<\\u001b]0;PWN\\u0007" in conversation  # the input's JSON
    assert "\x1b]0;PWN\x07|\x1b]2;PWN\x1b\\|" in conversation.split("term-call<")[-1]  # output
    assert "perm-title<\x1b]0;PWN" in shown["permission float"]
    assert "ask-message<\x1b]0;PWN" in shown["question float"]
    assert not done.get("error"), done
    assert "prompt-message<" in failed["error"]  # MiniMeTurnDone's data: the text as it came
    assert "✗ error: turn failed: prompt-message<" in conversation_after
    for tag in (
        "cmd",
        "mode-ask",
        "mode-plan",
        "opt2-name",
        "opt2-value",
        "auth-name",
        "list-title",
    ):
        assert any(f"{tag}<^[]0;PWN^G" in o for o in picked), tag
    assert any("field-pick<" in o for o in picked) and any("field-name<" in o for o in picked)
    assert any("info-name<^[]0;PWN^G" in line for line in health), health
    assert not [line for line in health if "NL>" in line and "⏎NL>" not in line], health
    for tag in said:
        assert any(f"{tag}^[]0;PWN^G" in n for n in notes), (tag, notes)
    # The session's title, its mode and its cost, printable where they are shown.
    bars = " ".join(text for where, text in shown.items() if where.startswith("turn done"))
    assert "session-title<^[]0;PWN^G" in bars
    assert "mode: mode-plan<^[]0;PWN^G" in bars
    assert "53k/200k · 0.42 cur<^[]0;PW…" in bars  # a currency: 12 characters at most


# -- one rule: each surface Neovim does not escape is reached through one module --------------

REPO = Path(__file__).resolve().parent.parent

# What only these modules may call (each makes what it is handed printable, ui/printable.lua);
# the splits of the panel and of follow open with nvim_open_win and have no title.
SINKS = {
    r"\bvim\.notify\(": {"lua/minime/ui/say.lua"},
    r"\bvim\.ui\.select\(": {"lua/minime/ui/pick.lua"},
    r"\bvim\.ui\.input\(": {"lua/minime/ui/pick.lua"},
    # say.lua's one echo clears a message it showed (an empty string: nothing of the agent's).
    r"\bnvim_echo\b|\bnvim_err_write|(?<![\w.:])print\(": {"lua/minime/ui/say.lua"},
    r"\bnvim_win_set_config\b": {"lua/minime/ui/window.lua"},
    r"\bnvim_open_win\b": {
        "lua/minime/ui/window.lua",
        "lua/minime/ui/turn/panel.lua",
        "lua/minime/ui/follow.lua",
    },
    r"\.winbar\s*=|\.statusline\s*=": {"lua/minime/ui/turn/panel.lua"},
}


def test_every_surface_is_reached_through_its_one_module() -> None:
    files = sorted([*REPO.glob("lua/**/*.lua"), *REPO.glob("plugin/**/*.lua")])
    assert len(files) > 50, files  # the walk found the tree
    found = []
    for path in files:
        rel = str(path.relative_to(REPO))
        code = [line.split("--", 1)[0] for line in path.read_text(encoding="utf-8").splitlines()]
        for pattern, allowed in SINKS.items():
            for n, line in enumerate(code, 1):
                if re.search(pattern, line) and rel not in allowed:
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert found == [], "\n".join(found)
