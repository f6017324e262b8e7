"""An agent's strings where Neovim does not escape them: the statusline, the float's title,
fold text, notifications and vim.ui.select items. A real headless Neovim, its Python host, and
tests/adversary.py (a raw JSON-lines agent) sending the hostile bytes over real pipes.

The statusline piece's text is evaluated as a statusline (by `%{%…%}`, `%!` and lualine alike):
an agent's `%{…}` there ran as Vimscript at the next redraw. A title's text goes to the
terminal as it is: an ESC in a mode name reached it.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nvim_harness import start, wait_for
from plugin_harness import Editor, editor_with

ADVERSARY = Path(__file__).with_name("adversary.py")

# vim.ui.select answered by the test: every offer (its prompt and items as format_item
# shows them) kept in _G.offers; the first item is chosen.
PICK = """
_G.offers = {}
vim.ui.select = function(items, opts, on_choice)
  local shown = vim.tbl_map(opts.format_item or tostring, items)
  table.insert(_G.offers, { prompt = opts.prompt, items = shown })
  on_choice(nil, nil)
end
"""

# The three ways a statusline evaluates the piece: 'statusline' with %{%…%}, with %! (the
# expression's result is evaluated again), and lualine's (the component's text is put into
# the statusline it builds: nvim_eval_statusline of the text as it is).
EVALUATIONS = {
    "%{%…%}": "return vim.api.nvim_eval_statusline("
    "[[%{%v:lua.require'minime.status'.statusline()%}]], {}).str",
    "%!": "return vim.api.nvim_eval_statusline("
    "[[%!v:lua.require'minime.status'.statusline()]], {}).str",
    "lualine": "return vim.api.nvim_eval_statusline(require('minime.status').statusline(), {}).str",
}

# Vimscript that writes the file "pwned" in Neovim's cwd (the session's).
HOSTILE = "%{writefile(['pwned'],'pwned')}"

# What no title, notification or select item may hold: C0 controls, DEL, C1 controls.
UNPRINTABLE = re.compile("[\x00-\x1f\x7f\x80-\x9f\u2028\u2029\u202a-\u202e]")


def update(body: dict[str, Any]) -> dict[str, Any]:
    params = {"sessionId": "@SID@", "update": body}
    return {"raw": json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})}


def mode_update(mode_id: str) -> dict[str, Any]:
    return update({"sessionUpdate": "current_mode_update", "currentModeId": mode_id})


@contextmanager
def hostile_editor(
    tmp_path: Path, modes: list[dict[str, Any]], current: str, **script: Any
) -> Iterator[Editor]:
    """A Neovim whose agent is the adversary, its session/new answer offering ``modes``."""
    new = {"sessionId": "adv-1", "modes": {"currentModeId": current, "availableModes": modes}}
    new.update(script.pop("new", {}))
    replies = {"session/new": {"result": new}, **script.pop("replies", {})}
    path = tmp_path / "adversary.json"
    path.write_text(json.dumps({"replies": replies, **script}))
    agent = {"cmd": [sys.executable, str(ADVERSARY), str(path)]}
    with editor_with(tmp_path, {"agent": agent}, PICK, timeout=20.0) as ed:
        yield ed


def run(ed: Editor, *steps: dict[str, Any]) -> dict[str, Any]:
    """One turn of the adversary's ``steps``: its MiniMeTurnDone data."""
    count = len(ed.done()) + 1
    ed.lua("require('minime').ask(...)", json.dumps(list(steps)))
    return ed.wait_done(count)


def statuslines(ed: Editor) -> dict[str, str]:
    return {how: ed.lua(code) for how, code in EVALUATIONS.items()}


def title(ed: Editor) -> str:
    turn = ed.lua("return require('minime.ui.turn').get(...)", ed.cwd)
    return "".join(part[0] for part in ed.float_config(turn["win"])["title"])


# -- Critical: nothing the agent names runs as Vimscript -------------------------------------


