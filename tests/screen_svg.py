"""A screen (tests/screen_grid.py) as an SVG picture: each cell where a terminal would draw it, in
the colours and attributes Neovim sent (RGB), so the README shows what a user sees.

One ``<rect>`` per run of cells with the same background, one ``<text>`` per run with the same
attributes, stretched to exactly its cells (``textLength``): a font whose glyphs are wider or
narrower than the cell (box drawing, braille, emoji) never shifts the columns after it. The
output depends only on the screen: the same screen gives the same bytes.
"""

from __future__ import annotations

from html import escape
from typing import Any

from screen_grid import Screen

CELL_W, CELL_H, FONT = 8.4, 17, 14
FAMILY = "ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace"


def hexcolor(value: int) -> str:
    return f"#{value:06x}"


def colours(screen: Screen, hl: int) -> tuple[str, str, dict[str, Any]]:
    """A cell's foreground, background (after ``reverse``) and its attributes."""
    attr = screen.attr(hl)
    fg = attr.get("foreground", screen.default_fg)
    bg = attr.get("background", screen.default_bg)
    if attr.get("reverse"):
        fg, bg = bg, fg
    return hexcolor(fg), hexcolor(bg), attr


def runs(screen: Screen, row: int) -> list[tuple[int, int, str, int]]:
    """The row as runs (first column, cells, text, highlight id); a wide character's second
    cell (empty text) belongs to the run of its first."""
    out: list[tuple[int, int, str, int]] = []
    for col, cell in enumerate(screen.cells[row]):
        if out and (cell.hl == out[-1][3] or cell.text == ""):
            start, count, text, hl = out[-1]
            out[-1] = (start, count + 1, text + cell.text, hl)
        else:
            out.append((col, 1, cell.text, cell.hl))
    return out


def render(screen: Screen, title: str) -> str:
    width, height = screen.width * CELL_W, screen.height * CELL_H
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height}" '
        f'viewBox="0 0 {width:g} {height}" font-family="{FAMILY}" font-size="{FONT}">\n'
        f"<title>{escape(title)}</title>\n"
        f'<rect width="100%" height="100%" fill="{hexcolor(screen.default_bg)}"/>\n'
    )
    backgrounds: list[str] = []
    texts: list[str] = []
    for row in range(screen.height):
        y = row * CELL_H
        for col, count, text, hl in runs(screen, row):
            fg, bg, attr = colours(screen, hl)
            x = col * CELL_W
            if bg != hexcolor(screen.default_bg):
                backgrounds.append(
                    f'<rect x="{x:g}" y="{y}" width="{count * CELL_W:g}" height="{CELL_H}" '
                    f'fill="{bg}"/>'
                )
            if not text.strip():
                continue
            style = []
            if attr.get("bold"):
                style.append('font-weight="bold"')
            if attr.get("italic"):
                style.append('font-style="italic"')
            if attr.get("underline") or attr.get("undercurl"):
                style.append('text-decoration="underline"')
            extra = (" " + " ".join(style)) if style else ""
            texts.append(
                f'<text x="{x:g}" y="{y + CELL_H - 4}" fill="{fg}" textLength="{count * CELL_W:g}" '
                f'lengthAdjust="spacingAndGlyphs" xml:space="preserve"{extra}>{escape(text)}</text>'
            )
    return head + "\n".join(backgrounds + texts) + "\n</svg>\n"
