"""Real system clipboards for the image paste tests: a private X server (Xvfb) read and owned
with xclip, and a private Wayland compositor (sway on wlroots' headless backend) read and
owned with wl-clipboard. Each is a :class:`Clipboard`: the environment a child Neovim needs to
reach it, and ``hold(data, mime)`` to put an image (or text) on it as a real owner would."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from nvim_harness import wait_for

# The environment variables a clipboard tool reads; a test clears them all, then sets its own.
VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR")


@dataclass
class Clipboard:
    """One running clipboard: ``env`` reaches it, ``hold`` owns it while its block runs."""

    name: str
    env: dict[str, str]
    hold: Callable[[bytes, str], contextlib.AbstractContextManager[None]]


def has_x11() -> bool:
    return bool(shutil.which("Xvfb") and shutil.which("xclip"))


def has_wayland() -> bool:
    return bool(shutil.which("sway") and shutil.which("wl-copy") and shutil.which("wl-paste"))


def _read_until_newline(fd: int, what: str) -> str:
    out = b""
    while not out.endswith(b"\n"):
        chunk = os.read(fd, 64)
        assert chunk, f"{what} ended before it said it was ready"
        out += chunk
    return out.decode().strip()


def _offers(argv: list[str], env: dict[str, str], mime: str) -> bool:
    listed = subprocess.run(argv, env=env, capture_output=True, timeout=5, check=False)
    return mime.encode() in listed.stdout


@contextlib.contextmanager
def x11() -> Iterator[Clipboard]:
    """Xvfb on a display of its choosing; xclip owns the clipboard in the foreground."""
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-nolisten", "tcp", "-screen", "0", "320x240x24"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        env = {"DISPLAY": ":" + _read_until_newline(read, "Xvfb")}

        @contextlib.contextmanager
        def hold(data: bytes, mime: str) -> Iterator[None]:
            child_env = {**os.environ, **env}
            owners: list[subprocess.Popen[bytes]] = []

            def own() -> None:
                owner = subprocess.Popen(
                    ["xclip", "-quiet", "-selection", "clipboard", "-t", mime, "-i"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    env=child_env,
                )
                assert owner.stdin is not None
                owner.stdin.write(data)
                owner.stdin.close()
                owners.append(owner)

            def offered() -> bool:
                if owners[-1].poll() is not None:  # xclip lost the selection or never got it
                    own()
                return _offers(targets, child_env, mime)

            targets = ["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"]
            own()
            try:
                wait_for(offered, 10, message="xclip's offer")
                yield
            finally:
                for owner in owners:
                    owner.kill()
                    owner.wait()
                    if owner.stderr:
                        owner.stderr.close()

        yield Clipboard("x11", env, hold)
    finally:
        os.close(read)
        server.kill()
        server.wait()


def _as_nobody() -> list[str]:
    """sway refuses to run as root: as root (CI, these machines), it runs as nobody."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@contextlib.contextmanager
def wayland() -> Iterator[Clipboard]:
    """sway on wlroots' headless backend (no GPU, no input device, no Xwayland) in a private
    runtime directory; wl-copy owns the clipboard (it serves it from a child it forks, which
    ends with the compositor)."""
    runtime = Path(tempfile.mkdtemp(prefix="minime-wayland-"))
    runtime.chmod(0o700)
    config = runtime / "sway.conf"
    config.write_text("xwayland disable\n")
    if os.geteuid() == 0:
        os.chown(runtime, 65534, 65534)
    server_env = {
        **os.environ,
        "XDG_RUNTIME_DIR": str(runtime),
        "HOME": str(runtime),
        "WLR_BACKENDS": "headless",
        "WLR_LIBINPUT_NO_DEVICES": "1",
        "WLR_RENDERER": "pixman",
    }
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        server_env.pop(name, None)
    server = subprocess.Popen(
        [*_as_nobody(), "sway", "-c", str(config)],
        env=server_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        socket = wait_for(
            lambda: next((p.name for p in runtime.glob("wayland-*") if p.is_socket()), None),
            10,
            message="sway's socket",
        )
        # The socket's absolute path: the test Neovim has a runtime directory of its own.
        env = {"WAYLAND_DISPLAY": str(runtime / socket)}

        @contextlib.contextmanager
        def hold(data: bytes, mime: str) -> Iterator[None]:
            child_env = {k: v for k, v in os.environ.items() if k != "DISPLAY"} | env
            subprocess.run(
                ["wl-copy", "--type", mime], input=data, env=child_env, check=True, timeout=10
            )
            try:
                listing = ["wl-paste", "--list-types"]
                wait_for(lambda: _offers(listing, child_env, mime), 10, message="wl-copy's offer")
                yield
            finally:
                subprocess.run(["wl-copy", "--clear"], env=child_env, check=False, timeout=10)

        yield Clipboard("wayland", env, hold)
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(runtime, ignore_errors=True)


__all__ = ["VARIABLES", "Clipboard", "has_wayland", "has_x11", "wayland", "x11"]