def test_a_mode_name_with_vimscript_is_shown_as_text_in_every_statusline(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"  # Neovim's cwd
    hostile = HOSTILE
    modes = [{"id": "ask", "name": "Ask " + hostile}, {"id": "x%{1}", "name": "Other"}]
    with hostile_editor(tmp_path, modes, "ask") as ed:
        run(ed, {"say": "hello"})
        wait_for(lambda: "mode: Ask" in title(ed), 10, message="for the mode in the title")
        shown = statuslines(ed)
        ed.lua("require('minime.modes').set_mode('x%{1}')")  # the offered id with a % in it
        wait_for(lambda: "mode: Other" in title(ed), 10, message="for the other mode")
        other = statuslines(ed)
    assert not pwned.exists(), "the agent's %{…} ran as Vimscript"
    for how, text in shown.items():
        assert text == "minime · mode: Ask " + hostile, how
    for how, text in other.items():
        assert text == "minime · mode: Other", how


def test_a_mode_the_agent_never_offered_is_ignored(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"  # Neovim's cwd
    hostile = HOSTILE
    modes = [{"id": "ask", "name": "Ask"}, {"id": "plan", "name": "Plan"}]
    with hostile_editor(tmp_path, modes, "ask") as ed:
        run(ed, mode_update(hostile), mode_update("yolo"), {"say": "switched"})
        wait_for(lambda: "mode: Ask" in title(ed), 10, message="for the mode in the title")
        assert hostile not in title(ed) and "yolo" not in title(ed)
        assert set(statuslines(ed).values()) == {"minime · mode: Ask"}
        # An offered one is still followed, between turns too.
        run(ed, mode_update("plan"), {"say": "planning"})
        wait_for(lambda: "mode: Plan" in title(ed), 10, message="for the offered mode")
        assert set(statuslines(ed).values()) == {"minime · mode: Plan"}
    assert not pwned.exists()


def test_a_current_mode_never_offered_in_session_new_is_not_shown(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"  # Neovim's cwd
    hostile = HOSTILE
    with hostile_editor(tmp_path, [{"id": "ask", "name": "Ask"}], hostile) as ed:
        run(ed, {"say": "hello"})
        wait_for(lambda: "idle" in title(ed) or "done" in title(ed), 10, message="the title")
        assert "mode:" not in title(ed)
        assert set(statuslines(ed).values()) == {""}
    assert not pwned.exists()


# -- Medium: no control character reaches a title, a notification or a select item -----------

ESC_TITLE = "\x1b]0;pwned\x07"  # sets the terminal's title
CLEAR = "\x1b[2J"  # clears the screen


def test_terminal_escapes_in_agent_strings_are_shown_as_text(tmp_path: Path) -> None:
    info = {"name": "evil", "title": f"Evil{ESC_TITLE}Agent", "version": "1"}
    caps = {"loadSession": True, "sessionCapabilities": {"list": {}}}
    initialize = {"protocolVersion": 1, "agentCapabilities": caps, "agentInfo": info}
    stored = {"sessionId": f"s{CLEAR}1", "title": f"Fix{ESC_TITLE}\nbug", "updatedAt": "today\x1b"}
    stored["cwd"] = str(tmp_path.resolve())
    odd_id = f"p{ESC_TITLE}"
    modes = [
        {"id": "ask", "name": f"Ask{CLEAR}\nnow", "description": "asks\x1b[31m\u202eevil"},
        {"id": odd_id, "name": "Plan\x9b2J"},
    ]
    option = {
        "id": "model",
        "name": f"Mo{CLEAR}del",
        "type": "select",
        "currentValue": "a",
        "options": [{"value": "a", "name": f"A{ESC_TITLE}", "description": "x\ry"}],
    }
    call = {"sessionUpdate": "tool_call", "toolCallId": f"c{CLEAR}1", "status": "pending"}
    call |= {"title": f"run{ESC_TITLE}\nrm -rf /", "kind": f"execute{CLEAR}"}
    ended = {"sessionUpdate": "tool_call_update", "toolCallId": f"c{CLEAR}1"}
    output = [{"type": "content", "content": {"type": "text", "text": "out\nput"}}]
    ended |= {"status": "completed", "rawInput": {"command": "rm"}, "content": output}
    replies = {
        "initialize": {"result": initialize},
        "session/list": {"result": {"sessions": [stored]}},
    }
    script = {"replies": replies, "new": {"configOptions": [option]}}
    with hostile_editor(tmp_path, modes, "ask", **script) as ed:
        run(ed, update(call), update(ended), {"say": "done"})
        wait_for(lambda: "mode: Ask" in title(ed), 10, message="for the mode in the title")
        shown = {"title": title(ed)}
        ed.lua("require('minime.modes').set_mode()")
        ed.lua("require('minime.modes').set_config()")
        ed.lua("require('minime.modes').set_config('model')")
        ed.lua("require('minime.modes').set_mode(...)", odd_id)
        note = ed.wait_note("minime: mode Plan")
        ed.lua("require('minime').sessions()")
        wait_for(lambda: len(ed.lua("return _G.offers")) == 4, 10, message="the sessions offered")
        offers = ed.lua("return _G.offers")
        lines = ed.conversation_lines()
        header = next(n for n, line in enumerate(lines, 1) if line.startswith("⚙ "))
        turn = ed.lua("return require('minime.ui.turn').get(...)", ed.cwd)
        fold = ed.lua(
            "local win, lnum = ..."
            " return vim.api.nvim_win_call(win, function()"
            "   vim.cmd(lnum .. 'foldclose') return vim.fn.foldtextresult(lnum) end)",
            turn["win"],
            header,
        )
        notes = ed.notes()
    shown |= {"header": lines[header - 1], "fold": fold}
    shown |= {f"note {n}": text for n, text in enumerate(notes)}
    assert len(offers) == 4, offers
    for n, offer in enumerate(offers):
        shown[f"offer {n}"] = " | ".join([offer["prompt"], *offer["items"]])
    for where, text in shown.items():
        assert not UNPRINTABLE.search(text), (where, text)
    # What was there is still shown, as text.
    assert "mode: Ask^[[2J⏎now · " in shown["title"]
    assert "⚙ run^[]0;pwned^G⏎rm -rf /" in shown["header"]
    # A closed fold cuts a long title to keep its status and ▸ in view: its start, printable.
    assert "▸" in fold and "⚙ run^[]0;" in fold
    assert note.startswith("minime: mode Plan\ufffd2J (p^[]0;pwned^G)")
    assert "Mo^[[2Jdel:" in shown["offer 2"] and "A^[]0;pwned^G — x⏎y" in shown["offer 2"]
    assert "Ask^[[2J⏎now — asks^[[31m\ufffdevil" in shown["offer 0"]
    assert "Fix^[]0;pwned^G⏎bug · today^[ · s^[[2J1" in shown["offer 3"]


# -- the helper itself, on random text ---------------------------------------------------------

ALPHABET = [
    *map(chr, range(0x00, 0x20)),
    "\x7f",
    *map(chr, range(0x80, 0xA0)),
    "\u2028",
    "\u2029",
    "\u202e",
    "\u2066",
    "a",
    "%",
    "é",
    "日",
    "😀",
    "⏎",
    " ",
]


def test_printable_lines_of_random_text_hold_no_control_character() -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    # Overlong forms, a surrogate, past U+10FFFF (seed 21227455 found the first): not UTF-8.
    texts = [b"a\xf0\x80\x9f\x98b", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]
    for _ in range(300):
        chars = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 60)))
        raw = chars.encode()
        if rng.random() < 0.3:  # bytes that are not UTF-8: a lone 0x9b is CSI to some terminals
            at = rng.randrange(len(raw) + 1)
            raw = raw[:at] + bytes([rng.choice([0x9B, 0x80, 0xC2, 0xE2, 0xFF])]) + raw[at:]
        texts.append(raw)
    with start() as nvim:
        lines = nvim.exec_lua(
            "local p = require('minime.ui.printable') local out = {}"
            " for i, s in ipairs(...) do out[i] = p.line(s, 40) end return out",
            texts,
        )
    for raw, line in zip(texts, lines, strict=True):
        shown = line.decode() if isinstance(line, bytes) else line
        assert not UNPRINTABLE.search(shown), (seed, raw, shown)
        assert not re.search("[\ud800-\udfff]", shown), (seed, raw, shown)  # not UTF-8
        assert len(shown) <= 40, (seed, raw, shown)
