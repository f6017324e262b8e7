"""An ask's ``@`` mentions as ACP content blocks, after its text block (the prompt as typed).

What each mention becomes depends on the agent's ``promptCapabilities`` (its ``initialize``
answer): a file's text is an embedded ``resource`` where ``embeddedContext`` is true, else a
``resource_link``; a directory, a file over the limit and a file that is not text are always a
link; an image is an ``image`` block only where ``image`` is true, else nothing. A mention Lua
refused (outside the cwd, denied, missing) arrives with its reason alone and becomes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .ops import Mention


@dataclass
class Prompt:
    """The blocks to send, what the conversation shows of them, and what was left out (each
    ``"@x: why"``) or sent short of its content (said to the user in one message)."""

    blocks: list[dict[str, Any]]
    shown: list[str] = field(default_factory=list)
    not_attached: list[str] = field(default_factory=list)
    as_links: list[str] = field(default_factory=list)

    def message(self) -> str | None:
        parts = []
        if self.not_attached:
            parts.append("not attached: " + "; ".join(self.not_attached))
        if self.as_links:
            parts.append("sent as a link only: " + "; ".join(self.as_links))
        return "minime: " + " — ".join(parts) if parts else None


def _link(m: Mention) -> dict[str, Any]:
    return {"type": "resource_link", "uri": m.uri, "name": m.name}


def _is_text(text: str) -> bool:
    """Whether ``text`` is valid UTF-8 as read (pynvim hands invalid bytes over as lone
    surrogates, which no JSON line can carry)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def prompt_blocks(text: str, mentions: list[Mention], agent_capabilities: dict[str, Any]) -> Prompt:
    """The prompt ``text`` and its ``mentions`` as ACP content blocks for this agent."""
    caps = agent_capabilities.get("promptCapabilities") or {}
    embedded, images = caps.get("embeddedContext") is True, caps.get("image") is True
    out = Prompt(blocks=[{"type": "text", "text": text}])
    attached: set[str] = set()
    for m in mentions:
        if m.refused is None and m.uri in attached:  # `@a.txt @./a.txt`: one block
            continue
        attached.add(m.uri)
        if m.refused is not None or m.kind is None:
            out.not_attached.append(f"{m.mention}: {m.refused or 'not understood'}")
        elif m.kind == "image":
            if m.too_big:
                out.not_attached.append(f"{m.mention}: larger than the limit ({m.size} bytes)")
            elif not images:
                out.not_attached.append(f"{m.mention}: the agent does not take images")
            elif m.data is not None:
                image = {"type": "image", "data": m.data, "mimeType": m.mime_type, "uri": m.uri}
                out.blocks.append(image)
                out.shown.append(f"{m.name} (image)")
        elif m.kind == "directory":
            out.blocks.append(_link(m))
            out.shown.append(f"{m.name.rstrip('/')}/")
        elif embedded and m.text is not None and _is_text(m.text):
            resource = {"uri": m.uri, "text": m.text, "mimeType": m.mime_type or "text/plain"}
            out.blocks.append({"type": "resource", "resource": resource})
            out.shown.append(m.name)
        else:
            out.blocks.append(_link(m))
            out.shown.append(f"{m.name} (link)")
            if m.too_big:
                out.as_links.append(f"{m.mention}: larger than the limit ({m.size} bytes)")
            elif m.binary or (m.text is not None and not _is_text(m.text)):
                out.as_links.append(f"{m.mention}: not text")
    return out
