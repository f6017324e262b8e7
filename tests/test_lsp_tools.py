"""The language-server tools (definition, references, symbols, hover) through the whole stack:
fake mm → library → host → Lua → a real pylsp started with vim.lsp.start → back to the model.

One Neovim and one pylsp serve the module (starting pylsp costs ~1 s of a shared machine); each
test asks its own turns and reads the last answer the model got.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.procs import cmdline, live_processes
from nvim_harness import LSP_ATTACHED, REPO, start, wait_for
from plugin_harness import Editor, agent_file, init, tool_answer

PYLSP = REPO / ".venv" / "bin" / "pylsp"

GREETER = '''import os


class Greeter:
    """Says hello."""

    def greet(self, name):
        """Greet someone by name."""
        return os.path.join("hello", name)
'''

MAIN = """from greeter import Greeter


def main():
    g = Greeter()
    return g.greet("world")
"""

# Non-ASCII before the call: "é" is 2 bytes and 1 UTF-16 unit. Line 2: byte column 27 is the
# `g` of greet (character 23). (Not an astral character: pylsp 1.15 counts code points where
# the protocol says UTF-16 units, so "😀" would put its columns one off.)
UNI = """from greeter import Greeter
s = "éé"; t = Greeter().greet(s)
"""

# near.py is a symlink to a file outside the project: its definitions are outside.
USES_LINK = """from near import far

far()
"""

# Counts reads that ran autocommands (a quiet load runs none).
COUNT_READS = """
_G.reads = {}
vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufReadPre', 'BufNew' }, { callback = function(ev)
  table.insert(_G.reads, vim.fs.basename(ev.file))
end })
"""

START_PYLSP = """
local root, cmd, cache = ...
vim.api.nvim_create_autocmd('FileType', { pattern = 'python', callback = function(ev)
  vim.lsp.start({ name = 'pylsp', cmd = { cmd }, root_dir = root,
    cmd_env = { XDG_CACHE_HOME = cache } }, { bufnr = ev.buf })
end })
"""

# pylsp's requests fail as a server's do, in its own words: a request that throws (here the
# client's request is wrapped to answer with the error a server sends, its traceback quoting
# the server's files and the project's).
BREAK_HOVER = """
local outside = ...
for _, c in ipairs(vim.lsp.get_clients({ name = 'pylsp' })) do
  c._minime_request = c.request
  c.request = function(self, method, params, handler, bufnr)
    if method ~= 'textDocument/hover' then
      return self._minime_request(self, method, params, handler, bufnr)
    end
    local uri = params.textDocument.uri
    local message = ('Traceback (most recent call last):\\n  File "%s/lib/pylsp/x.py", line 3\\n'
      .. 'jedi failed on %s (see file://%s/lib/jedi/api.py:12, ~/.cache/jedi/log)')
      :format(outside, vim.uri_to_fname(uri), outside)
    vim.schedule(function() handler({ code = -32603, message = message }, nil) end)
    return true, 1
  end
end
"""

UNBREAK_HOVER = """
for _, c in ipairs(vim.lsp.get_clients({ name = 'pylsp' })) do
  if c._minime_request then c.request, c._minime_request = c._minime_request, nil end
end
"""

PENDING = """
for _, c in ipairs(vim.lsp.get_clients({ name = 'pylsp' })) do
  for _, r in pairs(c.requests) do
    if r.type == 'pending' and r.method == 'textDocument/hover' then return true end
  end
