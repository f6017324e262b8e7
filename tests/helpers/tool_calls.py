"""The editor tools of one session called as the host calls them, synchronously against a
headless Neovim (``Editor``), and the Lua that sets diagnostics and the quickfix list. Used by
test_editor_tools.py and test_editor_tools_scope.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from minime import mcp_jsonrpc
from minime.mcp_server import McpSession, Scope
from minime.model import ToolRequest
from minime.nvim.editor_tools import ToolError, editor_tools

# The call as the host makes it; a tool that waits (a file not loaded is read off the main loop)
# answers later, which vim.wait lets happen while this request waits.
CALL = """
local name, args, ctx = ...
local later
local answer = require('minime.tools').call(name, args, ctx, function(a) later = a end)
if answer.pending then
  vim.wait(20000, function() return later ~= nil end, 5)
  answer = later or { ok = false, error = 'test: no answer in 20 s' }
end
return answer
"""


class Editor:
    """The tools of one session in `cwd`, run synchronously against `nvim`, over ``path``:
    "client" calls each tool as mm's client-tools path does, "mcp" sends MCP's ``tools/call``
    line to the session's MCP server (minime/mcp_server.py) and reads its answer line."""

    def __init__(self, nvim: Any, cwd: Path | str, path: str = "client") -> None:
        self.nvim = nvim
        self.cwd = str(cwd)
        self.path = path
        self.ctx: dict[str, Any] = {}
        self.answers: list[str] = []  # every text the model would have read

        async def call_lua(name: str, args: dict[str, Any], cwd: str, _sid: Any = None) -> Any:
            # A ctx table in place of the cwd: the options and selection these tests set.
            return nvim.exec_lua(CALL, name, args, {**self.ctx, "cwd": cwd})

        specs = nvim.exec_lua("return require('minime.tools').builtin_specs()")
        source = editor_tools(call_lua, builtin_tools=specs)
        self.tools = {tool.name: tool for tool in source("session-1", self.cwd)}

        async def tools_for(scope: Scope) -> list[Any]:
            return source(scope.session_id, scope.cwd)

        async def send(line: bytes) -> None:
            print(line)

        self.mcp = McpSession(Scope(cwd=self.cwd, session_id="session-1"), tools_for, send)

    def text(self, name: str, **arguments: Any) -> str:
        """The text the model reads; a failed call raises ToolError."""
        if self.path == "mcp":
            return self._mcp_text(name, arguments)
        request = ToolRequest(session_id="session-1", arguments=arguments)
        coro = self.tools[name].handle(request)
        try:
            coro.send(None)  # call_lua never suspends here: the whole call runs at once
        except StopIteration as done:
            text = done.value
        except ToolError as exc:
            self.answers.append(str(exc))
            raise
        else:
            raise AssertionError("the handler suspended")
        self.answers.append(text)
        text.encode("utf-8")  # valid UTF-8: no lone surrogates
        return text

    def _mcp_text(self, name: str, arguments: dict[str, Any]) -> str:
        call = {"name": name, "arguments": arguments}
        line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
        coro = self.mcp.answer(mcp_jsonrpc.sort(json.loads(line)))
        try:
            coro.send(None)  # nothing suspends: the whole call runs at once
        except StopIteration as done:
            sent = mcp_jsonrpc.encode(done.value)
        else:
            raise AssertionError("the MCP call suspended")
        answer = json.loads(sent.decode("utf-8"))  # valid UTF-8: no lone surrogates
        result = answer["result"]
        assert [block["type"] for block in result["content"]] == ["text"], result
        text = result["content"][0]["text"]
        self.answers.append(text)
        if result["isError"]:
            raise ToolError(text)
        return text

    def json(self, name: str, **arguments: Any) -> Any:
        text = self.text(name, **arguments)
        compact = json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
        assert text.replace("\\u007f", "\x7f") == compact  # vim.json.encode escapes DEL
        return json.loads(text)

    def error(self, name: str, **arguments: Any) -> str:
        with pytest.raises(ToolError) as info:
            self.text(name, **arguments)
        return str(info.value)


def lua(nvim: Any, code: str, *args: Any) -> Any:
    return nvim.exec_lua(code, *args)


SET_DIAGNOSTICS = """
local buf, items = ...
local ns = vim.api.nvim_create_namespace('test')
for _, d in ipairs(items) do
  d.severity = vim.diagnostic.severity[d.severity]
end
vim.diagnostic.set(ns, vim.fn.bufnr(buf), items)
"""


SET_QF = "vim.fn.setqflist({}, ' ', ...)"
