"""``start()``: one agent process with one session — the convenience most programs want."""

from __future__ import annotations

import os
from typing import Any

from .client import Client, connect_with
from .errors import Busy
from .model import Result
from .options import checked
from .session import Session
from .turn import Prompt, TurnStream


class Agent:
    """One mm process, one conversation. Calls continue it; one turn at a time."""

    def __init__(self, client: Client, session: Session) -> None:
        self.client = client
        self.session = session

    @property
    def session_id(self) -> str:
        return self.session.session_id

    async def complete(self, prompt: Prompt) -> Result:
        return await self.session.complete(prompt)

    def stream(self, prompt: Prompt) -> TurnStream:
        return self.session.stream(prompt)

    async def cancel(self) -> None:
        await self.session.cancel()

    async def reset(self) -> None:
        """A new session on the same process: the conversation starts over."""
        if self.session.busy:
            raise Busy("cannot reset while a turn runs")
        old = self.session
        self.session = await self.client.new_session(old.cwd)
        self.client.forget(old)

    async def close(self) -> None:
        await self.client.close()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


async def start(config: str | os.PathLike[str] | None = None, **options: Any) -> Agent:
    """Spawn ``<mm> -acp -config <config>`` in ``cwd``, then ``initialize`` and ``session/new``,
    the two together within ``ready_timeout`` (60 s). The options are :func:`connect`'s."""
    client = await connect_with(checked("start", {"config": config, **options}))
    try:
        # One bound for the whole start: session/new gets what initialize left of ready_timeout.
        session = await client.new_session(client.cwd, ready_by=client.ready_by)
    except BaseException:
        await client.close()
        raise
    return Agent(client, session)
