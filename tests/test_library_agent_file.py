"""A library client whose tools mm would not offer (mm's agent file turns client tools off, or
names another discovery mode) is told so on the ``minime`` logger, in plain words, instead of
only mm's stderr saying why (tests against the fake mm)."""

from __future__ import annotations

import asyncio
import logging

import minime
import pytest
from conftest import FakeMM


def tool() -> minime.Tool:
    return minime.Tool("echo", lambda request: "hi", method="_test/echo")


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_request_discovery_against_a_meta_agent_file_is_a_warning(
    mm: FakeMM, caplog: pytest.LogCaptureFixture
) -> None:
    config = mm.config(client_tools={"discovery": "meta"})

    async def main() -> None:
        async with mm.client(config, discovery="request", tools=lambda sid, cwd: [tool()]):
            pass

    with caplog.at_level(logging.WARNING, logger="minime"):
        asyncio.run(main())
    assert warnings(caplog) == [
        f"discovery='request' but the agent file {config} uses 'meta' "
        "(acp.clientTools.discovery): mm offers no tools to a client in another mode; "
        "pass discovery='meta'"
    ]


def test_client_tools_turned_off_in_the_agent_file_is_a_warning(
    mm: FakeMM, caplog: pytest.LogCaptureFixture
) -> None:
    config = mm.config(client_tools={"enabled": False})

    async def main() -> None:
        async with mm.client(config, tools=[tool()]):
            pass

    with caplog.at_level(logging.WARNING, logger="minime"):
        asyncio.run(main())
    assert warnings(caplog) == [
        f"the agent file {config} turns client tools off (acp.clientTools.enabled: false): "
        "mm offers the agent none of this client's tools"
    ]


def test_a_matching_agent_file_or_no_tools_gives_no_warning(
    mm: FakeMM, caplog: pytest.LogCaptureFixture
) -> None:
    matching = mm.config(client_tools={"discovery": "request"}, name="request.yaml")
    off = mm.config(client_tools={"enabled": False}, name="off.yaml")

    async def main() -> None:
        async with mm.client(matching, discovery="request", tools=lambda sid, cwd: [tool()]):
            pass
        async with mm.client(off):  # no tools: nothing is lost
            pass

    with caplog.at_level(logging.WARNING, logger="minime"):
        asyncio.run(main())
    assert warnings(caplog) == []
