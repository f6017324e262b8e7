"""The library's shape, kept: no import cycle among its modules, no module reaching into
another's private names, and every public name documented in notes/library.md (the README
shows one screen of it).

Read from the source (ast), so a cycle through ``if TYPE_CHECKING:`` or an import inside a
function counts too: two modules that know each other are a knot however they import.
The Neovim adapter (minime/nvim/) is not the library and is left out.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import minime
import pytest

PACKAGE = Path(minime.__file__).parent
ROOT = PACKAGE.parents[2]


def modules() -> dict[str, ast.Module]:
    return {
        path.stem: ast.parse(path.read_text(), str(path))
        for path in sorted(PACKAGE.glob("*.py"))
        if path.stem != "__init__"
    }


def imported(name: str, tree: ast.Module, known: set[str]) -> dict[str, set[str]]:
    """The library modules ``tree`` imports, each with the names it takes from it."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        parts = (node.module or "").split(".")
        if node.level == 1 and node.module is None:  # from . import x
            for alias in node.names:
                if alias.name in known:
                    found.setdefault(alias.name, set())
        elif node.level == 1 and parts[0] in known:
            found.setdefault(parts[0], set()).update(a.name for a in node.names)
        elif node.level == 0 and parts[:1] == ["minime"] and parts[1:2] and parts[1] in known:
            found.setdefault(parts[1], set()).update(a.name for a in node.names)
    found.pop(name, None)
    return found


def graph() -> dict[str, dict[str, set[str]]]:
    trees = modules()
    return {name: imported(name, tree, set(trees)) for name, tree in trees.items()}


def test_no_import_cycle_among_the_library_modules() -> None:
    edges = {name: set(targets) for name, targets in graph().items()}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str], seen: set[str]) -> None:
        for target in sorted(edges[node]):
            if target in path:
                cycles.append([*path[path.index(target) :], target])
            elif target not in seen:
                seen.add(target)
                visit(target, [*path, target], seen)

    for start in sorted(edges):
        visit(start, [start], {start})
    unique = {" -> ".join(cycle) for cycle in cycles if cycle[0] == min(cycle[:-1])}
    assert not unique, "import cycles:\n" + "\n".join(sorted(unique))


def _defined_private(tree: ast.Module) -> set[str]:
    """The ``_names`` a module defines: functions, classes, attributes it assigns."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def _imported_modules(tree: ast.Module) -> set[str]:
    """The names ``import x`` / ``import x as y`` bind (modules outside the library)."""
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }


def private_uses() -> list[str]:
    """Every use in one module of a private name another library module defines: imported
    (``from .x import _y``), or reached as an attribute (``client._check_alive()``)."""
    trees = modules()
    defined = {name: _defined_private(tree) for name, tree in trees.items()}
    found = []
    for name, targets in graph().items():
        for target, names in sorted(targets.items()):
            found += [f"{name} imports {target}.{n}" for n in sorted(names) if n.startswith("_")]
    for name, tree in trees.items():
        others = set().union(*(d for other, d in defined.items() if other != name))
        foreign = _imported_modules(tree)  # os._exit is os's, not ours
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in foreign:
                continue
            attr = node.attr
            if attr.startswith("__") or attr in defined[name] or attr not in others:
                continue
            found.append(f"{name}:{node.lineno} uses .{attr} (another module's private name)")
    return sorted(set(found))


def test_no_module_uses_another_modules_private_names() -> None:
    assert private_uses() == []


def library_section() -> str:
    return (ROOT / "notes" / "library.md").read_text()


def public_names(cls: type) -> set[str]:
    """A class's public methods, properties and the attributes its methods set on self."""
    names = {n for n in vars(cls) if not n.startswith("_")}
    tree = ast.parse(Path(inspect.getsourcefile(cls) or "").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.Attribute)
                    and isinstance(inner.ctx, ast.Store)
                    and isinstance(inner.value, ast.Name)
                    and inner.value.id == "self"
                    and not inner.attr.startswith("_")
                ):
                    names.add(inner.attr)
    return names


