"""The review's baseline of a turn, complete before its prompt is sent.

The agent may write the moment it reads the prompt (a shell command, its own edit tool): a
baseline taken beside the turn raced it, and a write that won counted as baseline — hidden
from the review. So the host asks Lua to take it (``rpc.baseline``: the loaded buffers' texts
at once, the git snapshot off Neovim's main loop, lua/minime/review/baseline.lua) and sends the
prompt only once Lua says it is written (op ``baseline_taken``), as a pending editor tool
answers through ``tool_result``. At most TIMEOUT seconds: git on a huge or cold repository
never holds the ask longer; the turn then goes on, the snapshot is marked late and the review
says so (a write before it was done counts as baseline). At 10,000 files it takes tens of
milliseconds (bench/review_snapshot.py, bench/first_ask.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging

from . import ops
from .bridge import NvimBridge

log = logging.getLogger("minime")

TIMEOUT = 3.0


class Baselines:
    def __init__(self, bridge: NvimBridge) -> None:
        self._bridge = bridge
        self._waiting: dict[int, concurrent.futures.Future[None]] = {}
        self._ids = itertools.count(1)

    async def take(self, key: str, cwd: str, agent: str) -> bool:
        """The baseline of a new turn of conversation ``key`` (files in ``cwd``): True once
        written, False when it was not within TIMEOUT (or Lua failed: logged)."""
        call_id = next(self._ids)
        taken: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._waiting[call_id] = taken
        try:
            await self._bridge.rpc_call("baseline", key, cwd, agent, call_id, int(TIMEOUT * 1000))
            await asyncio.wait_for(asyncio.wrap_future(taken), TIMEOUT)
            return True
        except TimeoutError:
            log.warning("the baseline of a turn in %s took over %s s", cwd, TIMEOUT)
            return False
        except Exception as exc:  # Lua failed: the turn goes on without it
            log.warning("no baseline for a turn in %s: %s", cwd, exc)
            return False
        finally:
            del self._waiting[call_id]

    def answer(self, taken: ops.BaselineTaken) -> None:
        """Lua wrote baseline ``taken.id`` (on pynvim's thread)."""
        waiting = self._waiting.get(taken.id)
        if waiting is not None and not waiting.done():
            waiting.set_result(None)
