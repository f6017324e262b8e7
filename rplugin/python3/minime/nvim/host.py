"""The Neovim adapter: Lua's operations dispatched to the ACP loop, turns rendered in Lua.

Lua sends notifications (``dispatch``) on pynvim's thread; ops.OPS says where each goes, most to
the ACP loop at once. The parts, each handed what it uses once: bridge.py (the only way back
into Neovim), thread_registry.py (the threads: each one session, its queue, what waits on the
user, its state; thread.py), agent_pool.py (the agents; the host is its AgentHooks),
conversation.py (each thread's conversation), editor_tools.py (the editor tools), user_asks.py
with prompts.py and questions.py (permissions and the agent's questions), turns.py (asks,
turns, and the commands that end them), thread_close.py, session_modes.py, session_reopen.py,
resend.py (a conversation continued from before an ask).
"""

from __future__ import annotations

import collections
import logging
import operator
from typing import Any

from .. import permissions
from ..elicitations import DECLINE, ElicitationAnswer, ElicitationRequest
from ..model import PermissionRequest
from . import ops
from .agent_pool import AgentPool
from .bridge import NvimBridge
from .budgets import Budgets
from .conversation import Conversation
from .editor_tools import LuaTools
from .feedback import Feedback
from .login import Login
from .loop_thread import LoopThread
from .prompts import Prompts
from .questions import Questions
from .resend import Resender
from .ring_log import LOG_LINES, RingLog
from .session_modes import SessionModes
from .session_reopen import SessionReopener
from .terminal_view import TerminalView
from .thread_close import ThreadCloser
from .thread_registry import Threads
from .turns import Turns
from .user_asks import UserAsks
from .wire_text import clean

log = logging.getLogger("minime")


class Host:
    def __init__(self, nvim: Any, log_to: str = "minime") -> None:
        """``log_to``: the logger whose records :MiniMeLog shows — ``"minime"`` in Neovim's
        shared python3 host; the root logger (``""``) in our own process, so the ACP SDK's
        records (it logs to the root) show too."""
        self.nvim = nvim
        self.bridge = bridge = NvimBridge(nvim)
        self.loop_thread = LoopThread()
        self.settings = settings = ops.Settings()
        self.threads = threads = Threads(bridge)
        self.conversation = conversation = Conversation(bridge)
        self.tools = LuaTools(bridge, settings, threads, conversation)
        self.log_lines: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        self.stderr_lines: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        self.user_asks = UserAsks(bridge, conversation, self.loop_thread.call_soon)
        self.prompts = Prompts(self.user_asks, conversation, settings)
        self.questions = Questions(self.user_asks, conversation)
        self.pool = AgentPool(bridge, threads, self)
        self.modes = SessionModes(bridge, threads)
        self.login = Login(self.pool, bridge)
        self.reopener = SessionReopener(self.pool, bridge, conversation, threads, self.modes)
        self.terminal_view = TerminalView(threads, bridge)
        self.budgets = Budgets(bridge, conversation, threads)
        self.feedback = Feedback(bridge, conversation, threads)
        self.turns = Turns(
            bridge, threads, conversation, self.pool, self.modes, self.budgets, self.feedback
        )
        self.closer = ThreadCloser(bridge, threads, self.turns, self.pool, self.modes)
        self.resender = Resender(bridge, threads, conversation, self.turns, settings)
        handler = RingLog(self.log_lines)
        logging.getLogger(log_to).addHandler(handler)
        logging.getLogger(log_to).setLevel(logging.INFO)
        self.loop_thread.call_soon(conversation.start)

    def notify_user(self, message: str, level: str = "error") -> None:
        self.bridge.notify(message, level)

    # -- notifications from Lua (on pynvim's thread) --------------------------------

    def dispatch(self, op: str, payload: Any) -> None:
        """One notification from Lua: its payload decoded once, then handed to its handler
        (ops.OPS), on the ACP loop unless it answers a request waiting there."""
        try:
            message = ops.decode(op, payload)
        except ops.Malformed as exc:
            log.warning("a malformed %s request from Lua: %s", op, exc)
            self.notify_user(f"minime: a malformed {op} request from Lua was ignored: {exc}")
            return
        route = ops.OPS[op]
        handler = operator.attrgetter(route.handler)(self)
        if route.now:
            handler(message)
        else:
            self.loop_thread.submit(self._guard(op, handler(message)))

    async def _guard(self, op: str, coro: Any) -> None:
        try:
            await coro
        except Exception as exc:
            log.exception("%s failed", op)
            self.notify_user(f"minime: {op} failed: {exc}")

    def show_log(self, _: ops.Log | None = None) -> None:
        lines = ["# minime log", *self.log_lines, "", "# agent stderr", *self.stderr_lines]
        self.nvim.exec_lua("require('minime.rpc').show_log(...)", [clean(x) for x in lines])

    # -- operations (on the ACP loop) --------------------------------------------------

    async def op_setup(self, setup: ops.Setup) -> None:
        self.settings.setup = setup

    async def op_rename(self, payload: ops.RenameThread) -> None:
        self.threads.get(payload.thread, payload.cwd).rename(payload.title)

    async def op_disk_kept(self, kept: ops.DiskKept) -> None:
        """The disk refresh left these files as the user had them (their unsaved edits)."""
        if kept.files:
            text = (
                "changed on disk by the agent, kept as you left them (unsaved edits;"
                " :e! takes the file): " + ", ".join(kept.files)
            )
            thread = self.threads.get(kept.thread, kept.cwd)
            self.conversation.notice(thread, text)

    async def op_diagnostics(self, payload: ops.TurnDiagnostics) -> None:
        """What a turn caused, shown under it; with ``auto``, sent as the thread's next ask."""
        ask = self.feedback.diagnostics(payload)
        if ask is not None:
            await self.turns.ask(ask)

    # -- what each new agent gets (agent_pool.AgentHooks) ----------------------------------

    def tool_source(self, discovery: str, names: str) -> Any:
        return self.tools.source(discovery, names)

    def file_system(self) -> Any:
        return self.tools.file_system()

    # A request about a session no thread holds (it came as the session was let go) is
    # answered no: nobody is shown it.

    async def ask_permission(self, request: PermissionRequest) -> permissions.Decision:
        thread = self.threads.of_session(request.session_id)
        if thread is None:
            log.info("a permission request for a session no thread holds: rejected")
            return permissions.REJECT
        return await self.prompts.ask(request, thread)

    async def ask_question(self, request: ElicitationRequest) -> ElicitationAnswer:
        thread = self.threads.of_session(request.session_id)
        if thread is None:
            log.info("a question for a session no thread holds: declined")
            return DECLINE
        return await self.questions.ask(request, thread)

    def agent_stderr(self, line: str) -> None:
        self.stderr_lines.append(line)

    def additional_directories(self) -> list[str]:
        return self.settings.setup.additional_directories

    # -- shutdown ----------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Neovim is gone: end every agent's process tree now, without waiting on asyncio."""
        self.pool.kill_all()
        self.loop_thread.stop()
