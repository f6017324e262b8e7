"""Text made fit for Neovim: the one place lone surrogates and NUL are replaced.

A Python str may hold lone surrogates that UTF-8 cannot encode: a JSON escape such as
``"\\ud800"`` in what the agent sends (a chunk, a tool call's arguments) decodes to one, and
pynvim decodes bytes that are not UTF-8 as ``\\udc80``–``\\udcff``. msgpack refuses them (the
whole call fails with a codec error). A NUL (``"\\u0000"``) crosses, but no Vimscript function
takes a string that holds one (Neovim makes it a Blob: E976): an agent's error with a NUL in
it threw in the turn float and its turn never ended. So everything the host hands to Neovim
goes through ``clean`` / ``clean_all``: each lone surrogate becomes U+FFFD, each NUL U+2400 (␀).
"""

from __future__ import annotations

import json
import re
from typing import Any

# Nesting kept as Lua tables inside an event (its rawInput, plan entries…); deeper parts go as
# JSON text. Neovim's msgpack-RPC drops the channel beyond about 32 levels, and the event
# itself sits 4 levels down (the call's arguments, the batch, the event, its field).
MAX_DEPTH = 16
TOO_DEEP_TEXT = 100_000

REPLACEMENT = "\ufffd"
NUL_SHOWN = "\u2400"  # SYMBOL FOR NULL
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD and each NUL by U+2400 (cheap when
    there is none: the streaming hot path calls this on every chunk)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _SURROGATE.sub(REPLACEMENT, text)
    if "\0" in text:
        text = text.replace("\0", NUL_SHOWN)
    return text


def clean_all(value: Any, depth: int = 0, limit: int = MAX_DEPTH) -> Any:
    """``clean`` through JSON-like data (an agent's rawInput, plan entries, usage, a tool's
    arguments…): keys too; integers msgpack cannot carry (beyond 64 bits) become floats (or
    text); what is nested deeper than ``limit`` becomes its JSON text."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict | list | tuple) and depth >= limit:
        return clean(_json_text(value))
    if isinstance(value, dict):
        return {clean(str(k)): clean_all(v, depth + 1, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_all(v, depth + 1, limit) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        try:
            return float(value)
        except OverflowError:
            return str(value)
    return value


def _json_text(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (RecursionError, ValueError, TypeError):
        return "(nested too deeply to show)"
    if len(text) > TOO_DEEP_TEXT:
        return text[:TOO_DEEP_TEXT] + "…"
    return text
