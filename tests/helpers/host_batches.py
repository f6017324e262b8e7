"""What the host sends the conversation: every batch through ``require('minime.rpc').apply``
(the one way in), recorded in the editor as "kind:text-or-title" strings, in order."""

from __future__ import annotations

from typing import Any

__all__ = ["RECORD_BATCHES", "record_batches", "sent_batches"]

RECORD_BATCHES = """
_G.test_batches = {}
local rpc = require("minime.rpc")
local apply = rpc.apply
rpc.apply = function(key, events)
  local kinds = {}
  for _, ev in ipairs(events) do
    kinds[#kinds + 1] = ev.kind .. ":" .. (ev.text or ev.title or "")
  end
  table.insert(_G.test_batches, kinds)
  return apply(key, events)
end
"""


def record_batches(ed: Any) -> None:
    """From now on, keep each batch the host sends (``ed``: a plugin_harness.Editor)."""
    ed.lua(RECORD_BATCHES)


def sent_batches(ed: Any) -> list[list[str]]:
    return ed.lua("return _G.test_batches")
