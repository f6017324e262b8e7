"""The README's pictures (doc/pictures/*.svg) are current: each scene of tests/scenes.py, run
again for real, renders to the committed file byte for byte. After an intended change to what
a scene shows, run ``./scripts/pictures`` and commit the new files (look at them first)."""

from __future__ import annotations

import difflib
import re

import pytest
import scenes


def screen_text(svg: str) -> list[str]:
    """The picture's text runs, one a line, for a readable diff."""
    return re.findall(r"<text [^>]*>([^<]*)</text>", svg)


@pytest.mark.parametrize("name", list(scenes.SCENES))
def test_the_committed_picture_is_current(name: str) -> None:
    path = scenes.PICTURES / f"{name}.svg"
    assert path.exists(), f"{path} is missing: run ./scripts/pictures {name} and commit it"
    now, committed = scenes.picture(name), path.read_text(encoding="utf-8")
    if now != committed:
        diff = "\n".join(
            difflib.unified_diff(screen_text(committed), screen_text(now), "committed", "now", n=1)
        )
        pytest.fail(f"{path.name} is stale: run ./scripts/pictures {name} (text diff:)\n{diff}")


def test_every_picture_has_its_scene() -> None:
    """A picture left behind by a scene removed or renamed would never be checked again."""
    found = sorted(p.stem for p in scenes.PICTURES.glob("*.svg"))
    assert found == sorted(scenes.SCENES)
