"""The screen as a terminal shows it: the test's pynvim session attached as a UI (``ext_linegrid``,
RGB), the ``redraw`` events applied to a grid of cells, each with its highlight's attributes.

Neovim composes floats, the panel, the statusline and the messages into grid 1 for such a UI,
exactly what a terminal draws. ``Screen.wait(predicate)`` runs pynvim's loop until a flush leaves
a screen the predicate accepts (or fails at its deadline); ``rows()`` is the text, ``cell()`` a
cell's text and attributes. tests/screen_svg.py renders it; tests/scenes.py makes the README's
pictures with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Cell:
    text: str = " "
    hl: int = 0  # an id of ``Screen.attrs``; 0 the default colours


@dataclass
class Screen:
    """What a UI of ``width`` x ``height`` attached to ``nvim`` is shown."""

    nvim: Any
    width: int
    height: int
    cells: list[list[Cell]] = field(default_factory=list)
    attrs: dict[int, dict[str, Any]] = field(default_factory=dict)
    default_fg: int = 0x000000
    default_bg: int = 0xFFFFFF
    flushes: int = 0
    mode_info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def attach(cls, nvim: Any, width: int, height: int) -> Screen:
        screen = cls(nvim, width, height)
        screen._resize(width, height)
        nvim.api.ui_attach(width, height, {"ext_linegrid": True, "rgb": True})
        return screen

    def _resize(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.cells = [[Cell() for _ in range(width)] for _ in range(height)]

    # --- the redraw events (:h ui-linegrid)

    def apply(self, batch: list[Any]) -> bool:
        """One ``redraw`` notification; whether it ended with a flush."""
        flushed = False
        for name, *calls in batch:
            handler = getattr(self, "_" + name, None)
            for args in calls:
                if handler is not None:
                    handler(*args)
            if name == "flush":
                self.flushes += 1
                flushed = True
        return flushed

    def _default_colors_set(self, fg: int, bg: int, *_: Any) -> None:
        self.default_fg = fg if fg >= 0 else self.default_fg
        self.default_bg = bg if bg >= 0 else self.default_bg

    def _hl_attr_define(self, hl: int, rgb: dict[str, Any], *_: Any) -> None:
        self.attrs[hl] = rgb

    def _grid_resize(self, grid: int, width: int, height: int) -> None:
        if grid == 1:
            self._resize(width, height)

    def _grid_clear(self, grid: int) -> None:
        if grid == 1:
            self._resize(self.width, self.height)

    def _grid_line(self, grid: int, row: int, col: int, data: list[Any], *_: Any) -> None:
        if grid != 1 or row >= self.height:
            return
        hl = 0
        for item in data:
            text = item[0]
            if len(item) > 1:
                hl = item[1]
            repeat = item[2] if len(item) > 2 else 1
            for _ in range(repeat):
                if col < self.width:
                    self.cells[row][col] = Cell(text, hl)
                col += 1

    def _grid_scroll(
        self, grid: int, top: int, bot: int, left: int, right: int, rows: int, *_: Any
    ) -> None:
        if grid != 1:
            return
        span = range(top, bot - rows) if rows > 0 else range(bot - 1, top - rows - 1, -1)
        for row in span:
            self.cells[row][left:right] = self.cells[row + rows][left:right]

    # --- reading it

    def rows(self) -> list[str]:
        """Each row's text (a wide character's second cell is empty, so it reads as typed)."""
        return ["".join(c.text for c in row).rstrip() for row in self.cells]

    def text(self) -> str:
        return "\n".join(self.rows())

    def attr(self, hl: int) -> dict[str, Any]:
        return self.attrs.get(hl, {}) if hl else {}

    def wait(self, predicate: Callable[[Screen], bool], timeout: float = 20.0) -> None:
        """Apply redraws until one ends in a flush that leaves a screen ``predicate`` accepts;
        the screen is checked at once too (it may be there already)."""
        self.drain()
        if self.flushes and predicate(self):
            return
        nvim = self.nvim
        met: list[bool] = []

        def on_notification(name: str, args: list[Any]) -> None:
            if name == "redraw" and self.apply(args) and predicate(self):
                met.append(True)
                nvim.stop_loop()

        def on_request(name: str, args: list[Any]) -> Any:
            raise RuntimeError(f"unexpected request {name}")

        timer = nvim.loop.call_later(timeout, nvim.stop_loop)
        try:
            nvim.run_loop(on_request, on_notification)
        finally:
            timer.cancel()
        if not met:
            raise AssertionError(f"timed out after {timeout}s; the screen:\n{self.text()}")

    def drain(self) -> None:
        """Apply every redraw Neovim sent before the last answer the test read: after a
        synchronous call (``nvim.command("redraw!")``), the screen as that call left it."""
        nvim = self.nvim

        def on_notification(name: str, args: list[Any]) -> None:
            if name == "redraw":
                self.apply(args)

        nvim.loop.call_soon(nvim.stop_loop)  # once the pending messages are handled
        nvim.run_loop(lambda name, args: None, on_notification)

    def showing(self, needle: str, timeout: float = 20.0) -> None:
        """Wait until ``needle`` is on screen."""
        self.wait(lambda s: needle in s.text(), timeout)
