"""The offline demo's tour: what a plain prompt (no ``/`` command) plays with ``fake.demo``."""

from __future__ import annotations


def is_plain(prompt: str) -> bool:
    """A prompt a person typed, not a script: no line starts with ``/``."""
    return not any(line.lstrip().startswith("/") for line in prompt.splitlines())


def tour_script(prompt: str) -> str:
    """Thought, plan, a client tool, a bash permission, and how to go on."""
    first = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return "\n".join(
        [
            "/think No model runs here: this is minime's offline demo agent.",
            "/say **Offline demo agent** (no model, scripted answers).",
            f"/say You asked: {first}",
            "/plan",
            "/tool open_buffers",
            "/bash echo hello from the demo",
            '/say Try `/tool read_buffer {"path": "<a file you opened>"}`, '
            "`/slow 100` then :MiniMeCancel, or `/tools`.",
        ]
    )