end
return false
"""


def pylsp_pid(parent: int) -> int:
    """The pid of the pylsp Neovim started (a child of `parent`)."""
    for pid, fields in live_processes():
        if int(fields[1]) == parent and b"pylsp" in cmdline(pid):
            return pid
    raise AssertionError("no pylsp process under Neovim")


class Lsp:
    """The editor of the module's project, and a way to call a tool the way the model does."""

    def __init__(self, ed: Editor, project: Path) -> None:
        self.ed = ed
        self.project = project

    def call(self, name: str, args: dict[str, Any]) -> str:
        return self.ed.tool(name, args)

    def json(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return self.ed.tool_json(name, args)


@pytest.fixture(scope="module")
def lsp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lsp]:
    if not PYLSP.exists():
        pytest.skip("pylsp is not installed (scripts/setup installs it)")
    base = tmp_path_factory.mktemp("lsp")
    project = base / "project"
    project.mkdir()
    (project / "greeter.py").write_text(GREETER)
    (project / "main.py").write_text(MAIN)
    (project / "notes.xyz").write_text("no server for this\n")
    (project / "uni.py").write_text(UNI)
    (base / "faraway.py").write_text("def far():\n    return 1\n")
    (project / "near.py").symlink_to(base / "faraway.py")
    (project / "uses_link.py").write_text(USES_LINK)
    config = agent_file(base, trace=False, yolo=True)
    options = {"mm": str(REPO / "demo" / "mm"), "config": config}
    with start(init(options)) as nvim:
        nvim.command(f"cd {project}")
        # jedi's cache outside Neovim's temporary XDG dirs: pylsp may still write it while
        # Neovim quits and those dirs are removed.
        nvim.exec_lua(START_PYLSP, str(project), str(PYLSP), str(base / "cache"))
        nvim.exec_lua(COUNT_READS)
        nvim.command(f"edit {project / 'main.py'}")
        wait_for(lambda: nvim.exec_lua(LSP_ATTACHED, str(project / "main.py")), 30, message="pylsp")
        yield Lsp(Editor(nvim, project, timeout=30), project)


def test_definition_by_position_across_files(lsp: Lsp) -> None:
    # main.py line 6: `    return g.greet("world")`; col 14 is the `g` of greet.
    answer = lsp.json("definition", {"path": "main.py", "line": 6, "col": 14})
    assert answer["outside"] == 0
    [loc] = answer["locations"]
    assert (loc["path"], loc["line"], loc["col"]) == ("greeter.py", 7, 9)
    assert loc["text"] == "    def greet(self, name):"
    assert (loc["end_line"], loc["end_col"]) == (7, 14)


def test_definition_by_name_path_in_a_file_not_open(lsp: Lsp) -> None:
    """greeter.py is not open: it is loaded quietly (unlisted, no swap file) and pylsp attached."""
    answer = lsp.json("definition", {"symbol": "Greeter/greet", "path": "greeter.py"})
    assert [(x["path"], x["line"], x["col"]) for x in answer["locations"]] == [("greeter.py", 7, 9)]
    buf = lsp.ed.lua("return vim.fn.bufnr(...)", str(lsp.project / "greeter.py"))
    assert lsp.ed.lua("return vim.bo[...].buflisted", buf) is False
    assert lsp.ed.lua("return vim.bo[...].swapfile", buf) is False
    assert "greeter.py" not in lsp.ed.lua("return _G.reads"), "no autocommand ran"


def test_columns_are_bytes_across_utf16_servers(lsp: Lsp) -> None:
    """pylsp counts UTF-16 units; the model's columns are bytes, both ways."""
    answer = lsp.json("definition", {"path": "uni.py", "line": 2, "col": 27})
    assert [(x["path"], x["line"], x["col"]) for x in answer["locations"]] == [("greeter.py", 7, 9)]
    refs = lsp.json("references", {"path": "greeter.py", "line": 7, "col": 9})
    uni = [x for x in refs["locations"] if x["path"] == "uni.py"]
    assert [(x["line"], x["col"], x["end_col"]) for x in uni] == [(2, 27, 32)]
    assert uni[0]["text"] == 's = "éé"; t = Greeter().greet(s)'


def test_a_symlink_out_of_the_cwd_is_outside(lsp: Lsp) -> None:
    raw = lsp.call("definition", {"path": "uses_link.py", "line": 3, "col": 1})
    answer = json.loads(raw)
    assert answer["locations"] == [] or all(x["path"] != "near.py" for x in answer["locations"])
    assert answer["outside"] >= 1, raw
    assert "faraway" not in raw and "near.py" not in raw


def test_definition_by_name_in_the_workspace(lsp: Lsp) -> None:
    """pylsp offers no workspace/symbol: the open files' symbols are searched instead."""
    lsp.json("symbols", {"path": "greeter.py"})  # load and attach greeter.py
    lsp.ed.nvim.command("badd greeter.py")
    answer = lsp.json("definition", {"symbol": "Greeter"})
    assert [(x["path"], x["line"], x["text"]) for x in answer["locations"]] == [
        ("greeter.py", 4, "class Greeter:")
    ]


def test_references_across_files(lsp: Lsp) -> None:
    answer = lsp.json("references", {"path": "greeter.py", "line": 7, "col": 9})
    places = sorted((x["path"], x["line"]) for x in answer["locations"])
    assert places == [("greeter.py", 7), ("main.py", 6), ("uni.py", 2)]
    without = lsp.json(
        "references",
        {"symbol": "Greeter/greet", "path": "greeter.py", "include_declaration": False},
    )
    assert sorted((x["path"], x["line"]) for x in without["locations"]) == [
        ("main.py", 6),
        ("uni.py", 2),
    ]


