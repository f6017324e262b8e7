"""The parts of doc/minime.txt that list options and commands, written from the code so that
the two cannot drift: section 3 (``*minime-config*``) from lua/minime/config.lua's documented
defaults (each field's ``---`` lines are its entry, in help markup, mini.nvim's way), and the
list that opens section 4 (``*minime-commands*``) from plugin/minime.lua's COMMANDS and the
``<Plug>`` mappings it defines. Each command's entry below that list stays hand-written;
tests/test_help_generated.py fails when the committed file is not what this writes.

A real Neovim (tests/nvim_harness.py) answers what only Lua knows: an ``---@eval`` line's value
(the deny list's defaults), the commands and mappings as the plugin defined them.

    python tests/gen_help.py       # rewrite doc/minime.txt, then doc/tags (scripts/gen-help)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nvim_harness import REPO, start

DOC = REPO / "doc" / "minime.txt"
CONFIG = REPO / "lua" / "minime" / "config.lua"
PLUGIN = REPO / "plugin" / "minime.lua"
WIDTH = 78  # 'textwidth' of help files
INDENT = 16  # where an option's text starts, as in Neovim's own option lists

Eval = Callable[[str], str]


class GenError(Exception):
    """The code says something the generator cannot write: the message says what to fix."""


@dataclass
class Option:
    name: str
    default: str  # the Lua text, as config.lua writes it
    doc: list[str]  # its `---` lines, the marker and one space removed


@dataclass
class Command:
    name: str
    usage: str  # its arguments, "[text]"; "" for none
    desc: str
    range: bool
    bang: bool


# -- reading the code ----------------------------------------------------------------------------


def options(text: str) -> list[Option]:
    """The fields of the table config.lua's defaults() returns, each with its doc lines."""
    body = re.search(r"^local function defaults\(\).*?^  return \{\n(.*?)^  \}$", text, re.S | re.M)
    if not body:
        raise GenError("config.lua: no `return { ... }` in defaults()")
    found, doc = [], []
    for line in body.group(1).splitlines():
        if line.startswith("    ---"):
            rest = line[len("    ---") :]
            doc.append(rest[1:] if rest.startswith(" ") else rest)
        elif m := re.match(r"^    (\w+) = (.*),$", line):
            if not doc:
                raise GenError(f"config.lua: option {m.group(1)} has no `---` lines saying what")
            found.append(Option(m.group(1), m.group(2), doc))
            doc = []
        elif line.strip() and not line.strip().startswith("--"):
            raise GenError(f"config.lua: a default on one line, `name = value,`: {line.strip()!r}")
    return found


def commands(text: str, defined: dict[str, Any]) -> list[Command]:
    """plugin/minime.lua's COMMANDS, one a line (its comment says the fields); a description
    that starts with bracketed groups (``[id [value]]``, ``[agent] [worktree]``) starts with
    the command's arguments. ``defined`` is what Neovim registered (nvim_get_commands): its
    range and bang."""
    block = re.search(r"^local COMMANDS = \[=\[\n(.*?)^\]=\]", text, re.S | re.M)
    if not block:
        raise GenError("plugin/minime.lua: no `local COMMANDS = [=[ ... ]=]`")
    found = []
    for line in block.group(1).splitlines():
        m = re.match(r"^(\S+) [^:\s]+:\S+ \S \S \S \S+ (.+)$", line)
        if not m:
            raise GenError(f"plugin/minime.lua: a COMMANDS line that does not parse: {line!r}")
        name, desc = m.groups()
        usage = bracketed(desc)
        if usage:
            desc = desc[len(usage) :].lstrip()
        if name not in defined:
            raise GenError(f"plugin/minime.lua defines no {name}: its COMMANDS line is dropped")
        took = defined[name]
        if took["nargs"] != "0" and not usage:
            raise GenError(f"{name} takes arguments: begin its description with them ([text])")
        found.append(Command(name, usage, desc, bool(took.get("range")), bool(took.get("bang"))))
    return found


