"""A tool's arguments checked against its input schema (minime/tool_arguments.py) before its
handler runs, on both paths: mm's client tools (the fake mm) and MCP (the agent that is an MCP
client, tests/agents/mcp_agent.py), through the library and through the plugin with a user
tool. What is missing or wrong reaches the model in words; the handler does not run.

The checker against ``jsonschema`` (the reference implementation, a dev dependency) on random
schemas and values: it never refuses what the schema accepts, and what it lets through (read
as it reads it) the schema accepts. MINIME_SEED=<seed> replays a run; a failure prints it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import minime
import pytest
from conftest import FakeMM
from helpers.handlers import Recorder
from helpers.plugin_tools import yolo_agent_file
from helpers.shared_nvim import SharedNvim
from minime import tool_arguments
from nvim_harness import REPO
from plugin_harness import Editor

jsonschema = pytest.importorskip("jsonschema")

MCP_AGENT = Path(__file__).with_name("agents") / "mcp_agent.py"

# --- the checker against the reference ---------------------------------------------------------

VALUES: list[Any] = [
    None, True, False, 0, 1, -3, 7, 2.0, 1.5, -0.5, 10**12, "", "a", "abc", "12", " 7 ", "-4",
    "1.5", "ERROR", "error", "Warn", [], [1], ["a", "b"], [1, "a", None], {}, {"x": 1},
    {"x": "a", "y": [2]},
]  # fmt: skip
TYPES = ["string", "integer", "number", "boolean", "object", "array", "null"]


def random_schema(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    """A schema of the keywords the checker knows (and one it does not: ``format``)."""
    schema: dict[str, Any] = {}
    if rng.random() < 0.8:
        kinds = rng.sample(TYPES, rng.choice([1, 1, 1, 2]))
        schema["type"] = kinds[0] if len(kinds) == 1 and rng.random() < 0.7 else kinds
    if rng.random() < 0.2:
        schema["enum"] = rng.sample(["error", "warn", "a", 1, 7, None, True], rng.randint(1, 3))
    if rng.random() < 0.05:
        schema["const"] = rng.choice(["a", 1, True, None])
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if rng.random() < 0.15:
            schema[key] = rng.choice([0, 1, 2.5, 7, -1])
    for key in ("minLength", "maxLength", "minItems", "maxItems"):
        if rng.random() < 0.1:
            schema[key] = rng.randint(0, 3)
    if rng.random() < 0.1:
        schema["format"] = "uri"  # not checked by either (jsonschema: no format checker)
    if depth < 2 and rng.random() < 0.3:
        schema["items"] = random_schema(rng, depth + 1)
    if depth < 2 and rng.random() < 0.3:
        names = rng.sample(["a", "b", "c"], rng.randint(1, 3))
        schema["properties"] = {n: random_schema(rng, depth + 1) for n in names}
        if rng.random() < 0.5:
            schema["required"] = rng.sample([*names, "d"], rng.randint(1, 2))
    return schema


def random_value(rng: random.Random, depth: int = 0) -> Any:
    if depth < 2 and rng.random() < 0.2:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 2 and rng.random() < 0.2:
        keys = rng.sample(["a", "b", "c", "d"], rng.randint(0, 3))
        return {k: random_value(rng, depth + 1) for k in keys}
    return rng.choice(VALUES)


def test_the_checker_agrees_with_jsonschema_on_random_schemas() -> None:
    seed = int(os.environ.get("MINIME_SEED") or random.randrange(2**32))
    rng = random.Random(seed)
    refused_alike = 0
    for case in range(4000):
        properties = {n: random_schema(rng, 1) for n in rng.sample(["a", "b", "c"], 2)}
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if rng.random() < 0.6:
            schema["required"] = rng.sample(["a", "b", "c"], rng.randint(1, 2))
        arguments = random_value(rng, 1) if rng.random() < 0.1 else random_value(rng, 2)
        if not isinstance(arguments, dict):
            arguments = {k: random_value(rng, 1) for k in rng.sample(["a", "b", "c"], 2)}
        valid = jsonschema.Draft202012Validator(schema).is_valid(arguments)
        read, wrong = tool_arguments.check(schema, arguments)
        where = f"MINIME_SEED={seed} case {case}: schema {schema}, arguments {arguments}"
        if valid:
            assert wrong is None, f"{where}: refused ({wrong})"
            assert read == arguments, f"{where}: read as {read}"
        if wrong is None:
            still = jsonschema.Draft202012Validator(schema).is_valid(read)
            assert still, f"{where}: let through as {read}, which the schema refuses"
        else:
            refused_alike += 1
            assert wrong and "\n" not in wrong, where
    assert refused_alike > 500, f"MINIME_SEED={seed}: the cases hardly test refusals"


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({}, "missing argument path (a string)"),
        ({"path": None}, "missing argument path (a string)"),
        ({"path": 5}, "path must be a string, got 5"),
        ({"path": ["a"]}, "path must be a string, got a list"),
        ({"path": "a", "start_line": "two"}, 'start_line must be a whole number, got "two"'),
        ({"path": "a", "start_line": 1.5}, "start_line must be a whole number, got 1.5"),
        ({"path": "a", "start_line": True}, "start_line must be a whole number, got true"),
        ({"path": "a", "start_line": 0}, "start_line must be 1 or more, got 0"),
        ({"path": "a", "level": "fatal"}, 'level must be one of error, warn, got "fatal"'),
        ({"start_line": 0}, "missing argument path (a string); start_line must be 1 or more"),
    ],
)
def test_what_the_model_reads_names_the_argument_and_what_it_must_be(
    arguments: dict[str, Any], said: str
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "start_line": {"type": "integer", "minimum": 1},
            "level": {"type": "string", "enum": ["error", "warn"]},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    _, wrong = tool_arguments.check(schema, arguments)
    assert wrong is not None and wrong.startswith(said), wrong


def test_what_small_models_send_is_read_as_meant() -> None:
    schema = {
        "type": "object",
        "properties": {
            "line": {"type": "integer"},
            "level": {"enum": ["error", "warn"]},
            "note": {"type": "string"},
        },
    }
    read, wrong = tool_arguments.check(
        schema, {"line": " 12 ", "level": "ERROR", "note": None, "extra": 1}
    )
    # Digits for a number, an enum value in another case, null for "not given"; an argument
    # the schema does not name is the handler's (mm hides additionalProperties from the model).
    assert (read, wrong) == ({"line": 12, "level": "error", "extra": 1}, None)


# --- the client-tools path (the fake mm), through the library ----------------------------------


def test_client_tools_check_the_arguments_before_the_handler_runs(mm: FakeMM) -> None:
    handler = Recorder("ran")
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    tools = [minime.Tool("bump", handler, input_schema=schema)]

    async def main() -> tuple[str, str]:
        config = mm.config(yolo=True)
        async with mm.agent(config, tools=tools) as agent:
            wrong = (await agent.complete('/tool bump {"n": "many"}')).text
            good = (await agent.complete('/tool bump {"n": "41"}')).text
        return wrong, good

    wrong, good = asyncio.run(asyncio.wait_for(main(), 60))
    assert wrong == 'client_bump -> [client tool error: n must be a whole number, got "many"]'
    assert good == "client_bump -> ran"
    assert [r.arguments for r in handler.requests] == [{"n": 41}]


# --- both paths through the plugin, with a user tool (setup{ tools }) --------------------------

BUMP = (
    "tools = { { name = 'bump', description = 'Add one.', input_schema = { type = 'object',"
    " properties = { count = { type = 'integer' } }, required = { 'count' } },"
    " handler = function(args) return tostring(args.count + 1) end } }"
)
SHARED = SharedNvim()


@contextlib.contextmanager
def mm_editor(project: Path) -> Iterator[Editor]:
    config = yolo_agent_file(project, "request")
    options = f"mm = [==[{REPO / 'demo' / 'mm'}]==], config = [==[{config}]==], {BUMP}"
    with SHARED.editor_with(project, "{" + options + "}") as ed:
        yield ed


def test_a_user_tool_gets_checked_arguments_over_mm_client_tools(tmp_path: Path) -> None:
    with mm_editor(tmp_path) as ed:
        ed.ask('/tool bump {"count": "many"}\n/tool bump {"count": 41}')
        ed.wait_done(1)
        text = ed.turn_text()
    assert 'client_bump -> [client tool error: count must be a whole number, got "many"]' in text
    assert "client_bump -> 42" in text


def test_a_user_tool_gets_checked_arguments_over_mcp(tmp_path: Path) -> None:
    agent = f"agent = {{ cmd = {{ [==[{sys.executable}]==], [==[{MCP_AGENT}]==] }} }}"
    with SHARED.editor_with(tmp_path, "{" + agent + ", " + BUMP + "}") as ed:
        ed.ask('/tool bump {}\n/tool bump {"count": 1}')
        ed.wait_done(1)
        text = ed.turn_text()
    assert "client_bump -> [client tool error: missing argument count (a whole number)]" in text
    assert "client_bump -> 2" in text
