"""The permission float (lua/minime/ui/permission.lua) driven directly in a headless Neovim:
``INIT`` installs the hooks, ``ask`` opens a prompt, ``answers`` / ``shown`` / ``pending`` read
what the user got. Used by test_ui_permission.py and test_permission_focus.py."""

from __future__ import annotations

# Test hooks: `ask(req)` opens a prompt whose answers land in _G.answers as {id, option|'nil'}.
# Keys work at once unless a test sets key_delay; notifications land in _G.notes. The float takes
# the focus by itself here (focus = "idle": nobody typed since start-up), so keys reach it; when
# it does is test_permission_focus.py's.
INIT = """
_G.answers, _G.notes = {}, {}
vim.notify = function(msg) table.insert(_G.notes, msg) end
require('minime').setup({ permission = { key_delay = 0, focus = 'idle' } })
-- In use: keys are timed from the host's first start, and no prompt comes before it.
require('minime.ui.last_key')
_G.ask = function(req)
  require('minime.ui.permission').open(req, function(option_id, remember, reason)
    table.insert(_G.answers, { req.id, option_id == nil and 'nil' or option_id })
  end)
end
"""


OPTIONS = [
    {"option_id": "allow", "name": "Allow", "kind": "allow_once"},
    {"option_id": "allow_always", "name": "Allow always", "kind": "allow_always"},
    {"option_id": "reject", "name": "Reject", "kind": "reject_once"},
    {"option_id": "never", "name": "Never", "kind": "reject_always"},
]


def request(id_="r1", **extra):
    req = {
        "id": id_,
        "cwd": "/tmp/proj",
        "session_id": "s1",
        "title": "bash: rm -rf build",
        "tool_kind": "execute",
        "input": {"command": "rm -rf build"},
        "content": [],
        "options": OPTIONS,
    }
    req.update(extra)
    return req


def ask(nvim, req):
    nvim.exec_lua("ask(...)", req)


def answers(nvim):
    return nvim.exec_lua("return _G.answers")


def shown(nvim):
    """Lines of the permission float, or None when none is open."""
    return nvim.exec_lua(
        """
        local win = require('minime.ui.permission').win()
        if not win then return vim.NIL end
        return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
        """
    )


def pending(nvim):
    return nvim.exec_lua("return require('minime.ui.permission').pending()")


# A conversation float with a running turn, the user in it (looking at the agent).
CONVERSATION = """
local key = ...
require('minime.ui.turn').apply(key, {
  { kind = 'begin', prompt = 'hello', cwd = key, session_id = 's1' },
  { kind = 'text', text = 'working on it' },
})
local _, win = require('minime.ui.turn').shown()
vim.api.nvim_set_current_win(win)
return win
"""
