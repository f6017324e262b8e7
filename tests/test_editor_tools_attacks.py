"""What an adversarial agent tried against the editor tools, through the whole stack (fake mm →
library → host → Lua → back; and over MCP: tests/agents/mcp_agent.py → bridge → host → Lua):
private keys and credentials by every name and from every working directory, paths leaked
through quickfix titles, and files that freeze a reader (a FIFO, a 3 GiB file) in the place of
a listed buffer.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.plugin_tools import open_editor
from helpers.watchdog import Watchdog, unblock_fifo
from plugin_harness import Editor

MCP_AGENT = Path(__file__).with_name("agents") / "mcp_agent.py"


@pytest.fixture(params=["client", "mcp"])
def path(request: Any) -> str:
    """Each attack runs over both paths the tools reach an agent by: mm's client tools (the
    fake mm) and MCP (an agent that is an MCP client of the editor's server)."""
    return request.param


def attack_editor(project: Path, path: str) -> Any:
    """A Neovim whose agent reads the tools over ``path`` (its /tool scripts alike)."""
    if path == "mcp":
        return open_editor(project, "request", agent={"cmd": [sys.executable, str(MCP_AGENT)]})
    return open_editor(project, "request")


SECRET = "SECRET_CONTENT"

# Every default deny pattern -> the files it must deny, relative to a home used as the cwd:
# the bare name, with and without an extension, upper case, in a subdirectory.
DENIED: dict[str, list[str]] = {
    ".env": [".env", "sub/.env", ".ENV"],
    ".env.*": [".env.local", "sub/.env.production"],
    "*.env": ["prod.env", "sub/x.env"],
    ".envrc": [".envrc", "sub/.envrc"],
    "*.pem": ["server.pem", "sub/ca.PEM"],
    "*.key": ["server.key", "sub/tls.key"],
    "*.p12": ["cert.p12"],
    "*.pfx": ["cert.pfx"],
    "*.jks": ["store.jks"],
    "*.keystore": ["release.keystore"],
    "*.kdbx": ["passwords.kdbx"],
    "*.ppk": ["putty.ppk", "sub/deploy.PPK"],
    "*.asc": ["private.asc", "sub/key.asc"],
    "secring.*": ["secring.gpg", "sub/secring.skr"],
    "id_rsa*": ["id_rsa", "id_rsa.pub", "ID_RSA", "sub/id_rsa", "id_rsa_work"],
    "id_dsa*": ["id_dsa", "id_dsa.pub", "sub/id_dsa"],
    "id_ecdsa*": ["id_ecdsa", "id_ecdsa.pub", "sub/id_ecdsa_sk"],
    "id_ed25519*": ["id_ed25519", "id_ed25519.pub", "sub/ID_ED25519"],
    ".netrc": [".netrc", "sub/.netrc"],
    ".pgpass": [".pgpass"],
    ".npmrc": [".npmrc", "sub/.npmrc"],
    ".pypirc": [".pypirc"],
    ".git-credentials": [".git-credentials"],
    ".htpasswd": [".htpasswd", "sub/.htpasswd"],
    ".vault-token": [".vault-token"],
    "credentials": ["credentials", "sub/credentials"],
    "credentials.json": ["credentials.json"],
    "secrets.y*ml": ["secrets.yml", "secrets.yaml", "sub/secrets.yml"],
    "*.secret": ["db.secret"],
    "*.tfvars": ["prod.tfvars"],
    "*.tfstate": ["terraform.tfstate"],
    ".boto": [".boto"],
    ".s3cfg": [".s3cfg", "sub/.s3cfg"],
    ".terraformrc": [".terraformrc"],
    "kubeconfig": ["kubeconfig", "sub/KUBECONFIG"],
    "*.ovpn": ["office.ovpn"],
    "rclone.conf": ["rclone.conf", ".config/rclone/rclone.conf"],
    "application_default_credentials.json": [".config/gcloud/application_default_credentials.json"],
    "service-account*.json": ["service-account.json", "sub/service-account-prod.json"],
    ".authinfo": [".authinfo"],
    ".authinfo.*": [".authinfo.gpg"],
    ".yarnrc.yml": [".yarnrc.yml"],
    ".my.cnf": [".my.cnf"],
    "auth.json": ["auth.json", ".config/composer/auth.json"],
    "**/.azure/accessTokens.json": [".azure/accessTokens.json"],
    "**/.azure/msal_token_cache.*": [".azure/msal_token_cache.json"],
    "**/.cargo/credentials.toml": [".cargo/credentials.toml"],
    "**/.m2/settings.xml": [".m2/settings.xml"],
    "**/.gradle/gradle.properties": [".gradle/gradle.properties"],
    ".*history": [".bash_history", ".zsh_history", ".python_history", ".zhistory", ".history"],
    ".histfile": [".histfile"],
    "**/.git/config": [".git/config", "sub/.git/config"],
    "**/.ssh/**": [".ssh/config", ".ssh/known_hosts", ".ssh/authorized_keys", ".ssh/id_rsa"],
    "**/.gnupg/**": [".gnupg/pubring.kbx", ".gnupg/gpg.conf"],
    "**/.aws/**": [".aws/config", ".aws/sso/cache.json"],
    "**/.docker/config.json": [".docker/config.json"],
    "**/.kube/config": [".kube/config"],
    "**/.config/gh/hosts.y*ml": [".config/gh/hosts.yml", ".config/gh/hosts.yaml"],
}

# Files no pattern denies: the deny list must not swallow ordinary files.
ALLOWED = [
    *["main.py", "sub/config", "keys.txt", "environment.py", "history.txt", "gh.yml"],
    *["settings.xml", "gradle.properties", ".yarnrc", "package.json"],
]

# Working directories inside a denied directory: what is denied there, named from inside.
INSIDE: dict[str, list[str]] = {
    ".ssh": ["config", "known_hosts", "authorized_keys", "id_rsa"],
    ".gnupg": ["pubring.kbx", "gpg.conf"],
    ".aws": ["config", "sso/cache.json"],
    ".kube": ["config"],
    ".docker": ["config.json"],
    ".git": ["config"],
    ".config/gh": ["hosts.yml", "hosts.yaml"],
    ".azure": ["accessTokens.json", "msal_token_cache.json"],
    ".cargo": ["credentials.toml"],
    ".m2": ["settings.xml"],
    ".gradle": ["gradle.properties"],
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    for rel in [*(p for paths in DENIED.values() for p in paths), *ALLOWED]:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{SECRET} {rel}\n" if rel not in ALLOWED else f"fine {rel}\n")
    return root


@pytest.fixture
def ed(home: Path, path: str) -> Iterator[Editor]:
    with attack_editor(home, path) as nvim:
        nvim.command(f"cd {home}")
        yield Editor(nvim, home)


def reads(ed: Editor, cwd: Path, script: list[str], timeout: float = 60.0) -> list[str]:
    """Run `script` (one /tool line each) as one ask in `cwd`: what the model read, in order."""
    count = len(ed.done()) + 1
    ed.nvim.command(f"cd {cwd}")
    ed.lua("require('minime').ask(...)", "\n".join(script))
    done = ed.wait_done(count, timeout)
    assert done["stop_reason"] == "end_turn", done
    lines = ed.turn_lines(os.path.realpath(cwd))
    return [x.split(" -> ", 1)[1] for x in lines if x.startswith("client_")]


def read_line(path: str) -> str:
    return "/tool read_buffer " + json.dumps({"path": path})


def test_every_default_deny_pattern_holds_by_every_name_and_from_inside(
    ed: Editor, home: Path
) -> None:
    defaults = ed.lua("return require('minime.editor.scope').DEFAULT_DENY")
    assert sorted(DENIED) == sorted(defaults), "each default pattern has its row here"
    for rel in [*(p for paths in DENIED.values() for p in paths), *ALLOWED]:
        ed.nvim.command(f"badd {home / rel}")

    cases = 0
    denied = [p for paths in DENIED.values() for p in paths]
    got = reads(ed, home, ["/tool open_buffers", *map(read_line, denied + ALLOWED)])
    listed = [b["path"] for b in json.loads(got[0])["buffers"]]
    assert sorted(listed) == sorted(ALLOWED)
    for path, answer in zip(denied + ALLOWED, got[1:], strict=True):
        if path in ALLOWED:
            assert json.loads(answer)["text"] == f"fine {path}"
        else:
            assert answer.startswith("[client tool error: path is not a file open"), (path, answer)
            cases += 1
    everything = "\n".join(got)

    # The cwd inside ~/.ssh, ~/.kube...: the relative path no longer holds the directory.
    for inside, names in INSIDE.items():
        got = reads(ed, home / inside, ["/tool open_buffers", *map(read_line, names)])
        assert json.loads(got[0])["buffers"] == [], (inside, got[0])
        for name, answer in zip(names, got[1:], strict=True):
            assert answer.startswith("[client tool error: path is not a file open"), (name, answer)
            cases += 1
        everything += "\n".join(got)
    assert SECRET not in everything
    assert cases == len(denied) + sum(map(len, INSIDE.values()))


def test_quickfix_title_names_no_outside_path_in_any_spelling(tmp_path: Path, path: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "inside.txt").write_text("x\n")
    outside = tmp_path / "elsewhere_xyz"
    outside.mkdir()
    spellings = [
        str(outside),
        f"{outside}/a.txt",
        "~/a.txt",
        "~",
        "$HOME/a.txt",
        "${HOME}/a.txt",
        "$OUTSIDE_DIR/a.txt",
        "${OUTSIDE_DIR}/a.txt",
        "--include=$OUTSIDE_DIR",
        "$UNSET_VAR_XYZ/a.txt",
        "${UNSET_VAR_XYZ:-/etc}/passwd",
        "~root/.bashrc",
        "$(cat /etc/passwd)",
        "../elsewhere_xyz",
    ]
    with attack_editor(project, path) as nvim:
        nvim.command(f"cd {project}")
        ed = Editor(nvim, project)
        ed.lua("vim.env.OUTSIDE_DIR = ...", str(outside))
        ed.lua("vim.env.HOME = ...", str(tmp_path / "home_xyz"))
        title = ":grep foo " + " ".join(spellings) + " inside.txt $PWD/inside.txt"
        ed.lua("vim.env.PWD = ...", str(project))
        ed.lua("vim.fn.setqflist({}, 'r', { title = ... })", title)
        got = reads(ed, project, ["/tool quickfix"])
    answer = json.loads(got[0])
    words = len(" ".join(spellings).split())  # "$(cat /etc/passwd)" is two words
    assert answer["title"] == ":grep foo " + " ".join(["[outside]"] * words) + (
        " inside.txt $PWD/inside.txt"
    )
    assert "elsewhere_xyz" not in got[0] and "home_xyz" not in got[0]


def warm_up(ed: Editor) -> None:
    """One turn first: the agent's start-up is not what a deadline below measures."""
    ed.lua("require('minime').ask(...)", "/say ready")
    ed.wait_done(1)


def probe_while_running(ed: Editor, count: int, limit: float) -> float:
    """Until turn `count` ends, ask Neovim `1` over and over: the slowest answer, in seconds."""
    slowest = 0.0
    deadline = time.monotonic() + 60
    while True:
        start = time.monotonic()
        assert ed.nvim.eval("1") == 1
        finished = len(ed.done()) >= count
        slowest = max(slowest, time.monotonic() - start)
        if finished or slowest > limit or time.monotonic() > deadline:
            return slowest


def test_a_fifo_in_place_of_a_buffer_freezes_nothing(tmp_path: Path, path: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.py").write_text("print(1)\n")
    pipe = project / "pipe.txt"
    pipe.write_text("was a file\n")
    with attack_editor(project, path) as nvim:
        nvim.command(f"cd {project}")
        nvim.command("edit main.py | badd pipe.txt")
        pipe.unlink()
        os.mkfifo(pipe)  # what an agent can do with `rm x; mkfifo x`

        ed = Editor(nvim, project)
        warm_up(ed)
        dog = Watchdog(5.0, lambda: unblock_fifo(pipe))
        ed.lua(
            "require('minime').ask(...)",
            '/tool read_buffer {"path": "pipe.txt"}\n/tool open_buffers',
        )
        slowest = probe_while_running(ed, 2, 2.0)
        dog.stop()
        assert not dog.fired, "Neovim froze on the FIFO"
        assert slowest < 2.0
        ed.wait_done(2)
        got = [x.split(" -> ", 1)[1] for x in ed.turn_lines() if x.startswith("client_")]
    assert got[0] == (
        "[client tool error: pipe.txt cannot be read: not a regular file (a fifo) on disk]"
    )
    by_path = {b["path"]: b["lines"] for b in json.loads(got[1])["buffers"]}
    assert by_path == {"main.py": 1, "pipe.txt": None}


def test_a_huge_file_not_loaded_is_refused_at_once(tmp_path: Path, path: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    big = project / "big.log"
    with open(big, "wb") as f:
        f.truncate(3 * 1024**3)  # sparse: 3 GiB of NUL bytes that cost no disk
    with attack_editor(project, path) as nvim:
        nvim.command(f"cd {project}")
        nvim.command("badd big.log")
        ed = Editor(nvim, project)
        warm_up(ed)
        ed.lua(
            "require('minime').ask(...)",
            '/tool read_buffer {"path": "big.log"}\n/tool open_buffers',
        )
        slowest = probe_while_running(ed, 2, 2.0)
        assert slowest < 2.0, f"Neovim answered a probe only after {slowest:.1f} s"
        ed.wait_done(2)
        got = [x.split(" -> ", 1)[1] for x in ed.turn_lines() if x.startswith("client_")]
    assert got[0] == (
        "[client tool error: big.log cannot be read: not loaded in the editor and too large to"
        f" read beyond {64 * 1024 * 1024} bytes]"
    )
    assert json.loads(got[1])["buffers"][0]["lines"] is None