def code_spans(text: str) -> list[str]:
    """The fenced blocks and the inline code spans of ``text``."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    rest = re.sub(r"```[a-z]*\n.*?```", "", text, flags=re.S)
    return blocks + re.findall(r"`([^`]+)`", rest)


def documented(name: str, prefix: str = "") -> bool:
    """``name`` in the code of notes/library.md (``client.name``, ``name(…)``…)."""
    spans = code_spans(library_section())
    pattern = re.compile(rf"(^|[^\w]){re.escape(prefix)}{re.escape(name)}\b")
    return any(pattern.search(span) for span in spans)


def test_every_name_of_the_package_is_documented() -> None:
    missing = [name for name in minime.__all__ if not documented(name)]
    assert missing == [], f"not in notes/library.md: {missing}"


# How notes/library.md names an instance of each public class: ``client.alive``, ``event.call``…
# A class is documented by ``<prefix>name``, or by its constructor's listing, ``Class(a, b)``
# (the fields of a Struct). Every class in ``minime.__all__`` has an entry: a new one is a
# choice to make here, and its names to document.
PREFIXES: dict[str, tuple[str, ...]] = {
    "Agent": ("agent.",),
    "AuthRequired": ("error.",),
    "AvailableCommand": ("command.",),
    "Branch": ("branch.",),
    "Busy": (),
    "Checkpoints": ("checkpoints.",),
    "Client": ("client.",),
    "ConfigOption": ("option.",),
    "ConfigValue": ("value.",),
    "Decision": ("decision.",),
    "ElicitationAnswer": ("answer.",),
    "ElicitationRequest": ("request.",),
    "Error": (),
    "Event": ("event.",),
    "Exchange": ("exchange.",),
    "PermissionOption": ("option.",),
    "PermissionRequest": ("request.",),
    "Result": ("result.",),
    "Rewound": ("rewound.",),
    "Session": ("session.",),
    "SessionMode": ("mode.",),
    "SessionModes": ("modes.",),
    "Tool": ("tool.",),
    "ToolCall": ("call.",),
    "ToolCallLocation": ("location.",),
    "ToolRequest": ("request.",),
}


def public_classes() -> list[type]:
    found = [getattr(minime, name) for name in minime.__all__]
    return [obj for obj in found if inspect.isclass(obj)]


def listed(cls: type, name: str) -> bool:
    """``name`` in a ``Class(…)`` listing of ``cls`` in notes/library.md's code."""
    pattern = re.compile(rf"(^|[^\w]){cls.__name__}\(([^()]|\([^()]*\))*\b{re.escape(name)}\b")
    return any(pattern.search(span) for span in code_spans(library_section()))


def undocumented(cls: type) -> list[str]:
    prefixes = PREFIXES[cls.__name__]
    return sorted(
        name
        for name in public_names(cls)
        if not listed(cls, name) and not any(documented(name, p) for p in prefixes)
    )


def test_every_public_class_has_a_way_to_be_named() -> None:
    names = sorted(cls.__name__ for cls in public_classes())
    assert names == sorted(PREFIXES)
    assert len(names) > 20  # the walk found the classes, not an empty list


@pytest.mark.parametrize("cls", public_classes(), ids=lambda cls: cls.__name__)
def test_every_public_name_of_every_public_class_is_documented(cls: type) -> None:
    assert undocumented(cls) == [], f"{cls.__name__}: not in notes/library.md"


def test_a_name_counts_only_as_its_own_class_s() -> None:
    """The oracle tells classes apart: ``stop_reason`` is documented as ``event.stop_reason``
    and in ``Result(…)``, which says nothing of a session's, nor ``SessionModes(current…)`` of
    a ``SessionMode``'s."""
    assert documented("stop_reason", "event.")
    assert listed(minime.Result, "stop_reason")
    assert not documented("stop_reason", "session.")
    assert not listed(minime.SessionMode, "current")
