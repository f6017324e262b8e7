"""Reference screenshots of a headless Neovim, compared to text files under tests/screenshots/.

A screenshot is what the user sees, in three parts, all plain text so a diff reads in review:
- the screen, cell by cell (`screenstring()`), after a `:redraw`;
- the screen's attributes, one character per cell: attribute ids (`screenattr()`) renamed in
  order of first appearance (0-9, a-z, A-Z), so the file does not depend on Neovim's numbering;
- per buffer line of the float, the extmark highlights covering it (group and column range),
  which names the groups the attributes alone cannot.

`check(name, shot)` compares with tests/screenshots/<name>.txt. A missing reference is written
(and fails under CI=true, where it must already be committed); MINIME_UPDATE_SCREENSHOTS=1
rewrites it.
"""

from __future__ import annotations

import difflib
import os
import string
from pathlib import Path
from typing import Any

DIR = Path(__file__).resolve().parent / "screenshots"
SYMBOLS = string.digits + string.ascii_lowercase + string.ascii_uppercase

SCREEN = """
vim.cmd('redraw!')
local text, attrs = {}, {}
for row = 1, vim.o.lines do
  local t, a = {}, {}
  for col = 1, vim.o.columns do
    t[#t + 1] = vim.fn.screenstring(row, col)
    a[#a + 1] = vim.fn.screenattr(row, col)
  end
  text[row], attrs[row] = table.concat(t), a
end
return { text, attrs }
"""

MARKS = """
local buf = ...
local names = {}
for name, id in pairs(vim.api.nvim_get_namespaces()) do names[id] = name end
local out = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })) do
  local r, c, d = m[2], m[3], m[4]
  if d.hl_group or d.conceal or d.virt_text then
    out[#out + 1] = {
      r, c, d.end_row or r, d.end_col or c, d.hl_group or '', d.conceal or vim.NIL,
      names[d.ns_id] or '', d.virt_text and vim.inspect(d.virt_text) or vim.NIL,
    }
  end
end
return out
"""


def take(nvim: Any, buf: int) -> str:
    """The screen, its attributes and `buf`'s highlight extmarks as one text."""
    text, attrs = nvim.exec_lua(SCREEN)
    legend: dict[int, str] = {}
    attr_rows = []
    for row in attrs:
        attr_rows.append(
            "".join(legend.setdefault(a, SYMBOLS[min(len(legend), len(SYMBOLS) - 1)]) for a in row)
        )
    marks = sorted(
        ((tuple(m[:5]), m[5], m[6], m[7]) for m in nvim.exec_lua(MARKS, buf)),
        key=lambda m: (m[0], repr(m[1:])),
    )
    mark_lines = []
    for (r, c, er, ec, group), conceal, ns, virt in marks:
        extra = f" conceal={conceal!r}" if conceal is not None else ""
        extra += f" virt_text={virt}" if virt is not None else ""
        mark_lines.append(f"{r}:{c}-{er}:{ec} {group or '-'} [{ns}]{extra}")
    head = "--- extmarks (row:col-row:col group [namespace])"
    screen = [t.rstrip() for t in text]
    return "\n".join(["--- screen", *screen, "--- attributes", *attr_rows, head, *mark_lines, ""])


def check(name: str, shot: str) -> None:
    """Compare `shot` with the reference `name`; write it when missing or asked to update."""
    path = DIR / f"{name}.txt"
    update = os.environ.get("MINIME_UPDATE_SCREENSHOTS") == "1"
    if not path.exists() or update:
        if not path.exists() and not update and os.environ.get("CI") == "true":
            raise AssertionError(f"missing reference screenshot {path} (commit it)")
        DIR.mkdir(exist_ok=True)
        path.write_text(shot, encoding="utf-8")
        return
    want = path.read_text(encoding="utf-8")
    if shot != want:
        diff = "\n".join(
            difflib.unified_diff(
                want.splitlines(), shot.splitlines(), str(path), "now", lineterm="", n=2
            )
        )
        raise AssertionError(
            f"screenshot {name} differs (MINIME_UPDATE_SCREENSHOTS=1 to accept):\n{diff}"
        )
