"""A prompt given as ACP content blocks (not a string) goes to the agent as given, and the
agent's promptCapabilities are the library's to read: tests/agents/prompt_agent.py records the
blocks that crossed the wire."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import minime
import pytest

AGENT = Path(__file__).with_name("agents") / "prompt_agent.py"


def run(tmp_path: Path, prompt: Any) -> tuple[str, dict[str, Any], list[Any]]:
    trace = tmp_path / "prompts.jsonl"

    async def main() -> tuple[str, dict[str, Any]]:
        command = [sys.executable, str(AGENT), str(trace), "embeddedContext,image"]
        client = await minime.connect(command=command, cwd=tmp_path)
        try:
            session = await client.new_session()
            result = await session.complete(prompt)
        finally:
            await client.close()
        return result.text, client.agent_capabilities

    text, caps = asyncio.run(main())
    rows = [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []
    return text, caps, rows


def test_content_blocks_cross_the_wire_as_given(tmp_path: Path) -> None:
    uri = (tmp_path / "a.txt").as_uri()
    blocks = [
        {"type": "text", "text": "see"},
        {"type": "resource", "resource": {"uri": uri, "text": "body\n", "mimeType": "text/plain"}},
        {"type": "resource_link", "uri": uri, "name": "a.txt"},
        {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"},
    ]
    text, caps, rows = run(tmp_path, blocks)
    assert text == "GOT text resource resource_link image"
    assert rows == [blocks]
    prompt_caps = caps["promptCapabilities"]
    assert prompt_caps["embeddedContext"] is True and prompt_caps["image"] is True


def test_a_block_of_no_known_shape_is_an_error_and_nothing_is_sent(tmp_path: Path) -> None:
    with pytest.raises(minime.Error):
        run(tmp_path, [{"type": "text", "text": "x"}, {"type": "video", "data": "x"}])
    assert not (tmp_path / "prompts.jsonl").exists()
