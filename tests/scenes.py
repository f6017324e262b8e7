"""The README's pictures (doc/pictures/<scene>.svg), each a scene of a real run: a headless
Neovim with the plugin and the fake mm, this session attached as its UI, the screen rendered
to SVG (tests/screen_svg.py). ``scripts/pictures`` writes them; tests/test_pictures.py makes
them again and fails when one differs from the committed file.

A scene is one function in SCENES: it gets a ``Stage`` (the editor in ``~/project``, a copy of
demo/project/ in a git repository, greet.py open, the screen attached) and brings the editor
to the moment the picture shows; ``Stage.still()`` is that moment. Adding a picture is adding a
function. What would change from run to run is held still: HOME (the title's ``~/project``),
the spinner's frame, the permission float's key delay; a turn is held mid-way by a script line
that waits for a file.

    python tests/scenes.py [NAME...]       # write doc/pictures/NAME.svg (all: no NAME)
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from nvim_harness import REPO, start, wait_for
from plugin_harness import FAKE_MM_BIN, init
from screen_grid import Screen
from screen_svg import render

PICTURES = REPO / "doc" / "pictures"
SIZE = (110, 30)

# Before setup(): a still spinner, the default colours, a statusline with the plugin's piece
# (no ruler: in the command line, it showed or not as the last message left it).
BEFORE = """
require('minime.status').frames = { '⠋' }
vim.o.shortmess = vim.o.shortmess .. 'I'
vim.o.ruler = false
vim.o.statusline = "%f %m%=%{%v:lua.require'minime'.statusline()%} "
"""


@dataclass
class Stage:
    nvim: Any
    screen: Screen
    project: Path
    turns: int = 0  # asks made, each a turn whose baseline allow() waits for

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def ask(self, script: str) -> None:
        self.lua("require('minime').ask(...)", script)
        self.turns += 1

    def allow(self) -> None:
        """Answer the permission prompt as a user does: go to it, press 1 (once the turn's
        baseline is taken: a person reads the prompt for longer than that)."""
        # Keyed by thread: the prompt that asks is the newest turn's, so every turn's counts.
        baseline = (
            "local n = 0 for _, c in pairs(require('minime.review.baseline').snapshots) do"
            " n = n + c end return n"
        )
        wait_for(lambda: self.lua(baseline) >= self.turns, 20, message="for the turn's baseline")
        win = wait_for(lambda: self.lua("return require('minime.ui.permission').win()"), 20)
        wait_for(lambda: self.lua("return require('minime.ui.permission').live()"), 10)
        code = self.lua("return vim.api.nvim_get_current_win()")
        self.lua("vim.api.nvim_set_current_win(...)", win)
        self.nvim.input("1")
        wait_for(lambda: self.lua("return require('minime.ui.permission').win()") != win, 10)
        self.lua("vim.api.nvim_set_current_win(...)", code)

    def still(self) -> Screen:
        """The screen once nothing is left to draw: markdown's marks placed, then redrawn."""
        pending = (
            "local n = 0 local md = require('minime.ui.turn.markdown')"
            " for _, b in ipairs(vim.api.nvim_list_bufs()) do"
            " n = n + #vim.api.nvim_buf_get_extmarks(b, md.ns_pending, 0, -1, {}) end return n"
        )
        wait_for(lambda: self.lua(pending) == 0, 20, message="for the markdown marks")
        self.nvim.command("redraw!")
        self.screen.drain()
        return self.screen


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@contextlib.contextmanager
def stage(yolo: bool, script: str | None) -> Iterator[Stage]:
    with tempfile.TemporaryDirectory(prefix="minime-scene-") as tmp:
        home = Path(tmp) / "home"
        project = home / "project"
        shutil.copytree(REPO / "demo" / "project", project)
        (project / ".minime-demo").unlink()
        agent: dict[str, Any] = {"yolo": yolo, "acp": {"clientTools": {"discovery": "request"}}}
        if script:
            agent["fake"] = {"plain_script": script}
        (home / "agent.yaml").write_text(yaml.safe_dump(agent))
        git(project, "init", "-q")
        git(project, "add", "-A")
        git(project, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "p")
        opts = {
            "mm": FAKE_MM_BIN,
            "config": str(home / "agent.yaml"),
            "window": {"layout": "split"},
            "permission": {"key_delay": 0},
        }
        with start(init(opts, BEFORE), env={"HOME": str(home)}) as nvim:
            nvim.command(f"cd {project} | edit greet.py")
            screen = Screen.attach(nvim, *SIZE)
            yield Stage(nvim, screen, project)


