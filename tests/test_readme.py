"""README's library example runs as printed, against the fake mm (named by $MM_BIN)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from nvim_harness import REPO


def test_the_readme_library_example_runs(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    example = next(b for b in blocks if "minime.start(" in b)
    (tmp_path / "example.py").write_text(example)
    (tmp_path / "agent.yaml").write_text("yolo: true\n")
    env = dict(os.environ, MM_BIN=str(REPO / "demo" / "mm"), MINIME_PYTHON=sys.executable)
    out = subprocess.run(
        [sys.executable, "example.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "echo: How many to-dos are open? end_turn" in out.stdout
    assert "echo: And in one word?" in out.stdout
