"""What the user sees of prompts and pickers (``WATCH_PROMPTS``: Lua run before setup()), and
the stored sessions the fake offers to :MiniMeSessions. Used by test_everyday.py and
test_conversation.py."""

from __future__ import annotations

from typing import Any

# Also every permission float the user would see (titles in _G.prompts) and vim.ui.select as the
# user sees it (_G.picks; _G.pick(i) chooses).
WATCH_PROMPTS = """
_G.prompts, _G.picks = {}, {}
local permission = require('minime.ui.permission')
local open = permission.open
permission.open = function(req, on_answer)
  table.insert(_G.prompts, req.title)
  return open(req, on_answer)
end
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  for i, item in ipairs(items) do labels[i] = (opts.format_item or tostring)(item) end
  table.insert(_G.picks, { prompt = opts.prompt, labels = labels })
  _G.pick = function(i) on_choice(items[i], i) end
end
"""


def stored_sessions(cwd: str) -> list[dict[str, Any]]:
    return [
        {
            "sessionId": "sess-parser",
            "cwd": cwd,
            "title": "Fix the parser",
            "updatedAt": "2025-01-02T10:00:00Z",
            "history": [
                {"role": "user", "text": "why does the parser drop comments?"},
                {"role": "thought", "text": "look at the lexer first"},
                {"role": "agent", "text": "The lexer skips them before the parser sees them."},
            ],
        },
        {"sessionId": "sess-docs", "cwd": cwd, "title": "Docs", "history": []},
        {"sessionId": "sess-elsewhere", "cwd": "/somewhere/else", "title": "Not here"},
    ]