def bracketed(text: str) -> str:
    """The balanced ``[...]`` groups ``text`` starts with, one space apart (``[agent]
    [worktree]``), or ""."""
    depth = 0
    for i, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth == 0:
            if not i:
                return ""
            rest = bracketed(text[i + 2 :]) if text[i + 1 : i + 3] == " [" else ""
            return text[: i + 1] + (" " + rest if rest else "")
    return ""


# -- writing help text ---------------------------------------------------------------------------


def wrap(words: list[str], first: str, indent: int) -> list[str]:
    """Words filled up to WIDTH, after ``first`` on the first line and ``indent`` spaces on the
    others. A word ending in two spaces keeps them (the gap after an option's default)."""
    lines, line = [], first
    fresh = True
    for word in words:
        gap = "" if fresh else (" " if not line.endswith("  ") else "")
        if not fresh and len(line) + len(gap) + len(word.rstrip()) > WIDTH:
            lines.append(line.rstrip())
            line, gap = " " * indent, ""
        line += gap + word
        fresh = False
    lines.append(line.rstrip())
    return lines


def spans(words: list[str]) -> list[str]:
    """``words`` with each inline code span kept whole (```{ cost = 2.00 }```), across the
    doc's lines too: a line of help is never broken inside one."""
    out: list[str] = []
    for word in words:
        if out and out[-1].count("`") % 2:
            out[-1] += " " + word
        else:
            out.append(word)
    return out


def tag_line(tags: str) -> str:
    return tags.rjust(WIDTH)


TAGS = re.compile(r"^\*[^*\s]+\*(\s+\*[^*\s]+\*)*$")


def render_doc(lines: list[str], first: str, lead: list[str], evaluate: Eval) -> list[str]:
    """An entry's doc lines as help text: paragraphs filled from column INDENT (the first one
    after ``first`` and the words ``lead``), a line of ``*tags*`` right-aligned, a ``>lua`` …
    ``<`` block kept as written (indented 4), an ``@eval <Lua expression>`` line replaced by its
    value."""
    out: list[str] = []
    words: list[str] = list(lead)
    head = first

    def flush() -> None:
        nonlocal words, head
        if words or head.strip():
            out.extend(wrap(words, head or " " * INDENT, INDENT))
        words, head = [], ""

    code: list[str] | None = None
    for line in lines:
        if code is not None:
            if line.strip() == "<":
                margin = min(len(c) - len(c.lstrip()) for c in code if c.strip())
                out.extend(("    " + c[margin:]).rstrip() for c in code)
                out.append("<")
                code = None
            else:
                code.append(line)
            continue
        if TAGS.match(line.strip()):
            flush()
            out.append(tag_line(line.strip()))
            continue
        if line.startswith("@eval "):
            line = evaluate(line[len("@eval ") :])
        if not line.strip():
            flush()
            continue
        words = spans(words + line.split())
        if re.search(r"(^|\s)>[a-z]*$", line):
            flush()
            code = []
    if code is not None:
        raise GenError(f"a `>` block without its closing `<` in: {first.strip()}")
    flush()
    return out


def option_entry(option: Option, evaluate: Eval) -> list[str]:
    name = option.name
    head = name + " " * max(1, INDENT - len(name))
    default = f"[{option.default}]".split()
    default[-1] += "  "
    return [
        tag_line(f"*minime-config-{name}*"),
        *render_doc(option.doc, head, default, evaluate),
    ]


def overview_lines(option: Option) -> list[str]:
    """``name = default,`` in the setup() block; a table too wide for a line, a field a line."""
    line = f"      {option.name} = {option.default},"
    inner = option.default[2:-2]
    if len(line) <= WIDTH or not (option.default.startswith("{ ") and "{" not in inner):
        return [line]
    return [f"      {option.name} = {{", *(f"        {f}," for f in inner.split(", ")), "      },"]


