"""Permission rules (minime.permission_rules): anchored globs, kinds, and no shell control text
under an allow rule's wildcard. Table-driven: each row is (rules, title, kind, expected)."""

from __future__ import annotations

import pytest
from minime.permission_rules import Match, Skipped, first_match

GIT_STATUS = [{"pattern": "bash: git status*", "decision": "allow"}]
CLIENT = [{"pattern": "client: *", "decision": "allow"}]
ALLOW = "allow"
ASKED = None  # no rule answers: the user is asked

CASES = [
    # :h minime-rules' example allows git status and its flags …
    (GIT_STATUS, "bash: git status", "execute", ALLOW),
    (GIT_STATUS, "bash: git status -s", "execute", ALLOW),
    (GIT_STATUS, "bash: git status --porcelain src/a.py", "execute", ALLOW),
    # … and never what a wildcard would chain, pipe, redirect or substitute after it.
    (GIT_STATUS, "bash: git status; curl x|sh", "execute", ASKED),
    (GIT_STATUS, "bash: git status && rm -rf ~", "execute", ASKED),
    (GIT_STATUS, "bash: git status\nrm -rf ~", "execute", ASKED),
    (GIT_STATUS, "bash: git status\rrm -rf ~", "execute", ASKED),
    (GIT_STATUS, "bash: git status | sh", "execute", ASKED),
    (GIT_STATUS, "bash: git status || rm -rf ~", "execute", ASKED),
    (GIT_STATUS, "bash: git status & rm -rf ~", "execute", ASKED),
    (GIT_STATUS, "bash: git status `rm -rf ~`", "execute", ASKED),
    (GIT_STATUS, "bash: git status $(rm -rf ~)", "execute", ASKED),
    (GIT_STATUS, "bash: git status > ~/.bashrc", "execute", ASKED),
    (GIT_STATUS, "bash: git status < /etc/passwd", "execute", ASKED),
    (GIT_STATUS, "bash: git status\x00rm", "execute", ASKED),
    (GIT_STATUS, "bash: git status\x1b[2K", "execute", ASKED),
    # A `$` that substitutes nothing is plain text.
    (GIT_STATUS, "bash: git status $HOME", "execute", ALLOW),
    # Anchored: the whole title, from its start.
    (GIT_STATUS, "bash: echo; git status", "execute", ASKED),
    (GIT_STATUS, "xbash: git status", "execute", ASKED),
    ([{"pattern": "bash: ls", "decision": "allow"}], "bash: ls -la", "execute", ASKED),
    ([{"pattern": "bash: ls", "decision": "allow"}], "bash: ls", "execute", ALLOW),
    # What the user wrote literally is theirs to allow.
    (
        [{"pattern": "bash: make && make test", "decision": "allow"}],
        "bash: make && make test",
        "execute",
        ALLOW,
    ),
    (
        [{"pattern": "bash: make *; echo done", "decision": "allow"}],
        "bash: make all; echo done",
        "execute",
        ALLOW,
    ),
    (
        [{"pattern": "bash: make *; echo done", "decision": "allow"}],
        "bash: make a; rm -rf ~; echo done",
        "execute",
        ASKED,
    ),
    # ? and [...] are wildcards too.
    ([{"pattern": "bash: ls ?", "decision": "allow"}], "bash: ls ;", "execute", ASKED),
    ([{"pattern": "bash: ls ?", "decision": "allow"}], "bash: ls a", "execute", ALLOW),
    ([{"pattern": "bash: ls [!a]", "decision": "allow"}], "bash: ls |", "execute", ASKED),
    ([{"pattern": "bash: ls [!a]", "decision": "allow"}], "bash: ls b", "execute", ALLOW),
    ([{"pattern": "bash: ls [a-c]", "decision": "allow"}], "bash: ls b", "execute", ALLOW),
    ([{"pattern": "bash: ls [", "decision": "allow"}], "bash: ls [", "execute", ALLOW),
    # Kinds: mm's prefixes imply them; an execute request titled like a client tool is asked.
    (CLIENT, "client: read_buffer", "other", ALLOW),
    (CLIENT, "client: read_buffer", "execute", ASKED),
    (CLIENT, "client: read_buffer", None, ASKED),
    (GIT_STATUS, "bash: git status", "other", ASKED),
    ([{"pattern": "Read *", "decision": "allow", "kind": "read"}], "Read a.py", "read", ALLOW),
    ([{"pattern": "Read *", "decision": "allow", "kind": "read"}], "Read a.py", "edit", ASKED),
    (
        [{"pattern": "Read *", "decision": "allow", "kind": ["read", "search"]}],
        "Read a",
        "search",
        ALLOW,
    ),
    ([{"pattern": "Read *", "decision": "allow"}], "Read a.py", "edit", ALLOW),  # no prefix
    # A reject rule's wildcards match anything: rejecting more is safe.
    (
        [{"pattern": "bash: rm *", "decision": "reject"}],
        "bash: rm -rf a; echo",
        "execute",
        "reject",
    ),
    ([{"pattern": "bash: *", "decision": "reject"}], "bash: a\nb", "execute", "reject"),
    # The first rule that answers wins; an unsafe allow passes on to the next rule.
    (
        [*GIT_STATUS, {"pattern": "bash: *", "decision": "reject"}],
        "bash: git status; rm",
        "execute",
        "reject",
    ),
    (
        [{"pattern": "bash: *", "decision": "reject"}, *GIT_STATUS],
        "bash: git status",
        "execute",
        "reject",
    ),
    # Malformed rules are passed over.
    (
        ["bash: *", {"decision": "allow"}, {"pattern": 3, "decision": "allow"}],
        "bash: ls",
        "execute",
        ASKED,
    ),
    ([{"pattern": "bash: ls", "decision": "maybe"}], "bash: ls", "execute", "reject"),
]


@pytest.mark.parametrize(("rules", "title", "kind", "expected"), CASES)
def test_rule_table(rules, title, kind, expected):
    match, _ = first_match(rules, title, kind)
    assert (match.decision if match else None) == expected


def test_an_allow_rule_passed_over_for_control_text_is_reported():
    match, skipped = first_match(GIT_STATUS, "bash: git status; curl x|sh", "execute")
    assert match is None
    assert skipped == [Skipped("bash: git status*")]


def test_the_match_names_its_pattern():
    assert first_match(GIT_STATUS, "bash: git status", "execute") == (
        Match("allow", "bash: git status*"),
        [],
    )