def test_type_definition_and_a_method_the_server_does_not_offer(lsp: Lsp) -> None:
    # main.py line 5: `    g = Greeter()`; col 5 is `g`, an instance of Greeter.
    answer = lsp.json("type_definition", {"path": "main.py", "line": 5, "col": 5})
    assert [(x["path"], x["line"], x["text"]) for x in answer["locations"]] == [
        ("greeter.py", 4, "class Greeter:")
    ]
    refused = lsp.call("implementation", {"path": "main.py", "line": 6, "col": 14})
    assert refused == (
        "[client tool error: the language server attached to main.py (pylsp) does not offer"
        " textDocument/implementation]"
    )


def test_call_hierarchy_from_a_server_that_does_not_offer_it_names_the_server(lsp: Lsp) -> None:
    """pylsp has no callHierarchyProvider: the error says so (tests/test_lsp_call_hierarchy.py
    asks a server that has one)."""
    args = {"path": "main.py", "line": 6, "col": 14, "direction": "incoming"}
    assert lsp.call("call_hierarchy", args) == (
        "[client tool error: the language server attached to main.py (pylsp) does not offer"
        " call hierarchy]"
    )
    by_name = lsp.call(
        "call_hierarchy", {"symbol": "Greeter/greet", "path": "greeter.py", "direction": "outgoing"}
    )
    assert "(pylsp) does not offer call hierarchy" in by_name, by_name
    # No server at all: the same error as the other tools, naming the file (and its filetype).
    none = lsp.call(
        "call_hierarchy", {"path": "notes.xyz", "line": 1, "col": 1, "direction": "incoming"}
    )
    assert none.startswith("[client tool error: no language server is attached to notes.xyz ("), (
        none
    )


def test_document_symbols_have_name_paths(lsp: Lsp) -> None:
    answer = lsp.json("symbols", {"path": "greeter.py"})
    names = {(s["name"], s["kind"], s["line"]) for s in answer["symbols"]}
    assert ("Greeter", "class", 4) in names
    assert ("Greeter/greet", "method", 7) in names or ("Greeter/greet", "function", 7) in names


def test_workspace_symbols_by_query(lsp: Lsp) -> None:
    lsp.ed.nvim.command("badd greeter.py")
    answer = lsp.json("symbols", {"query": "greet"})
    found = {(s["name"], s["path"]) for s in answer["symbols"]}
    assert ("Greeter", "greeter.py") in found
    assert ("Greeter/greet", "greeter.py") in found
    assert all("greet" in s["name"].lower() for s in answer["symbols"])


def test_hover_gives_the_docstring_as_markdown(lsp: Lsp) -> None:
    answer = lsp.json("hover", {"path": "main.py", "line": 6, "col": 14})
    assert (answer["path"], answer["line"], answer["col"]) == ("main.py", 6, 14)
    assert "Greet someone by name." in answer["text"]
    assert "greet(" in answer["text"]


def test_a_definition_outside_the_cwd_is_counted_not_named(lsp: Lsp) -> None:
    # greeter.py line 9: `        return os.path.join("hello", name)`; col 24 is `join`.
    raw = lsp.call("definition", {"path": "greeter.py", "line": 9, "col": 24})
    answer = json.loads(raw)
    assert answer == {"locations": [], "outside": 1}
    assert "posixpath" not in raw and "/usr" not in raw


def test_hover_on_a_symbol_defined_outside_the_cwd_gives_no_docstring(lsp: Lsp) -> None:
    """A library's docstring is its file's text: `os.path.join` (posixpath) says nothing."""
    # greeter.py line 9: `        return os.path.join("hello", name)`; col 24 is `join`.
    where = {"path": "greeter.py", "line": 9, "col": 24}

    # jedi's first look into the standard library may take longer than the tools' timeout.
    def answered() -> str | None:
        said = lsp.call("hover", where)
        return None if "no answer within" in said else said

    raw = wait_for(answered, 120, message="pylsp's hover within the timeout")
    answer = json.loads(raw)
    assert answer == {**where, "text": "", "outside": 1}
    # One defined in the cwd keeps its docstring.
    inside = lsp.json("hover", {"path": "main.py", "line": 6, "col": 14})
    assert "Greet someone by name." in inside["text"] and "outside" not in inside


