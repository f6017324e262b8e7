"""What Lua asks of the host: one Struct per operation's payload, decoded once in dispatch,
and ``OPS``, the one table of where each operation goes.

Lua sends ``vim.rpcnotify(chan, "minime", op, payload)`` (job route) or
``MiniMeNotify(op, payload)`` (rplugin route); lua/minime/actions.lua, host.lua and
tools/init.lua build the payloads. ``decode`` turns one into its Struct or raises
``Malformed`` with words for the user (the host logs it and says so; never a traceback).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import msgspec


class Malformed(Exception):
    """A payload that is not the operation's shape."""


def _table(value: Any) -> Any:
    """An empty Lua table crosses msgpack as an array: where a table with keys is meant."""
    return {} if value == [] else value


class Op(msgspec.Struct, kw_only=True):
    """The payload of one operation."""


class ToolDecl(msgspec.Struct, kw_only=True):
    """A Lua tool's declaration (``require('minime.tools').builtin_specs()`` and
    ``user_tool_specs()``); a built-in's schema is JSON text (key order kept)."""

    name: str
    description: str | None = None
    # A user tool's `input_schema = {}` (Lua allows it) crosses as an empty array: no schema.
    input_schema: str | dict[str, Any] | list[Any] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.input_schema, list):
            if self.input_schema:
                raise ValueError(f"tool {self.name}: input_schema must be a table with keys")
            self.input_schema = None


class Setup(Op, kw_only=True):
    """The options the host needs (no Lua functions cross): lua/minime/host.lua send_setup."""

    builtin_tools: list[ToolDecl] = msgspec.field(default_factory=list)
    user_tools: list[ToolDecl] = msgspec.field(default_factory=list)
    # Each {pattern, decision}; prompts.py skips an entry of another shape.
    permission_rules: list[Any] = msgspec.field(default_factory=list)
    fs: bool = True  # lend the agent the ACP file system through the buffers
    additional_directories: list[str] = msgspec.field(default_factory=list)  # absolute paths


class Settings:
    """The last ``setup`` Lua sent, read by the host's parts at each use (setup may come again:
    the object is handed to them once, its ``setup`` replaced)."""

    def __init__(self) -> None:
        self.setup = Setup()


class ThreadOp(Op, kw_only=True):
    """An operation on one thread: the id Lua gave it (lua/minime/threads.lua) and the cwd it
    works in (the host makes the thread the first time an operation names it)."""

    cwd: str
    thread: str


class CloseThread(ThreadOp, kw_only=True):
    """:MiniMeThreads' ``x`` (close: ``session/close`` where offered, else forgotten) or ``d``
    (delete: ``session/delete``); mid-turn the turn is cancelled first."""

    action: Literal["close", "delete"] = "close"


class RenameThread(ThreadOp, kw_only=True):
    """:MiniMeThreads' ``r``: the title the overview shows from now on ("": the agent's)."""

    title: str


class Stop(Op, kw_only=True):
    quiet: bool = False


class Log(Op, kw_only=True):
    pass


class BudgetLimits(msgspec.Struct, kw_only=True):
    """``budget = { cost, tokens }`` (setup, or the agent's definition): what a thread's
    session may spend, in the agent's currency and in tokens (nvim/budget.py)."""

    cost: float | None = None
    tokens: int | None = None


class AgentOp(ThreadOp, kw_only=True):
    """An operation on a thread that may start its agent, as lua/minime/agents/ resolved it
    (actions.lua host_payload), with the tools the user turned off there (config.lua
    disabled_tools: the one thing of the tools' context the host reads; the rest stays in Lua)."""

    agent: str | None = None
    label: str | None = None
    agent_cmd: list[str] | None = None
    agent_env: dict[str, str] = msgspec.field(default_factory=dict)
    agent_file: str | None = None
    discovery: str | None = None
    editor_tools: str = "client"  # "client" | "mcp" | "none" (lua/minime/agents/init.lua)
    # How the agent's model sees an editor tool's name ("%s": the tool's): the tools' texts
    # name each other so. What to check when it never starts the editor's MCP server.
    tool_names: str = "client_%s"
    mcp_hint: str | None = None
    # The definition's and setup's own MCP servers, as given (the library checks them).
    mcp_servers: list[Any] = msgspec.field(default_factory=list)
    mode: str | None = None
    disabled_tools: list[str] | None = None
    ready_timeout: float | None = None
    cancel_timeout: float | None = None
    budget: BudgetLimits | None = None


