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
