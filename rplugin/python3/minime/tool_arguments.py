"""The model's arguments to a tool, checked against the tool's input schema before its handler
runs: what is missing or wrong comes back as one sentence a small model can act on
(``missing argument path (a string); start_line must be a whole number, got "two"``).

A small checker of the keywords tool schemas use, not a JSON Schema implementation: each
keyword it knows is checked on its own (``type``, ``required``, ``properties``, ``items``,
``enum``, ``const``, ``minimum``/``maximum``, ``exclusiveMinimum``/``exclusiveMaximum``,
``minLength``/``maxLength``, ``minItems``/``maxItems``) and every other one (``anyOf``,
``$ref``, ``pattern``, ``additionalProperties``…) is left to the handler, so it never refuses
what the schema accepts. ``jsonschema`` would check them all, but adds 70-170 ms to the
import, four more packages (one compiled) and 3x the time of a check (bench/argument_check.py).

Three readings where the meaning is not in doubt, as the editor tools have always made them
(lua/minime/editor/args.lua): ``null`` for an argument that does not allow it is an argument
not given; a string of digits where only a number fits is that number (``"12"``); a string
that matches one value of an ``enum`` but for case is that value (``"ERROR"`` → ``"error"``).
The handler gets the arguments so read.
"""

from __future__ import annotations

import json
import re
from typing import Any

# How deep the schema is followed; deeper parts are the handler's to check.
MAX_DEPTH = 16
_DIGITS = re.compile(r"\s*-?\d{1,18}\s*")

_NAMES = {
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}


