"""What the client advertises at ``initialize`` (``clientCapabilities``), as an agent receives
it: tests/agents/fs_agent.py answers the prompt ``caps`` with the capabilities it was sent."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import minime

AGENT = Path(__file__).with_name("agents") / "fs_agent.py"


def offered(cwd: Path) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        client = await minime.connect(command=[sys.executable, str(AGENT)], cwd=cwd)
        try:
            session = await client.new_session()
            result = await session.complete("caps")
        finally:
            await client.close()
        return json.loads(result.text.split("CAPS ", 1)[1])

    return asyncio.run(main())


def test_boolean_config_options_are_advertised(tmp_path: Path) -> None:
    """Boolean options work (:MiniMeConfig on/off): agents may send them only when told."""
    caps = offered(tmp_path)
    assert caps["session"]["configOptions"]["boolean"] == {}


def ask(cwd: Path, asks: list[dict[str, Any]], on_elicitation: Any) -> list[dict[str, Any]]:
    """fs_agent sends each request (``sessionId`` filled in unless given); its answers."""

    async def main() -> list[dict[str, Any]]:
        client = await minime.connect(
            command=[sys.executable, str(AGENT)], cwd=cwd, on_elicitation=on_elicitation
        )
        try:
            session = await client.new_session()
            result = await session.complete(json.dumps(asks))
        finally:
            await client.close()
        parts = result.text.split("FS {")[1:]
        return [json.JSONDecoder().raw_decode("{" + part)[0] for part in parts]

    return asyncio.run(main())


FORM = {
    "mode": "form",
    "message": "Which database?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "question_0": {"type": "string", "oneOf": [{"const": "Postgres", "title": "Postgres"}]},
            "question_0_custom": {"type": "string", "title": "Other"},
        },
    },
}


def test_a_form_question_reaches_the_callback_and_its_answer_the_agent(tmp_path: Path) -> None:
    seen: list[minime.ElicitationRequest] = []

    def answer(request: minime.ElicitationRequest) -> minime.ElicitationAnswer:
        seen.append(request)
        return minime.ElicitationAnswer(action="accept", content={"question_0": "Postgres"})

    got = ask(
        tmp_path,
        [
            {"method": "elicitation/create", "params": FORM},
            {"method": "elicitation/create", "params": {**FORM, "sessionId": "never-opened"}},
        ],
        answer,
    )
    assert got[0] == {"result": {"action": "accept", "content": {"question_0": "Postgres"}}}
    assert "error" in got[1] and "never opened" in json.dumps(got[1]), got[1]
    assert len(seen) == 1, "the unknown session's question reached nobody"
    assert seen[0].message == "Which database?"
    assert seen[0].schema["properties"]["question_0"]["oneOf"][0]["const"] == "Postgres"


def test_a_callback_that_raises_declines_and_form_is_advertised_only_with_one(
    tmp_path: Path,
) -> None:
    def broken(request: minime.ElicitationRequest) -> None:
        raise RuntimeError("boom")

    got = ask(tmp_path, [{"method": "elicitation/create", "params": FORM}], broken)
    assert got == [{"result": {"action": "decline"}}]
    assert "elicitation" not in offered(tmp_path)
