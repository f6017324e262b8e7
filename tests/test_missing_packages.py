"""Installed by hand, without :MiniMeInstall (issue 17): a Python that lacks minime's packages
(here a venv with none of them, named by `python = ...`). An ask and :checkhealth say to run
:MiniMeInstall, naming the Python and what it lacks, and only that: no traceback line, and no
blame on the agent file or the live check. A real headless Neovim."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_harness import Editor, editor


@pytest.fixture
def bare(tmp_path: Path) -> Iterator[Editor]:
    """An editor whose host Python is a venv without pynvim, the ACP SDK, msgspec, PyYAML."""
    venv = tmp_path / "bare-venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    python = venv / "bin" / "python"
    lacks = subprocess.run([str(python), "-c", "import pynvim"], capture_output=True, timeout=30)
    assert lacks.returncode != 0, "the bare venv must lack pynvim"
    with editor(tmp_path, python=str(python)) as ed:
        ed.python = str(python)  # type: ignore[attr-defined]
        yield ed


def test_an_ask_says_run_minime_install_naming_the_python_and_pynvim(bare: Editor) -> None:
    bare.nvim.command("MiniMeAsk hello")
    note = bare.wait_note("MiniMeInstall")
    assert "\n" not in note, note
    assert "pynvim" in note and bare.python in note, note  # type: ignore[attr-defined]
    assert "ModuleNotFoundError" not in note and "exit 1" not in note, note
    assert [n for n in bare.notes() if n != note] == [], bare.notes()


def test_checkhealth_names_the_missing_packages_and_blames_nothing_else(bare: Editor) -> None:
    bare.nvim.command("checkhealth minime")
    report = "\n".join(bare.nvim.current.buffer[:])
    errors = [line for line in report.splitlines() if "ERROR" in line]
    assert errors, report
    assert all(bare.python in line or "venv" in line for line in errors), errors  # type: ignore[attr-defined]
    assert ":MiniMeInstall" in report
    for name in ("pynvim", "msgspec", "pyyaml", "agent-client-protocol"):
        assert name in errors[0], errors
    assert len(errors) == 1, "one error: the packages the Python lacks"
    assert "live check" not in report and "agent file" not in report.split("minime: agent")[1]


def test_a_traceback_line_split_across_stderr_chunks_is_read_whole(tmp_path: Path) -> None:
    """A job's stderr comes in chunks that split lines anywhere: the line that names the
    missing package is read whole (it was read as two, "ModuleNotFound" and "Error: No
    module named ...", and the ask said "the Python host stopped" instead — a race that failed
    the test above about once in three runs)."""
    python = tmp_path / "python-split"
    python.write_text(
        "#!/bin/sh\n"
        "printf 'Traceback (most recent call last):\\nModuleNotFound' >&2\n"
        "sleep 0.3\n"
        "printf \"Error: No module named 'pynvim.api'\\n\" >&2\n"
        "exit 1\n"
    )
    python.chmod(0o755)
    with editor(tmp_path, python=str(python)) as ed:
        ed.nvim.command("MiniMeAsk hello")
        note = ed.wait_note("MiniMeInstall")
        assert note == f"minime: {python} lacks the Python package pynvim: run :MiniMeInstall"
        stderr = ed.lua("return require('minime.host').stderr")
        assert stderr[-1] == "ModuleNotFoundError: No module named 'pynvim.api'", stderr
