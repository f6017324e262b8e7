"""Edit and resend (`e` on an ask of the conversation, lua/minime/rewind/keys.lua): Lua has put
the files back to before ask N; here the conversation goes on from before it. The thread's
session is branched (minime.branch: forked at the agent's last message before ask N where the
agent forks sessions, else a new session given the asks and answers before it), a line across
the conversation says which way, and the edited ask is that branch's first turn. The earlier
session is let go of (closed where the agent closes sessions): its turns stay readable above
the line, and nothing says the agent forgot what it did not — a fork holds what it holds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, cast

from ..errors import Error
from . import events, ops
from .wire_text import clean

if TYPE_CHECKING:
    from ..branch import Branch
    from ..client import Client
    from ..session import Session
    from .bridge import NvimBridge
    from .conversation import Conversation
    from .thread_registry import Threads
    from .turns import Turns

log = logging.getLogger("minime")

HOW = {
    "fork": "the agent's session forked before it",
    "history": "new session with the history",
    "new": "new session",
}
_BACKGROUND: set[asyncio.Task[None]] = set()


class Resender:
    def __init__(
        self,
        bridge: NvimBridge,
        threads: Threads,
        conversation: Conversation,
        turns: Turns,
        settings: ops.Settings,
    ) -> None:
        self._settings = settings
        self._bridge = bridge
        self._threads = threads
        self._conversation = conversation
        self._turns = turns

    async def resend(self, resend: ops.Resend) -> None:
        thread = self._threads.get(resend.thread, resend.cwd)
        refusal = thread.refusal(":MiniMeCancel stops it; your text is kept for the next input")
        old, client = thread.session, thread.client
        if refusal is None and (old is None or client is None or not client.alive):
            refusal = (
                "minime: the session of that ask is gone (its agent stopped, or a new"
                " conversation began): nothing to continue from"
            )
        if refusal is not None:
            self._bridge.notify(refusal, "warn")
            self._conversation.keep_text(resend)
            return
        assert old is not None and client is not None
        waiting = thread.begin_waiting()  # an ask meanwhile waits for the branch, or is refused
        try:
            dirs = self._settings.setup.additional_directories
            # The thread's one "waiting" slot holds it (typed for a session's start).
            work = cast("Awaitable[Any]", client.branch(old, resend.before, dirs))
            branch = cast("Branch | None", await waiting.wait(work))
        except Error as exc:
            self._bridge.notify(f"minime: the conversation could not go back: {exc}", "error")
            self._conversation.keep_text(resend)
            return
        finally:
            thread.finish_waiting(waiting)
        if branch is None:  # cancelled meanwhile
            self._conversation.keep_text(resend)
            return
        self._let_go(client, old)
        thread.opened(client, branch.session)
        files = resend.files or "files restored"
        line = f"rewound to before ask {resend.before} ({files}; {HOW[branch.how]})"
        self._conversation.render(thread, events.Rewound(clean(line)))
        if branch.note:
            self._conversation.notice(thread, branch.note)
        await self._turns.ask_in_branch(thread, resend, branch.prompt)

    def _let_go(self, client: Client, old: Session) -> None:
        """The earlier session: closed where the agent closes sessions, else forgotten."""
        caps = client.agent_capabilities.get("sessionCapabilities") or {}
        if isinstance(caps, dict) and caps.get("close") is not None:
            task = asyncio.get_running_loop().create_task(self._close(client, old))
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)
        else:
            client.forget(old)

    async def _close(self, client: Client, old: Session) -> None:
        try:
            await client.close_session(old.session_id)
        except Error as exc:
            log.info("the session left by a resend was not closed: %s", exc)
            client.forget(old)