def check(schema: Any, arguments: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``arguments`` as the handler gets them, and None; or what is wrong with them."""
    if not isinstance(schema, dict):
        return arguments, None
    problems: list[str] = []
    value = _value(schema, arguments, "", problems, 0)
    if problems:
        return arguments, "; ".join(problems)
    return value, None


def _is(kind: str, value: Any) -> bool:
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "null":
        return value is None
    return True  # a type this checker does not know: the handler's to judge


def _types(schema: dict[str, Any]) -> list[str] | None:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list) and kind and all(isinstance(k, str) for k in kind):
        return kind
    return None


def _shown(value: Any) -> str:
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:40] + "..."
        return json.dumps(text, ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    return "an object" if isinstance(value, dict) else "a list"


def _expected(schema: dict[str, Any]) -> str:
    """What a value of this schema is, in words: ``a string``, ``one of error, warn``."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return "one of " + ", ".join(v if isinstance(v, str) else json.dumps(v) for v in enum)
    kinds = _types(schema)
    if kinds:
        return " or ".join(_NAMES.get(k, k) for k in kinds)
    return "a value"


def _coerced(kinds: list[str], value: Any) -> Any:
    """``"12"`` as 12 where only a number fits (and 12.0 as 12 where only a whole number
    does); else the value as it was."""
    numeric = "integer" in kinds or "number" in kinds
    if isinstance(value, str) and numeric and "string" not in kinds and _DIGITS.fullmatch(value):
        return int(value)
    if isinstance(value, float) and value.is_integer() and "integer" in kinds:
        return value if "number" in kinds else int(value)
    return value


def _equal(a: Any, b: Any) -> bool:
    """JSON's equality: ``true`` is not ``1`` (Python says it is)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return a == b


def _value(schema: dict[str, Any], value: Any, where: str, problems: list[str], depth: int) -> Any:
    """The value as the handler gets it; a problem found is appended to ``problems``."""
    if depth > MAX_DEPTH:
        return value
    name = where or "the arguments"
    kinds = _types(schema)
    if kinds is not None:
        value = _coerced(kinds, value)
        if not any(_is(k, value) for k in kinds):
            problems.append(f"{name} must be {_expected(schema)}, got {_shown(value)}")
            return value
    value = _enum(schema, value, name, problems)
    if "const" in schema and not _equal(value, schema["const"]):
        problems.append(f"{name} must be {_shown(schema['const'])}, got {_shown(value)}")
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        _bounds(schema, value, name, problems)
    elif isinstance(value, str):
        _sized(schema, len(value), name, "character", problems, "Length")
    elif isinstance(value, list):
        _sized(schema, len(value), name, "item", problems, "Items")
        items = schema.get("items")
        if isinstance(items, dict):
            value = [
                _value(items, item, f"{name}[{i}]", problems, depth + 1)
                for i, item in enumerate(value)
            ]
    elif isinstance(value, dict):
        value = _object(schema, value, where, problems, depth)
    return value


def _enum(schema: dict[str, Any], value: Any, name: str, problems: list[str]) -> Any:
    enum = schema.get("enum")
    if enum is None:
        return value
    if not isinstance(enum, list) or not enum or any(_equal(value, v) for v in enum):
        return value
    if isinstance(value, str):
        same = [v for v in enum if isinstance(v, str) and v.lower() == value.lower()]
        if len(same) == 1:
            return same[0]
    problems.append(f"{name} must be {_expected(schema)}, got {_shown(value)}")
    return value


def _number(schema: dict[str, Any], key: str) -> float | None:
    bound = schema.get(key)
    if isinstance(bound, int | float) and not isinstance(bound, bool):
        return bound
    return None


_BOUNDS = (
    ("minimum", "{} or more", lambda value, bound: value < bound),
    ("maximum", "{} or less", lambda value, bound: value > bound),
    ("exclusiveMinimum", "more than {}", lambda value, bound: value <= bound),
    ("exclusiveMaximum", "less than {}", lambda value, bound: value >= bound),
)


def _bounds(schema: dict[str, Any], value: float, name: str, problems: list[str]) -> None:
    for key, words, fails in _BOUNDS:
        if key not in schema:
            continue
        bound = _number(schema, key)
        if bound is not None and fails(value, bound):
            problems.append(f"{name} must be {words.format(_plain(bound))}, got {_plain(value)}")
            return


def _plain(number: float) -> str:
    return str(int(number)) if isinstance(number, float) and number.is_integer() else str(number)


def _sized(
    schema: dict[str, Any], size: int, name: str, unit: str, problems: list[str], suffix: str
) -> None:
    low_key, high_key = "min" + suffix, "max" + suffix
    if low_key not in schema and high_key not in schema:
        return
    low, high = _number(schema, low_key), _number(schema, high_key)
    if low is not None and size < low:
        problems.append(f"{name} must have at least {_plain(low)} {unit}(s), got {size}")
    elif high is not None and size > high:
        problems.append(f"{name} must have at most {_plain(high)} {unit}(s), got {size}")


def _allows_null(schema: dict[str, Any]) -> bool:
    kinds = _types(schema)
    enum = schema.get("enum")
    return (
        (kinds is None or "null" in kinds)
        and (not isinstance(enum, list) or not enum or None in enum)
        and schema.get("const") is None
    )


def _object(
    schema: dict[str, Any], value: dict[str, Any], where: str, problems: list[str], depth: int
) -> dict[str, Any]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    prefix = f"{where}." if where else ""
    first = len(problems)  # what is missing is said before what is wrong
    out = dict(value)
    for key, sub in properties.items():
        if key not in out or not isinstance(sub, dict):
            continue
        if out[key] is None and not _allows_null(sub):
            del out[key]  # null for an argument that cannot be null: not given
            continue
        out[key] = _value(sub, out[key], prefix + key, problems, depth + 1)
    missing = [key for key in required if key not in out]
    if missing:
        said = ", ".join(
            f"{prefix}{key} ({_expected(properties[key])})"
            if isinstance(properties.get(key), dict)
            else f"{prefix}{key}"
            for key in missing
        )
        problems.insert(first, f"missing argument{'s' if len(missing) > 1 else ''} {said}")
    return out
