"""What the host sends to the turn float: one Struct per event shape, the one statement of it.

``require('minime.ui.turn').apply(key, events)`` receives a batch of them
(``msgspec.to_builtins``: each a table whose ``kind`` is the tag below); lua/minime/ui/turn/
init.lua's header describes how each is shown. Fields left at their default are not sent
(Lua ignores nil). Every str here has been through wire_text.clean (render.to_lua does it).
"""

from __future__ import annotations

from typing import Any

import msgspec


class LuaEvent(msgspec.Struct, tag_field="kind", omit_defaults=True):
    """One event for a turn float."""


class Begin(LuaEvent, tag="begin"):
    """A new turn: its prompt goes at the end of the conversation (``fresh``: of an empty one,
    a reopened session's); ``agent`` is the label the float's title shows."""

    prompt: str
    cwd: str
    session_id: str = ""
    agent: str = ""
    fresh: bool = False


class Reset(LuaEvent, tag="reset"):
    """:MiniMeReset: the conversation starts empty."""


class Text(LuaEvent, tag="text"):
    """A chunk of the answer (markdown; may split lines anywhere)."""

    text: str
    message_id: str | None = None  # a new id starts a new paragraph


class Thinking(LuaEvent, tag="thinking"):
    """A chunk of reasoning: dimmed, one fold per block."""

    text: str
    message_id: str | None = None  # a new id starts a new paragraph


class User(LuaEvent, tag="user"):
    """A chunk of a user message (history replayed when a session is loaded): quoted."""

    text: str
    message_id: str | None = None  # a new id starts a new paragraph


class ToolCallShown(LuaEvent, tag="tool_call"):
    """A tool line, inserted or updated by ``id``: the call as the library merged its updates
    so far (minime.ToolCall), shown as it is; no title (or ""): the line shows its id."""

    id: str
    title: str | None = None
    tool_kind: str | None = None
    status: str | None = None
    input: Any = None
    diffs: list[Any] | None = None  # {path, oldText?, newText}: drawn as a unified diff
    locations: list[Any] | None = None  # {path, line?}: the files it works on (follow, <CR>)


class ToolResultShown(LuaEvent, tag="tool_result"):
    """A tool line's status and its (folded) output, after its diffs if any."""

    id: str
    status: str | None = None
    output: str = ""
    more_lines: int = 0  # lines of the output left out: past what the float shows (render.py)
    diffs: list[Any] | None = None
    locations: list[Any] | None = None


class TerminalShown(LuaEvent, tag="terminal"):
    """A client terminal's output now (its end, ``output``), under the tool line ``id`` that
    shows it (None: none does yet) and in its :MiniMeTerminal buffer; ``status``: how it
    ended, once it has."""

    terminal_id: str
    output: str
    id: str | None = None
    status: str | None = None


class Plan(LuaEvent, tag="plan"):
    """The plan block, shown or replaced: entries {content, status, priority}."""

    entries: list[Any] = msgspec.field(default_factory=list)


class Attached(LuaEvent, tag="attached"):
    """What an ask's ``@`` mentions attached (names, never contents), under its prompt."""

    names: list[str] = msgspec.field(default_factory=list)


class Notice(LuaEvent, tag="notice"):
    """A plain info line."""

    text: str


class Rewound(LuaEvent, tag="rewound"):
    """The conversation goes on from before an ask (`e`): one line across it, the earlier
    turns above it (``text``: "rewound to before ask 3 (files restored; …)")."""

    text: str


class Queued(LuaEvent, tag="queued"):
    """The asks waiting for the running turn, oldest first (none: the list is gone)."""

    prompts: list[str] = msgspec.field(default_factory=list)


class Done(LuaEvent, tag="done"):
    """The end of a turn. ``error`` in plain words; ``session_id`` if begin had none."""

    stop_reason: str | None = None
    usage: Any = None
    error: str | None = None
    cwd: str | None = None
    session_id: str | None = None
    # The budget this turn reached, in words ("$2.00 of $2.00"): the turn was cancelled for it.
    budget: str | None = None


class BudgetLine(LuaEvent, tag="budget"):
    """One line of the thread's budget (nvim/budgets.py): ``level`` "warn" (it passed 80%),
    "reached" (its end, outside a turn), "info" (what cannot be enforced for this agent)."""

    text: str
    level: str = "warn"


