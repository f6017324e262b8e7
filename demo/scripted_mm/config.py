"""The agent file (YAML): the keys of mm's that this agent honours, and its own ``fake:`` knobs."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any


def parse_duration(text: Any) -> float:
    """A Go duration ("30s", "200ms", "1m30s") in seconds."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)", str(text))
    if not parts or "".join(n + u for n, u in parts) != str(text):
        raise ValueError(f"invalid duration {text!r}")
    return sum(float(n) * units[u] for n, u in parts)


@dataclass
class Config:
    path: str
    yolo: bool = False
    max_output: int = 50000
    enabled: bool = True
    discovery: str = "meta"
    permissions: str = "auto"
    timeout: float = 30.0
    fake: dict[str, Any] = field(default_factory=dict)

    @property
    def ask_client_tools(self) -> bool:
        return self.permissions == "ask" or not self.yolo


def load_config(path: str) -> Config:
    import yaml

    with open(path, encoding="utf-8") as f:
        raw = yaml.safe_load(f) or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: not a mapping")
    tools = ((raw.get("acp") or {}).get("clientTools")) or {}
    config = Config(
        path=path,
        yolo=bool(raw.get("yolo", False)),
        max_output=int(raw.get("maxOutput", 50000)),
        enabled=bool(tools.get("enabled", True)),
        discovery=str(tools.get("discovery", "meta")),
        permissions=str(tools.get("permissions", "auto")),
        timeout=parse_duration(tools.get("timeout", "30s")),
        fake=dict(raw.get("fake") or {}),
    )
    if config.discovery not in ("meta", "request"):
        raise ValueError(f"acp.clientTools.discovery: {config.discovery!r} is not meta or request")
    if config.permissions not in ("auto", "ask"):
        raise ValueError(f"acp.clientTools.permissions: {config.permissions!r} is not auto or ask")
    return config


def log(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