def test_a_language_servers_error_names_no_path_outside_the_cwd(lsp: Lsp) -> None:
    """pylsp's error for a request it fails on quotes its traceback: the files of pylsp and
    jedi (outside the cwd) become "[outside]"; the model reads the rest as it was."""
    nvim = lsp.ed.nvim
    outside = str(REPO / ".venv")
    nvim.exec_lua(BREAK_HOVER, outside)
    try:
        answer = lsp.call("hover", {"path": "main.py", "line": 6, "col": 14})
    finally:
        nvim.exec_lua(UNBREAK_HOVER)
    assert answer.startswith("[client tool error: textDocument/hover failed: pylsp:"), answer
    assert outside not in answer and "/usr/" not in answer, answer
    assert "[outside]" in answer and f"{lsp.project}/main.py" in answer, answer


def test_no_server_is_a_clear_error_naming_the_filetype(lsp: Lsp) -> None:
    lsp.ed.nvim.command("setfiletype xyz | edit notes.xyz | set filetype=xyz")
    answer = lsp.call("hover", {"path": "notes.xyz", "line": 1, "col": 1})
    assert answer.startswith("[client tool error:"), answer
    assert "no language server is attached to notes.xyz (filetype xyz)" in answer
    # A file not open, of a filetype no server serves: the same error, and no buffer left.
    (lsp.project / "other.xyz").write_text("x\n")
    answer = lsp.call("symbols", {"path": "other.xyz"})
    assert "no language server is attached to other.xyz (no filetype detected)" in answer, answer
    assert lsp.ed.lua("return vim.fn.bufexists(...)", str(lsp.project / "other.xyz")) == 0
    lsp.ed.nvim.command("edit main.py")


@pytest.mark.parametrize(
    ("tool", "args", "says"),
    [
        ("definition", {}, "pass symbol"),
        ("definition", {"path": "main.py", "line": 6}, "pass symbol"),
        ("definition", {"path": "main.py", "line": 99, "col": 1}, "line 99 is past the end"),
        ("definition", {"path": "main.py", "line": 6, "col": 500}, "col 500 is past the end"),
        ("definition", {"path": "main.py", "line": 0, "col": 1}, "line must be 1 or more"),
        ("definition", {"symbol": "Nope/never", "path": "main.py"}, 'no symbol "Nope/never"'),
        (
            "references",
            {"path": "main.py", "line": 1, "col": 1, "include_declaration": "yes"},
            "include_declaration must be true or false",
        ),
        ("hover", {"path": "../outside.py", "line": 1, "col": 1}, "not a file under the working"),
        ("symbols", {}, "pass path"),
    ],
)
def test_bad_arguments_are_errors_the_model_can_act_on(
    lsp: Lsp, tool: str, args: dict[str, Any], says: str
) -> None:
    answer = lsp.call(tool, args)
    assert answer.startswith("[client tool error:"), answer
    assert says in answer, answer


def test_an_outside_file_is_not_named_in_the_error(lsp: Lsp) -> None:
    outside = lsp.project.parent / "secret_module.py"
    outside.write_text("SECRET = 1\n")
    answer = lsp.call("symbols", {"path": str(outside)})
    assert "not a file under the working directory" in answer
    assert "secret" not in answer.lower().replace("not a file", "")


def test_the_editor_answers_while_a_tool_call_waits_on_the_server(lsp: Lsp) -> None:
    """A language server that does not answer (pylsp stopped with SIGSTOP) holds the tool call
    up to its timeout, never the editor: a probe is answered within a deadline meanwhile."""
    nvim = lsp.ed.nvim
    pid = pylsp_pid(nvim.exec_lua("return vim.fn.getpid()"))
    count = len(lsp.ed.done()) + 1
    bound = lsp.ed.probe_bound()
    os.kill(pid, 19)  # SIGSTOP
    try:
        lsp.ed.ask('/tool hover {"path": "main.py", "line": 6, "col": 14}')
        wait_for(lambda: nvim.exec_lua(PENDING), 10, message="the hover request sent")
        worst = max(lsp.ed.probe() for _ in range(20))
        assert worst < bound, (worst, bound)
        assert len(lsp.ed.done()) < count, "the call waits for the server"
        lsp.ed.wait_done(count, timeout=30)
    finally:
        os.kill(pid, 18)  # SIGCONT
    answer = tool_answer(lsp.ed.turn_text(), "hover")
    assert "no answer within 5000 ms" in answer, answer
