"""What luacheck cannot see in the Lua layer: it checks locals and table literals, not a module
table's fields across a file, nor a field of the tools' `ctx` read in one file and set in another.
Both slipped in before (M.refresh and M.short_name defined twice, the second silently winning;
ctx.lsp_timeout_ms read by every LSP tool and set nowhere)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LUA = ROOT / "lua" / "minime"

# A module-level definition: `function M.name(` or `M.name =` at the start of a line.
MODULE_FIELD = re.compile(r"^(?:function M\.(\w+)\s*\(|M\.(\w+)\s*=[^=])")
CTX_READ = re.compile(r"\bctx\.(\w+)\b(?!\s*=[^=])")
CTX_SET = re.compile(r"\bctx\.(\w+)\s*=[^=]")


def lua_files() -> list[Path]:
    return sorted(LUA.rglob("*.lua"))


def test_no_module_field_is_defined_twice():
    twice = []
    for path in lua_files():
        seen: dict[str, int] = {}
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = MODULE_FIELD.match(line)
            if not m:
                continue
            name = m.group(1) or m.group(2)
            if name in seen:
                twice.append(f"{path.relative_to(ROOT)}:{number}: M.{name} (first on {seen[name]})")
            seen.setdefault(name, number)
    assert not twice, "defined twice, the last one wins:\n" + "\n".join(twice)


def tool_ctx_fields() -> set[str]:
    """The keys of the table config.tool_ctx returns (the options a tool call sees)."""
    text = (LUA / "config.lua").read_text()
    body = re.search(r"^function M\.tool_ctx\(.*?^end$", text, re.S | re.M)
    assert body, "config.lua: no function M.tool_ctx"
    returned = re.search(r"^  return \{\n(.*?)^  \}$", body.group(0), re.S | re.M)
    assert returned, "config.tool_ctx: no `return { ... }` table"
    return set(re.findall(r"^    (\w+) =", returned.group(1), re.M))


def test_every_ctx_field_a_tool_reads_is_set_somewhere():
    """The tools' ctx is config.tool_ctx's table plus the fields tools/init.lua (and the editor
    modules) assign: a field read but never set is always nil, its feature silently dead."""
    dirs = [LUA / "tools", LUA / "editor"]
    files = [p for d in dirs for p in sorted(d.glob("*.lua"))]
    set_fields = tool_ctx_fields()
    reads: dict[str, str] = {}
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("--", 1)[0]
            set_fields.update(CTX_SET.findall(code))
            for field in CTX_READ.findall(code):
                reads.setdefault(field, f"{path.relative_to(ROOT)}:{number}")
    assert {"cwd", "deny", "selection"} <= set(reads), reads  # the scan sees reads
    unset = {field: where for field, where in reads.items() if field not in set_fields}
    assert not unset, f"ctx fields read but set nowhere: {unset}"