class Mention(msgspec.Struct, kw_only=True):
    """One ``@path`` of an ask, as lua/minime/editor/mentions.lua resolved and read it: either
    ``refused`` (why; nothing else of it is known here) or a ``kind`` with its cwd-relative
    ``name`` and ``uri``, and for a file its ``text`` (the buffer's), for an image its base64
    ``data``; ``too_big`` (over mention_max_bytes: ``size``) or ``binary``: no content."""

    mention: str  # as typed: "@notes.txt"
    refused: str | None = None
    kind: Literal["file", "directory", "image"] | None = None
    name: str = ""
    uri: str = ""
    mime_type: str | None = None
    text: str | None = None
    data: str | None = None
    too_big: bool = False
    size: int | None = None
    binary: bool = False


class Ask(AgentOp, kw_only=True):
    prompt: str = ""
    context: str | None = None  # the prompt with the selected lines, sent to the agent
    lines_from: str | None = None  # those lines named ("README.md:10-14"), shown under the prompt
    ask_id: int | None = None  # names the selection kept in Lua (editor/asks.lua)
    mentions: list[Mention] = msgspec.field(default_factory=list)
    queue: bool = True  # setup{ queue }: mid-turn (or mid-start), wait; False: refused
    fix: bool = False  # :MiniMeFix: the thread's new diagnostics go along (nvim/feedback.py)


class Resend(Ask, kw_only=True):
    """`e` on ask ``before`` of the conversation (lua/minime/rewind/keys.lua): the files went
    back to before it (``files`` says how: "3 files restored, 1 removed"); the conversation
    continues from before it with this ask (nvim/resend.py)."""

    before: int
    files: str = ""


class Warm(AgentOp, kw_only=True):
    """The thread's agent and session, started while the first ask is typed (lua/minime/warm.lua)
    or as :MiniMeNew makes it."""


class Sessions(AgentOp, kw_only=True):
    pass


class ManageSession(AgentOp, kw_only=True):
    """:MiniMeSessions' close (``session/close``) or delete (``session/delete``) of one."""

    session_id: str
    action: Literal["close", "delete"]
    title: str | None = None


class Login(AgentOp, kw_only=True):
    """:MiniMeLogin [method]: ``authenticate`` with that method (none: pick one)."""

    method_id: str | None = None


class LoadSession(AgentOp, kw_only=True):
    session_id: str
    title: str | None = None


class SetMode(ThreadOp, kw_only=True):
    """:MiniMeMode: the mode ``mode_id`` for the thread's session (lua/minime/modes.lua)."""

    mode_id: str


class SetConfig(ThreadOp, kw_only=True):
    """:MiniMeConfig: option ``config_id`` set to ``value`` for the thread's session."""

    config_id: str
    value: str | bool


class ElicitationReply(Op, kw_only=True):
    """The user's answer to question ``id`` (elicitation/create): ``accept`` with ``content``
    ({field: value}), ``decline`` (<Esc>, q) or ``cancel``."""

    id: int
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


class PermissionAnswer(Op, kw_only=True):
    """The user's answer to prompt ``id``: an option, or none (rejected); ``remember`` keeps it
    for the session."""

    id: int
    option_id: str | None = None
    remember: bool = False
    # "timeout" when nobody answered in time: ``waited`` seconds (the conversation says so).
    reason: str | None = None
    waited: float | None = None


class ToolResult(Op, kw_only=True):
    """A tool's later answer to call ``id``: {ok, value | error} (lua/minime/tools/init.lua)."""

    id: int
    answer: Any = None


class BaselineTaken(Op, kw_only=True):
    """The baseline the host asked for (``rpc.baseline``, call ``id``) is written
    (lua/minime/review/baseline.lua): the turn's prompt may go (nvim/baselines.py)."""

    id: int


class DiskKept(ThreadOp, kw_only=True):
    """Files under ``cwd`` the thread's agent changed on disk that the refresh left as the user
    had them (unsaved edits; lua/minime/editor/disk_refresh.lua): said in its conversation."""

    files: list[str] = msgspec.field(default_factory=list)


class ShowTerminal(ThreadOp, kw_only=True):
    """:MiniMeTerminal [id]: the output of the client terminal ``terminal_id`` of the thread's
    session (None: its last terminal)."""

    terminal_id: str | None = None


