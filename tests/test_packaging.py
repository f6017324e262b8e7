"""The library is editor-agnostic in its packaging too, and a good guest in a shared process.

`pip install minime` is the library alone (the ACP SDK, msgspec); the Neovim host's packages
come with the `nvim` extra. On the `:UpdateRemotePlugins` route the host shares one Python
process with other remote plugins: it must leave that process's environment and root logger
alone. Each check runs in a fresh interpreter, so nothing this test process imported counts.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def fresh_python(code: str) -> dict:
    """Run ``code`` in a new interpreter (the repo's packages on the path); its JSON output."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "rplugin" / "python3"), str(REPO / "tests")])
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_minime_loads_neither_pynvim_nor_yaml() -> None:
    loaded = fresh_python(
        "import json, sys, minime\n"
        # Every public name, so the modules behind them (client, session, …) load too.
        "for name in minime.__all__: getattr(minime, name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    assert {"minime.client", "minime.session", "minime.agent"} <= set(loaded)  # it ran
    assert [m for m in loaded if m.split(".")[0] in ("pynvim", "yaml", "neovim")] == []
    assert [m for m in loaded if m.startswith("minime.nvim")] == []


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_library_installs_no_neovim_packages_and_the_nvim_extra_adds_them() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert _names(project["dependencies"]) == {"agent-client-protocol", "msgspec"}
    extras = project["optional-dependencies"]
    assert _names(extras["nvim"]) == {"pynvim", "pyyaml"}
    assert "minime[nvim]" in extras["dev"], "the tests drive the host: dev includes nvim"


def test_the_host_leaves_a_shared_python_process_alone() -> None:
    """What the rplugin route constructs: a Host, in a process that is not ours."""
    report = fresh_python(
        "import json, logging, os\n"
        "import nvim_harness\n"
        "from minime.nvim.host import Host\n"
        "root = logging.getLogger()\n"
        "before = (list(root.handlers), root.level, dict(os.environ))\n"
        "with nvim_harness.start() as nvim:\n"
        "    host = Host(nvim)\n"
        "    try:\n"
        "        logging.getLogger('minime.session').info('a record of ours')\n"
        "        after = (list(root.handlers), root.level, dict(os.environ))\n"
        "        ours = list(host.log_lines)\n"
        "    finally:\n"
        "        host.shutdown()\n"
        "print(json.dumps({'root_same': before[:2] == after[:2],\n"
        "                  'environ_same': before[2] == after[2], 'ours': ours}))\n"
    )
    assert report["root_same"], "the root logger's handlers and level are the other plugins'"
    assert report["environ_same"], "os.environ is shared with the other plugins"
    assert any(line.endswith("info: a record of ours") for line in report["ours"])


def test_python_m_minime_is_no_neovim_program() -> None:
    """The host is `python -m minime.nvim`; the library has no `__main__` of its own."""
    assert not (REPO / "rplugin" / "python3" / "minime" / "__main__.py").exists()
    assert (REPO / "rplugin" / "python3" / "minime" / "nvim" / "__main__.py").exists()
