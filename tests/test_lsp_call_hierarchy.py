"""The call_hierarchy tool through the whole stack: fake mm → library → host → Lua → a real
pyrefly (a language server that offers call hierarchy; pylsp does not) started with
vim.lsp.start → back to the model.

One Neovim and one pyrefly serve the module. pyrefly finds the callers of files that are not
open once it has indexed the project: the fixture waits for that (a references request that
names the caller in a file never opened) before any test asks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from nvim_harness import LSP_ATTACHED, REPO, start, wait_for
from plugin_harness import Editor, agent_file, init

PYREFLY = REPO / ".venv" / "bin" / "pyrefly"

GREETER = '''import os


class Greeter:
    """Says hello."""

    def greet(self, name):
        loud = shout(name)
        return os.path.join("hello", loud)


def shout(text):
    return text.upper()
'''

# Line 10: "é" is 2 bytes and 1 UTF-16 unit, before the call.
MAIN = """from greeter import Greeter


def main():
    g = Greeter()
    return g.greet("world")


def again():
    s = "éé"; return Greeter().greet(s)
"""

# near.py is a symlink to a file outside the project; hidden.py is denied: both call greet.
FAR = """from greeter import Greeter


def far():
    return Greeter().greet("far")
"""

HIDDEN = """from greeter import Greeter


def hidden_caller():
    return Greeter().greet("hidden")
"""

# chatty() calls shout 12 times: more call sites than an answer lists.
CHATTY = "from greeter import shout\n\n\ndef chatty():\n" + "".join(
    f"    shout({i})\n" for i in range(12)
)

START_PYREFLY = """
local root, cmd = ...
vim.api.nvim_create_autocmd('FileType', { pattern = 'python', callback = function(ev)
  vim.lsp.start({ name = 'pyrefly', cmd = { cmd, 'lsp' }, root_dir = root }, { bufnr = ev.buf })
end })
"""

# Asks pyrefly for the references of greet (greeter.py line 7, character 8) without waiting;
# the answer lands in _G.refs. Returns the URIs of the last answer.
ASK_REFS = """
local path = ...
_G.refs_pending = _G.refs_pending or false
if not _G.refs_pending then
  _G.refs_pending = true
  local buf = vim.fn.bufnr(path)
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'pyrefly' })[1]
  client:request('textDocument/references', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = 6, character = 8 },
    context = { includeDeclaration = false },
  }, function(_, result)
    _G.refs = {}
    for _, loc in ipairs(result or {}) do table.insert(_G.refs, vim.fs.basename(loc.uri)) end
    _G.refs_pending = false
  end, buf)
end
return _G.refs or {}
"""


class Calls:
    """The editor of the module's project, and the tool called the way the model does."""

    def __init__(self, ed: Editor) -> None:
        self.ed = ed

    def call(self, args: dict[str, Any]) -> str:
        return self.ed.tool("call_hierarchy", args)

    def json(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.ed.tool_json("call_hierarchy", args)


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Calls]:
    if not PYREFLY.exists():
        pytest.skip("pyrefly is not installed (scripts/setup installs it)")
    base = tmp_path_factory.mktemp("calls")
    project = base / "project"
    project.mkdir()
    (project / "greeter.py").write_text(GREETER)
    (project / "main.py").write_text(MAIN)
    (project / "hidden.py").write_text(HIDDEN)
    (project / "chatty.py").write_text(CHATTY)
    (base / "faraway.py").write_text(FAR)
    (project / "near.py").symlink_to(base / "faraway.py")
    config = agent_file(base, trace=False, yolo=True)
    options = {"mm": str(REPO / "demo" / "mm"), "config": config, "deny": ["hidden.py"]}
    with start(init(options)) as nvim:
        nvim.command(f"cd {project}")
        nvim.exec_lua(START_PYREFLY, str(project), str(PYREFLY))
        nvim.command(f"edit {project / 'greeter.py'}")
        greeter = str(project / "greeter.py")
        wait_for(lambda: nvim.exec_lua(LSP_ATTACHED, greeter), 30, message="pyrefly")
        # Indexed: the callers in files never opened are known.
        wait_for(
            lambda: {"near.py", "hidden.py", "main.py"} <= set(nvim.exec_lua(ASK_REFS, greeter)),
            60,
            interval=0.05,
            message="pyrefly indexing the project",
        )
        yield Calls(Editor(nvim, project, timeout=30))