PROMPT = "Let greet() take the greeting as an argument"
NEW_GREET = (
    '"""The demo project\'s one function: say hello."""\\n\\n\\n'
    'def greet(name, greeting="Hello"):\\n    return f"{greeting}, {name}!"\\n\\n\\n'
    'if __name__ == "__main__":\\n    print(greet("world", "Bonjour"))'
)
STREAMING = """/think The user wants a greeting argument, with Hello by default.
/plan
/bash python -m pytest -q
/say `greet()` now takes the greeting as a second argument, **Hello** by default:
/say ```python
/say >>> greet("world", "Bonjour")
/say 'Bonjour, world!'
/say ```
/say Next I update the tests.
/locate-wait never.txt greet.py:4"""


def panel(s: Stage) -> None:
    """The conversation in the side panel, a turn streaming (held before its end)."""
    s.ask(PROMPT)
    s.screen.showing("Read greet.py")


def permission(s: Stage) -> None:
    """A permission prompt beside the code: the agent's options, numbered, the diff."""
    s.ask(PROMPT)
    s.screen.showing("Always allow")


def review(s: Stage) -> None:
    """:MiniMeReview after a turn: the hunks inline in the file, in the quickfix list."""
    s.ask(PROMPT)
    s.allow()
    s.screen.showing("done")
    s.nvim.command("MiniMeReview")
    s.screen.showing('+ def greet(name, greeting="Hello"):')  # the first hunk, shown inline
    s.nvim.command("botright copen 5 | wincmd p")
    s.screen.showing("+2 -2")


TESTS_RUN = """/bash python -m pytest -q
/say The tests pass; now the docstring.
/locate-wait never.txt greet.py:1"""


def threads(s: Stage) -> None:
    """:MiniMeThreads: two threads of one cwd, one running, one waiting for permission."""
    s.lua("require('minime.ui.threads').ago = function() return 'now' end")  # held still
    s.ask(PROMPT)
    s.allow()  # its command allowed, it runs on (held at its last line)
    s.screen.showing("The tests pass")
    s.nvim.command("MiniMeNew")
    # :MiniMeNew opens its session at once; asked before that, the conversation would say
    # "starting the agent…" or not by a race, and the picture move by two lines.
    opened = "local t = require('minime.threads') return t.get(t.current()).session_id ~= nil"
    wait_for(lambda: s.lua(opened), 20, message="for the new thread's session")
    s.ask("Add a test for greet() with a greeting")
    s.screen.showing("Always allow")  # the second waits for permission
    s.nvim.command("MiniMeThreads")
    s.screen.showing("waits: permission")


SCENES: dict[str, tuple[Callable[[Stage], None], bool, str]] = {
    # name: (the scene, yolo: the agent runs its tools without asking, what the agent plays)
    "panel": (panel, True, STREAMING),
    "permission": (permission, False, f"/ask-write greet.py {NEW_GREET}"),
    "review": (review, True, f"/shell-write greet.py {NEW_GREET}\n/say Done."),
    "threads": (threads, False, TESTS_RUN),
}


def picture(name: str) -> str:
    """The scene ``name`` as SVG text."""
    scene, yolo, script = SCENES[name]
    with stage(yolo, script) as s:
        scene(s)
        return render(s.still(), f"minime.nvim: {scene.__doc__ or name}")


def main(names: list[str]) -> int:
    PICTURES.mkdir(parents=True, exist_ok=True)
    for name in names or list(SCENES):
        (PICTURES / f"{name}.svg").write_text(picture(name), encoding="utf-8")
        print(f"wrote {PICTURES / name}.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
