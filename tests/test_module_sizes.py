"""Small modules with one job: no Python module under rplugin/ and no Lua module under lua/ is
longer than 400 lines (style.md). A module that grows past it wants splitting by job, not an
entry below."""

from __future__ import annotations

from pathlib import Path

from nvim_harness import REPO

LIMIT = 400

# A module allowed over the limit for a while (say why next to it); empty since issue 19.
KNOWN_EXCEPTIONS: set[str] = set()


def modules() -> list[Path]:
    return sorted([*(REPO / "rplugin").rglob("*.py"), *(REPO / "lua").rglob("*.lua")])


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_longer_than_the_limit() -> None:
    found = modules()
    assert len(found) > 50, found  # the walk found the tree, not an empty directory
    too_long = {
        str(path.relative_to(REPO)): n
        for path in found
        if (n := lines_of(path)) > LIMIT and str(path.relative_to(REPO)) not in KNOWN_EXCEPTIONS
    }
    assert too_long == {}, f"over {LIMIT} lines: split each by job ({too_long})"


def test_every_known_exception_names_a_module_that_exists() -> None:
    # A stale entry would hide the next module of that name growing past the limit.
    missing = [name for name in KNOWN_EXCEPTIONS if not (REPO / name).is_file()]
    assert missing == []