def test_incoming_calls_across_files_with_their_call_sites(calls: Calls) -> None:
    answer = calls.json({"symbol": "Greeter/greet", "path": "greeter.py", "direction": "incoming"})
    assert answer["direction"] == "incoming"
    sym = answer["symbol"]
    assert (sym["name"], sym["kind"], sym["path"], sym["line"], sym["col"]) == (
        "greet",
        "function",  # pyrefly's kind for a method
        "greeter.py",
        7,
        9,
    )
    found = sorted(
        (c["name"], c["kind"], c["path"], c["line"], c["col"], c["text"]) for c in answer["calls"]
    )
    assert found == [
        ("again", "function", "main.py", 9, 5, "def again():"),
        ("main", "function", "main.py", 4, 5, "def main():"),
    ]
    by_name = {c["name"]: c for c in answer["calls"]}
    [site] = by_name["main"]["sites"]
    assert (site["line"], site["text"]) == (6, '    return g.greet("world")')
    assert "path" not in site
    # The sites' columns are bytes whatever the server counts: "éé" is 4 bytes, 2 UTF-16 units.
    [site] = by_name["again"]["sites"]
    line = '    s = "éé"; return Greeter().greet(s)'
    assert site["text"] == line
    assert line.encode()[site["col"] - 1 :].decode().startswith("Greeter().greet(s)"), site
    assert line.encode()[: site["end_col"] - 1].decode().endswith("greet(s)"), site


def test_a_use_site_position_resolves_to_the_function_called(calls: Calls) -> None:
    # main.py line 6: `    return g.greet("world")`; col 14 is the `g` of greet.
    answer = calls.json({"path": "main.py", "line": 6, "col": 14, "direction": "incoming"})
    sym = answer["symbol"]
    assert (sym["name"], sym["path"], sym["line"], sym["col"]) == ("greet", "greeter.py", 7, 9)
    assert sorted(c["name"] for c in answer["calls"]) == ["again", "main"]


def test_callers_outside_the_cwd_or_denied_are_counted_not_named(calls: Calls) -> None:
    raw = calls.call({"symbol": "Greeter/greet", "path": "greeter.py", "direction": "incoming"})
    answer = json.loads(raw)
    # near.py (a symlink out of the cwd) and hidden.py (denied) both call greet.
    assert answer["outside"] == 2, raw
    for secret in ("far", "faraway", "near", "hidden"):
        assert secret not in raw, secret


def test_outgoing_calls_by_position(calls: Calls) -> None:
    # greeter.py line 7: `    def greet(self, name):`; col 9 is the `g` of greet.
    raw = calls.call({"path": "greeter.py", "line": 7, "col": 9, "direction": "outgoing"})
    answer = json.loads(raw)
    assert answer["symbol"]["name"] == "greet"
    [shout] = answer["calls"]
    assert (shout["name"], shout["kind"], shout["path"], shout["line"], shout["col"]) == (
        "shout",
        "function",
        "greeter.py",
        12,
        5,
    )
    assert shout["text"] == "def shout(text):"
    # The sites of an outgoing call are in greet's own file: where greet calls shout.
    assert [(s["line"], s["text"]) for s in shout["sites"]] == [(8, "        loud = shout(name)")]
    # os.path.join is the standard library's: counted, not named.
    assert answer["outside"] == 1, raw
    assert "posixpath" not in raw and "join" not in raw


def test_call_sites_and_calls_are_bounded(calls: Calls) -> None:
    answer = calls.json({"symbol": "chatty", "path": "chatty.py", "direction": "outgoing"})
    [shout] = answer["calls"]
    assert [s["line"] for s in shout["sites"]] == list(range(5, 15)), "the first 10 sites"
    assert shout["more_sites"] == 2
    assert shout["sites"][0]["text"] == "    shout(0)"
    # max_lines bounds the calls like any list of locations, and says so.
    options = "require('minime.config').options"
    was = calls.ed.lua(f"return {options}.max_lines")
    calls.ed.lua(f"{options}.max_lines = 1")
    try:
        cut = calls.json({"symbol": "Greeter/greet", "path": "greeter.py", "direction": "incoming"})
    finally:
        calls.ed.lua(f"{options}.max_lines = ...", was)
    assert len(cut["calls"]) == 1
    assert cut["cut"] == "1 more not shown (output limit); narrow the request"
    assert cut["outside"] == 2


def test_a_position_that_is_no_function_is_a_clear_error(calls: Calls) -> None:
    answer = calls.call({"path": "greeter.py", "line": 2, "col": 1, "direction": "incoming"})
    assert answer.startswith("[client tool error:"), answer
    assert "no function or method at greeter.py:2:1" in answer, answer


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ({"symbol": "shout"}, "missing required parameters: direction"),
        ({"symbol": "shout", "direction": "up"}, "direction must be one of incoming, outgoing"),
        ({"direction": "incoming"}, "pass symbol"),
        ({"path": "../faraway.py", "line": 1, "col": 1, "direction": "incoming"}, "not a file"),
    ],
)
def test_bad_arguments_are_errors_the_model_can_act_on(
    calls: Calls, args: dict[str, Any], says: str
) -> None:
    answer = calls.call(args)
    assert answer.startswith("[client tool error:"), answer
    assert says in answer, answer