class SetBudget(ThreadOp, kw_only=True):
    """:MiniMeBudget [amount]: ``5`` sets, ``+2`` raises, ``300k`` is tokens; "" says it."""

    amount: str = ""


class ReviewItem(msgspec.Struct, kw_only=True):
    """A hunk the user rejected (:MiniMeReject) or commented on (:MiniMeComment!), in a file
    under the cwd the deny list allows (lua/minime/feedback/review.lua): ``diff`` unified."""

    kind: Literal["rejected", "comment"]
    path: str  # cwd-relative
    diff: str
    text: str = ""  # the comment


class ReviewFeedback(ThreadOp, kw_only=True):
    items: list[ReviewItem] = msgspec.field(default_factory=list)


class DiagnosticItem(msgspec.Struct, kw_only=True):
    """One error or warning a language server reports (lines and columns from 1)."""

    line: int
    col: int
    severity: Literal["error", "warning"]
    message: str
    source: str = ""
    text: str = ""  # the line it is on


class DiagnosticFile(msgspec.Struct, kw_only=True):
    path: str  # cwd-relative
    items: list[DiagnosticItem] = msgspec.field(default_factory=list)


class TurnDiagnostics(AgentOp, kw_only=True):
    """The errors and warnings a thread's last turn caused in the files it changed
    (lua/minime/feedback/diagnostics.lua); ``auto`` (``feedback.diagnostics = "auto"``):
    sent by themselves, at most ``rounds`` times in a row. The agent fields: that ask's."""

    files: list[DiagnosticFile] = msgspec.field(default_factory=list)
    auto: bool = False
    rounds: int = 2


class Route(NamedTuple):
    """Where one operation goes: its payload's Struct and the host's handler (a dotted name of
    the Host: a method, or a method of one of its parts). Handlers run on the ACP loop, but an
    answer to a request that waits there (``now``) is handed over on pynvim's thread at once."""

    payload: type[Op]
    handler: str
    now: bool = False


OPS: dict[str, Route] = {
    "setup": Route(Setup, "op_setup"),
    "ask": Route(Ask, "turns.ask"),
    "warm": Route(Warm, "turns.warm"),
    "resend": Route(Resend, "resender.resend"),
    "cancel": Route(ThreadOp, "turns.cancel"),
    "reset": Route(ThreadOp, "turns.reset"),
    "close_thread": Route(CloseThread, "closer.close"),
    "rename_thread": Route(RenameThread, "op_rename"),
    "stop": Route(Stop, "turns.stop"),
    "log": Route(Log, "show_log", now=True),
    "sessions": Route(Sessions, "reopener.list"),
    "load_session": Route(LoadSession, "reopener.load"),
    "login": Route(Login, "login.run"),
    "manage_session": Route(ManageSession, "reopener.manage"),
    "mode": Route(SetMode, "modes.set_mode"),
    "config": Route(SetConfig, "modes.set_config"),
    "permission_answer": Route(PermissionAnswer, "user_asks.answer", now=True),
    "elicitation_answer": Route(ElicitationReply, "user_asks.answer", now=True),
    "tool_result": Route(ToolResult, "tools.answer", now=True),
    "baseline_taken": Route(BaselineTaken, "turns.baselines.answer", now=True),
    "disk_kept": Route(DiskKept, "op_disk_kept"),
    "terminal": Route(ShowTerminal, "terminal_view.show"),
    "budget": Route(SetBudget, "budgets.set"),
    "review_feedback": Route(ReviewFeedback, "feedback.review"),
    "diagnostics": Route(TurnDiagnostics, "op_diagnostics"),
}

_TABLES = ("agent_env", "content", "budget")


def decode(op: str, payload: Any) -> Op:
    """The Struct of ``op``'s payload; raises Malformed (an unknown op, a wrong shape)."""
    route = OPS.get(op)
    if route is None:
        raise Malformed(f"unknown operation {op!r}")
    kind = route.payload
    payload = _table(payload)
    if isinstance(payload, dict):
        for key in _TABLES:
            if payload.get(key) == []:
                payload = {**payload, key: {}}
    try:
        return msgspec.convert(payload, kind)
    except msgspec.ValidationError as exc:
        raise Malformed(str(exc)) from None