def options_section(found: list[Option], evaluate: Eval) -> list[str]:
    overview = ['    require("minime").setup({', *(x for o in found for x in overview_lines(o))]
    overview.append("    })")
    lines = [
        "",
        "Every option with its default, as lua/minime/config.lua states them (this",
        "section is written from that file by scripts/gen-help): >lua",
        *overview,
        "<",
        "setup() merges what you pass into these (|minime.setup()|). Each entry below",
        "gives the default in brackets.",
        "",
    ]
    for option in found:
        lines += option_entry(option, evaluate)
    return [*lines, ""]


def commands_section(found: list[Command], mappings: list[dict[str, str]]) -> list[str]:
    rows = []
    for c in found:
        left = ("[range]" if c.range else "") + f"|:{c.name}|" + ("[!]" if c.bang else "")
        rows.append((left + (" " + c.usage if c.usage else ""), c.desc))
    for m in mappings:
        rows.append((f"|{m['lhs']}|", f"({m['modes']}) {m['desc']}"))
    column = max(len(left) for left, _ in rows) + 2
    lines = [
        "",
        "Every command and mapping the plugin defines, in plugin/minime.lua's words",
        "(scripts/gen-help writes this list from that file); the entries below say the",
        "rest. [range] before a name: it takes a range; [!] after it: a bang.",
        "",
    ]
    for left, desc in rows:
        lines += wrap(desc.split(), left.ljust(column), column)
    return [*lines, ""]


# -- the file ------------------------------------------------------------------------------------


def replace(doc: list[str], start_tag: str, is_end: Callable[[str], bool], new: list[str]) -> None:
    """Put ``new`` between the line holding ``start_tag`` and the first line after it that
    ``is_end`` (that line kept)."""
    starts = [i for i, line in enumerate(doc) if line.rstrip().endswith(start_tag)]
    if len(starts) != 1:
        raise GenError(f"doc/minime.txt: one heading line ending {start_tag}, found {len(starts)}")
    begin = starts[0] + 1
    end = next((i for i in range(begin, len(doc)) if is_end(doc[i])), None)
    if end is None:
        raise GenError(f"doc/minime.txt: the part under {start_tag} has no end")
    doc[begin:end] = new


SEPARATOR = "=" * WIDTH
COMMAND_TAG = re.compile(r"^\s+\*:\w+\*$")

MAPPINGS = """
local found = {}
for _, mode in ipairs({ "n", "i", "x" }) do
  for _, map in ipairs(vim.api.nvim_get_keymap(mode)) do
    if map.lhs:find("^<Plug>%(minime%-") then
      local entry = found[map.lhs] or { lhs = map.lhs, desc = map.desc or "", modes = {} }
      table.insert(entry.modes, mode)
      found[map.lhs] = entry
    end
  end
end
local list = vim.tbl_values(found)
table.sort(list, function(a, b) return a.lhs < b.lhs end)
for _, entry in ipairs(list) do
  entry.modes = table.concat(entry.modes, " ")
  entry.desc = entry.desc:gsub("^minime: ", "")
end
return list
"""


def generate(nvim: Any, doc_text: str) -> str:
    """``doc_text`` with its generated parts written afresh from the code."""

    def evaluate(expr: str) -> str:
        value = nvim.exec_lua(f"return {expr}")
        if not isinstance(value, str):
            raise GenError(f"@eval {expr}: gave {type(value).__name__}, not a string")
        return value

    found = options(CONFIG.read_text(encoding="utf-8"))
    defined = nvim.exec_lua("return vim.api.nvim_get_commands({})")
    listed = commands(PLUGIN.read_text(encoding="utf-8"), defined)
    mappings = nvim.exec_lua(MAPPINGS)
    doc = doc_text.split("\n")
    section = options_section(found, evaluate)
    replace(doc, "*minime-config*", lambda line: line == SEPARATOR, section)
    replace(doc, "*minime-commands*", COMMAND_TAG.match, commands_section(listed, mappings))
    return "\n".join(doc)


def main() -> int:
    with start() as nvim:
        text = generate(nvim, DOC.read_text(encoding="utf-8"))
        DOC.write_text(text, encoding="utf-8")
        nvim.command(f"helptags {DOC.parent}")
    print(f"wrote {DOC} and {DOC.parent / 'tags'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
