"""The client terminal through the library: tests/agents/terminal_agent.py sends
``terminal/*`` requests and reports the client's answers; each test reads what crossed the
wire, the events a turn yields, and what /proc shows of the commands."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import minime
from helpers.procs import cmdline, live_processes
from minime.terminals import MAX_OUTPUT_LIMIT, utf8_tail

AGENT = Path(__file__).with_name("agents") / "terminal_agent.py"


async def turn(steps: Any, cwd: Path, terminal: Any = True) -> tuple[list[Any], list[Any]]:
    """(the client's answers, as {method, answer}, and the turn's events)."""
    client = await minime.connect(command=[sys.executable, str(AGENT)], cwd=cwd, terminal=terminal)
    try:
        session = await client.new_session()
        text = steps if isinstance(steps, str) else json.dumps(steps)
        events = [e async for e in session.stream(text)]
    finally:
        await client.close()
    return answers(events), events


def answers(events: list[Any]) -> list[Any]:
    said = "".join(e.text for e in events if e.kind == "text")
    found = []
    for part in said.split("TERM ")[1:]:
        method, _, answer = part.strip().partition(" ")
        found.append((method, json.loads(answer)))
    return found


def create(command: str, *args: str, **params: Any) -> dict[str, Any]:
    return {
        "method": "terminal/create",
        "params": {"command": command, "args": list(args), **params},
    }


def step(method: str, **extra: Any) -> dict[str, Any]:
    return {"method": f"terminal/{method}", **extra}


def marked_alive(marker: str) -> list[int]:
    return [pid for pid, _ in live_processes() if marker.encode() in cmdline(pid)]


def test_capability_only_when_the_caller_lends_terminals(tmp_path: Path) -> None:
    with_it, _ = asyncio.run(turn_caps(tmp_path, True))
    without, _ = asyncio.run(turn_caps(tmp_path, False))
    assert with_it["terminal"] is True
    assert not without.get("terminal")


async def turn_caps(cwd: Path, terminal: bool) -> tuple[dict[str, Any], None]:
    client = await minime.connect(command=[sys.executable, str(AGENT)], cwd=cwd, terminal=terminal)
    try:
        session = await client.new_session()
        text = (await session.complete("caps")).text
    finally:
        await client.close()
    return json.loads(text.removeprefix("CAPS ")), None


def test_without_terminals_the_requests_are_unknown_methods(tmp_path: Path) -> None:
    got, _ = asyncio.run(turn([create("true")], tmp_path, terminal=False))
    assert got[0][1]["error"]["code"] == -32601


def test_create_output_wait_release_in_a_subdirectory_with_env(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    script = 'printf "%s in %s\\n" "$GREETING" "$(pwd)"; exit 3'
    got, _ = asyncio.run(
        turn(
            [
                create(
                    "/bin/sh", "-c", script, cwd="sub", env=[{"name": "GREETING", "value": "héllo"}]
                ),
                step("wait_for_exit"),
                step("output"),
                step("release"),
                step("output"),
            ],
            tmp_path,
        )
    )
    methods = [m for m, _ in got]
    assert methods == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
        "terminal/output",
    ]
    assert got[0][1]["result"]["terminalId"]
    assert got[1][1] == {"result": {"exitCode": 3}}
    real = os.path.realpath(tmp_path / "sub")
    assert got[2][1] == {
        "result": {
            "output": f"héllo in {real}\n",
            "truncated": False,
            "exitStatus": {"exitCode": 3},
        }
    }
    assert got[3][1] == {"result": {}}
    assert "unknown terminal" in got[4][1]["error"]["data"]["details"]


def test_the_agent_cannot_change_the_tags_that_find_its_commands(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("MINIME_EDITOR", "the-editor")
    env = [
        {"name": "MINIME_EDITOR", "value": "elsewhere"},
        {"name": "MINIME_TERMINAL", "value": "x"},
    ]
    script = 'echo "$MINIME_EDITOR $MINIME_TERMINAL"'
    got, _ = asyncio.run(
        turn(
            [create("/bin/sh", "-c", script, env=env), step("wait_for_exit"), step("output")],
            tmp_path,
        )
    )
    editor, terminal = got[2][1]["result"]["output"].split()
    assert editor == "the-editor"
    assert terminal != "x" and terminal.startswith(f"{os.getpid()}-")


def test_a_shell_line_without_args_runs_through_sh(tmp_path: Path) -> None:
    got, _ = asyncio.run(
        turn([create("echo one && echo two"), step("wait_for_exit"), step("output")], tmp_path)
    )
    assert got[2][1]["result"]["output"] == "one\ntwo\n"


def test_output_is_cut_from_the_start_at_a_character_boundary(tmp_path: Path) -> None:
    # 400 "é" (2 bytes each) then "END": the last 10 bytes start inside an "é", which goes.
    script = "printf 'é%.0s' $(seq 400); printf END"
    got, _ = asyncio.run(
        turn(
            [
                create("/bin/sh", "-c", script, outputByteLimit=10),
                step("wait_for_exit"),
                step("output"),
            ],
            tmp_path,
        )
    )
    result = got[2][1]["result"]
    assert result["truncated"] is True
    assert result["output"] == "éééEND"  # 9 bytes: the 10th was half an "é"


def test_a_cwd_outside_the_session_is_refused(tmp_path: Path) -> None:
    inner = tmp_path / "project"
    inner.mkdir()
    (inner / "out").symlink_to(tmp_path)
    marker = tmp_path / "ran"
    tries = [
        create("/bin/sh", "-c", f"touch {marker}", cwd=str(tmp_path)),
        create("/bin/sh", "-c", f"touch {marker}", cwd="../"),
        create("/bin/sh", "-c", f"touch {marker}", cwd="out"),
        create("/bin/sh", "-c", f"touch {marker}", cwd="/"),
    ]
    got, _ = asyncio.run(turn(tries, inner))
    for _, answer in got:
        assert answer["error"]["code"] == -32602
        assert "outside the session's working directory" in answer["error"]["data"]["details"]
    assert not marker.exists()


def test_kill_ends_the_command_and_its_detached_child(tmp_path: Path) -> None:
    marker = f"{time.time() % 1000:.3f}{uuid.uuid4().int % 1000}"
    # The child leaves in a session of its own: killing the terminal's group misses it.
    script = f"setsid sleep 3{marker} & echo started; wait"
    got, _ = asyncio.run(
        turn(
            [
                create("/bin/sh", "-c", script),
                step("output", sleep=0.5),
                step("kill"),
                step("wait_for_exit"),
                step("output"),
                step("release"),
            ],
            tmp_path,
        )
    )
    assert got[1][1]["result"]["output"] == "started\n"
    assert got[2][1] == {"result": {}}
    assert got[3][1] == {"result": {"signal": "SIGTERM"}}
    assert got[4][1]["result"]["exitStatus"] == {"signal": "SIGTERM"}
    assert marked_alive(f"sleep 3{marker}") == []


def test_every_terminal_ends_with_the_client(tmp_path: Path) -> None:
    marker = f"{uuid.uuid4().int % 100000}"
    got, _ = asyncio.run(
        turn([create("/bin/sh", "-c", f"setsid sleep 4{marker} & sleep 5{marker}")], tmp_path)
    )
    assert "result" in got[0][1]
    assert marked_alive(f"sleep 4{marker}") == []
    assert marked_alive(f"sleep 5{marker}") == []


def test_every_terminal_ends_when_the_agent_dies(tmp_path: Path) -> None:
    marker = f"{uuid.uuid4().int % 100000}"

    async def run() -> str:
        client = await minime.connect(
            command=[sys.executable, str(AGENT)], cwd=tmp_path, terminal=True
        )
        session = await client.new_session()
        steps = [
            {**create("/bin/sh", "-c", f"setsid sleep 6{marker} & sleep 7{marker}"), "exit": 4}
        ]
        try:
            await session.complete(json.dumps(steps))
        except minime.Error as exc:
            error = str(exc)
        deadline = time.monotonic() + 5
        while marked_alive(f"{marker}") and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        alive = marked_alive(marker)
        await client.close()
        return error + f" alive={alive}"

    said = asyncio.run(run())
    assert "exit status 4" in said
    assert said.endswith("alive=[]")


def test_a_terminal_call_shows_its_output_live_and_in_its_result(tmp_path: Path) -> None:
    script = "echo first; sleep 0.3; echo second"
    _, events = asyncio.run(
        turn(
            [
                {**create("/bin/sh", "-c", script), "tool": True},
                step("wait_for_exit", done=True),
            ],
            tmp_path,
        )
    )
    live = [e.output for e in events if e.kind == "terminal"]
    assert live and live[-1] == "first\nsecond\n"
    assert "first\n" in live  # shown before the command ended
    assert {e.call.id for e in events if e.kind == "terminal" and e.call} == {"call-1"}
    assert [e.status for e in events if e.kind == "terminal"][-1] == "exit status 0"
    results = [e for e in events if e.kind == "tool_result"]
    assert [(r.call.id, r.output) for r in results] == [("call-1", "first\nsecond\n")]


def test_a_terminal_of_another_session_is_not_reachable(tmp_path: Path) -> None:
    got, _ = asyncio.run(turn([step("output", params={"terminalId": "term-99"})], tmp_path))
    assert "unknown terminal" in got[0][1]["error"]["data"]["details"]


def test_a_completed_update_without_content_keeps_the_terminal_output(tmp_path: Path) -> None:
    # ACP: an update that names no content leaves the call's content as it was; the
    # terminal's output is the call's output, after terminal/release too.
    script = "echo first; echo second"
    for last in (
        [step("wait_for_exit", done="bare"), step("release")],
        [step("wait_for_exit"), step("release", done="bare")],
    ):
        _, events = asyncio.run(
            turn([{**create("/bin/sh", "-c", script), "tool": True}, *last], tmp_path)
        )
        results = [(e.call.id, e.status, e.output) for e in events if e.kind == "tool_result"]
        assert results == [("call-1", "completed", "first\nsecond\n")], last


def test_an_output_limit_past_the_cap_keeps_the_cap(tmp_path: Path) -> None:
    # outputByteLimit = 1e12 kept 60 MB (and copied it at every read): the cap holds.
    cap = MAX_OUTPUT_LIMIT
    script = f"head -c {cap + 5000} /dev/zero | tr '\\0' a; printf END"
    got, _ = asyncio.run(
        turn(
            [
                create("/bin/sh", "-c", script, outputByteLimit=10**12),
                step("wait_for_exit"),
                step("output"),
            ],
            tmp_path,
        )
    )
    result = got[2][1]["result"]
    assert result["truncated"] is True
    assert len(result["output"]) == cap
    assert result["output"].endswith("aaaEND")


def test_random_outputs_keep_their_last_bytes_at_a_character_boundary(tmp_path: Path) -> None:
    seed = random.randrange(1 << 30)
    print("seed", seed)
    rng = random.Random(seed)
    cases = []
    for n in range(6):
        text = "".join(rng.choice("aé日😀\n") for _ in range(rng.randrange(0, 40_000)))
        limit = rng.choice([0, 1, 3, 100, 4096, 65536, 200_000])
        path = tmp_path / f"out{n}"
        path.write_text(text, encoding="utf-8")
        cases.append((text.encode(), limit, path))
    steps: list[dict[str, Any]] = []
    for _, limit, path in cases:
        # dd's small blocks: many reads, so the kept bytes are cut more than once.
        line = f"dd if={path} bs=777 2>/dev/null"
        steps += [create("/bin/sh", "-c", line, outputByteLimit=limit), step("wait_for_exit")]
        steps.append(step("output"))
    got, _ = asyncio.run(turn(steps, tmp_path))
    for n, (data, limit, _) in enumerate(cases):
        result = got[3 * n + 2][1]["result"]
        expected = utf8_tail(data, limit).decode()
        assert result["output"] == expected, (seed, n, limit, len(data))
        assert result["truncated"] is (len(data) > limit), (seed, n)
