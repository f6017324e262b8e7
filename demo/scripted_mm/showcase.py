"""What the offline demo adds around the script (``fake.demo: true``) so that a newcomer sees
every feature of the editor: session modes and a config option, earlier sessions to list and
reload, a title, context usage, a login method.

mm's spec names none of these but stored sessions (``session/load`` and ``session/resume``) and
the usage on a prompt's answer; the rest is how other ACP agents (claude-agent-acp, codex-acp)
do it, and every text the demo shows of them says so. The test suite's fake mm leaves the knob
off: its sessions keep the bare shape of mm's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

NOT_MM = "not mm's: shown as other ACP agents do it"
MODES = [
    {"id": "ask", "name": "Ask", "description": f"Asks first (mm: yolo: false; {NOT_MM})"},
    {"id": "yolo", "name": "Yolo", "description": f"Never asks (mm: yolo: true; {NOT_MM})"},
]
PACES = [
    {"value": "normal", "name": "Normal", "description": "Answers at once"},
    {"value": "slow", "name": "Slow", "description": "Streams word by word, pauses between steps"},
]
PAUSE = {"normal": 0.0, "slow": 0.4}  # seconds between steps; what the pace option changes
WORD_GAP = {"normal": 0.0, "slow": 0.04}
AUTH_METHODS = [
    {
        "id": "demo-login",
        "name": "Demo login",
        "description": f"Nothing to log in to: the demo accepts it ({NOT_MM})",
    }
]
USAGE_SIZE = 32000
EARLIER = {
    "sessionId": "20261201-090000-demo0001",
    "title": "An earlier session (scripted)",
    "updatedAt": "2026-12-01T09:00:00Z",
    "history": [
        ("user", "Why does parse() drop the last line?"),
        ("agent", "Because `split` leaves a trailing empty item, and `[:-1]` cuts a real one."),
    ],
}


@dataclass
class Shown:
    """One session as the demo keeps it: its mode, options, title and what was said."""

    mode: str = "ask"
    pace: str = "normal"
    title: str | None = None
    used: int = 0
    history: list[tuple[str, str]] = field(default_factory=list)
    updated: str = ""


def title_of(prompt: str) -> str:
    """The title the demo gives a session after its first prompt."""
    first = prompt.strip().splitlines()[0] if prompt.strip() else "(empty)"
    if first.split()[:1] == ["/tour"]:
        return "The minime tour"
    return first if len(first) <= 40 else first[:39] + "…"


class Showcase:
    """The demo's sessions: what ``session/new|load|resume`` answer beyond mm's bare shape,
    ``session/list``, ``session/set_mode``, ``session/set_config_option``, and the updates
    after a turn (title, usage)."""

    def __init__(self) -> None:
        self.sessions: dict[str, Shown] = {}

    def capabilities(self) -> dict[str, Any]:
        return {"loadSession": True, "sessionCapabilities": {"list": {}, "resume": {}}}

    def opened(self, session_id: str, cwd: str) -> dict[str, Any]:
        """A session opened (new, loaded or resumed): its modes and config options."""
        shown = self.sessions.setdefault(session_id, Shown())
        if session_id == EARLIER["sessionId"] and not shown.history:
            shown.title, shown.history = str(EARLIER["title"]), list(EARLIER["history"])
        return {
            "modes": {"currentModeId": shown.mode, "availableModes": MODES},
            "configOptions": self.options(shown),
        }

    def options(self, shown: Shown) -> list[dict[str, Any]]:
        return [
            {
                "id": "pace",
                "name": "Pace",
                "description": f"How fast the demo answers ({NOT_MM})",
                "category": "other",
                "type": "select",
                "currentValue": shown.pace,
                "options": PACES,
            }
        ]

    def listed(self, cwd: str | None) -> list[dict[str, Any]]:
        """This process's sessions that said something, newest first, then the earlier one."""
        found = [
            {"sessionId": sid, "cwd": cwd, "title": s.title, "updatedAt": s.updated}
            for sid, s in self.sessions.items()
            if s.history and sid != EARLIER["sessionId"]
        ]
        earlier = {k: EARLIER[k] for k in ("sessionId", "title", "updatedAt")}
        return [*reversed(found), {**earlier, "cwd": cwd}]

    def history(self, session_id: str) -> list[tuple[str, str]] | None:
        if session_id == EARLIER["sessionId"]:
            return list(EARLIER["history"])
        shown = self.sessions.get(session_id)
        return list(shown.history) if shown and shown.history else None

    def set_mode(self, session_id: str, mode: Any) -> dict[str, Any]:
        if mode not in [m["id"] for m in MODES]:
            raise ValueError(f"no mode {mode!r}")
        self.sessions.setdefault(session_id, Shown()).mode = str(mode)
        return {}

    def set_option(self, session_id: str, option: Any, value: Any) -> dict[str, Any]:
        shown = self.sessions.setdefault(session_id, Shown())
        if option != "pace" or value not in PAUSE:
            raise ValueError(f"no option {option!r} with value {value!r}")
        shown.pace = str(value)
        return {"configOptions": self.options(shown)}

    def after_turn(self, session_id: str, prompt: str, answer: str) -> list[dict[str, Any]]:
        """Remember the turn; the updates a turn's end sends: the title once, the usage."""
        shown = self.sessions.setdefault(session_id, Shown())
        shown.history += [("user", prompt), ("agent", answer)]
        shown.used += len(prompt) + len(answer)
        shown.updated = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        updates: list[dict[str, Any]] = []
        if shown.title is None:
            shown.title = title_of(prompt)
            updates.append({"sessionUpdate": "session_info_update", "title": shown.title})
        used = min(shown.used, USAGE_SIZE)
        updates.append({"sessionUpdate": "usage_update", "used": used, "size": USAGE_SIZE})
        return updates

    def pause(self, session_id: str) -> float:
        shown = self.sessions.get(session_id)
        return PAUSE[shown.pace] if shown else 0.0

    def word_gap(self, session_id: str) -> float:
        shown = self.sessions.get(session_id)
        return WORD_GAP[shown.pace] if shown else 0.0

    def never_asks(self, session_id: str) -> bool:
        shown = self.sessions.get(session_id)
        return shown is not None and shown.mode == "yolo"