class DiagnosticsShown(LuaEvent, tag="diagnostics"):
    """The errors and warnings the turn caused, under it: per file {path, items: [{line, col,
    severity, message}]} (lines from 1); ``<CR>`` opens one, ``f`` sends them (:MiniMeFix)."""

    files: list[Any] = msgspec.field(default_factory=list)


# Chunks of these kinds, one after another, are joined into one event before a flush.
STREAMED = (Text, Thinking, User)


# -- What the host hands the other functions of lua/minime/rpc.lua ------------------------------
# Each is the one statement of its shape (rpc.lua's comments point here); NvimBridge.rpc
# encodes it. Every str in them has been through wire_text.clean; None fields are not sent.


class LuaPayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A table for one rpc.lua function."""


class PermissionChoice(LuaPayload):
    option_id: str
    name: str
    kind: str


class PermissionPrompt(LuaPayload):
    """``rpc.permission``: the float of one permission request (lua/minime/ui/permission.lua)
    in ``thread``; ``agent``/``agent_label`` name the agent's definition, ``skipped`` the rules
    not applied."""

    id: int
    thread: str
    cwd: str
    agent: str
    agent_label: str
    session_id: str
    call_id: str
    title: str
    content: list[Any]
    options: list[PermissionChoice]
    skipped: list[str]
    tool_kind: str | None = None
    input: Any = None
    locations: list[str] = msgspec.field(default_factory=list)


class Question(LuaPayload):
    """``rpc.elicitation``: a question from the agent (lua/minime/ui/elicitation.lua);
    ``fields`` are the form's properties in the agent's order, each with ``name`` and
    ``required``; ``thread`` is the thread whose agent asks."""

    id: int
    thread: str
    cwd: str
    session_id: str
    message: str
    fields: list[dict[str, Any]]


class ModesState(LuaPayload):
    """``rpc.modes_update``: what lua/minime/modes.lua keeps of a session (the float's title,
    the statusline, the commands' completion); ``mode`` only if the agent offered it."""

    agent: str
    modes: list[Any]
    config: list[Any]
    commands: list[Any]
    mode: str | None = None
    usage: Any = None
    title: str | None = None


class SessionItem(LuaPayload):
    """One of the agent's earlier sessions for ``rpc.pick_session``."""

    session_id: str
    title: str
    updated_at: str
    cwd: str


class SessionActions(LuaPayload):
    """What the agent lets :MiniMeSessions do with a listed session besides reopening it."""

    close: bool
    delete: bool


class LoginMethod(LuaPayload):
    """One of the agent's authMethods for ``rpc.pick_login``."""

    id: str
    name: str
    description: str | None = None
    type: str | None = None


class TerminalOutput(LuaPayload):
    """``rpc.show_terminal`` (:MiniMeTerminal): a client terminal's output, how it ended, and
    the ids of the session's terminals."""

    terminal_id: str
    output: str
    ids: list[str]
    status: str | None = None


class BudgetState(LuaPayload):
    """``rpc.budget_update``: a thread's budget as the statusline and the footer show it
    (``shown``: "$1.62/$2.00"), ``state`` ok · warned · reached, and why part of it cannot be
    enforced for this agent (lua/minime/budget.lua; :checkhealth)."""

    shown: str
    state: str = "ok"
    agent: str = ""
    cost: bool = False  # it counts the cost (the statusline shows it as spent of the budget)
    known: bool = False  # a turn ended: what the agent sends is known
    unenforced: str | None = None


class ThreadState(LuaPayload):
    """``rpc.thread_update``: what lua/minime/threads.lua keeps of a thread (the overview, the
    statusline's counts, the line said when one off screen ends or waits). ``state``: running,
    waiting (``waiting``: for a permission or a question), done, cancelled, error, idle;
    ``closed``: the thread is gone. ``last_activity``: seconds since the epoch."""

    id: str
    cwd: str
    agent: str = ""
    label: str = ""
    title: str = ""
    state: str = "idle"
    waiting: str | None = None
    session_id: str | None = None
    last_activity: float = 0.0
    closed: bool = False
