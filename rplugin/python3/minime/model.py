"""The shapes that cross the library's boundary, declared once with msgspec."""

from __future__ import annotations

import threading
from typing import Any, Literal

import msgspec

EventKind = Literal[
    "text",
    "thinking",
    "tool_call",
    "tool_update",
    "tool_result",
    "plan",
    "done",
    "user",
    "mode",
    "config",
    "usage",
    "title",
    "terminal",
    "commands",
]


class AvailableCommand(msgspec.Struct, kw_only=True):
    """One of the agent's slash commands (ACP ``available_commands_update``): sent as the
    prompt text ``/name input``. ``hint`` says what input it takes, if any."""

    name: str
    description: str = ""
    hint: str | None = None


class SessionMode(msgspec.Struct, kw_only=True):
    """One of the modes an agent offers (ACP ``availableModes``)."""

    id: str
    name: str
    description: str | None = None


class SessionModes(msgspec.Struct, kw_only=True):
    """The session's mode and the ones it may switch to (``currentModeId``, ``availableModes``)."""

    current: str
    available: list[SessionMode] = msgspec.field(default_factory=list)

    def find(self, mode_id: str) -> SessionMode | None:
        return next((mode for mode in self.available if mode.id == mode_id), None)


class ConfigValue(msgspec.Struct, kw_only=True):
    """A value a config option may take (a boolean option's are True and False)."""

    value: str | bool
    name: str
    description: str | None = None
    group: str | None = None


class ConfigOption(msgspec.Struct, kw_only=True):
    """A session config option (ACP ``configOptions``): e.g. the model, or the reasoning level."""

    id: str
    name: str
    type: str  # "select" | "boolean"
    current: str | bool
    values: list[ConfigValue] = msgspec.field(default_factory=list)
    description: str | None = None
    category: str | None = None  # "mode", "model", "thought_level", … (UX only)


class ToolCallLocation(msgspec.Struct, kw_only=True):
    """A file a tool call works on (ACP ``ToolCallLocation``): ``path`` as the agent sent it
    (absolute, by ACP), ``line`` where in it (1 is the first line, as claude-agent-acp sends
    it; None: not said)."""

    path: str
    line: int | None = None


class ToolCall(msgspec.Struct, kw_only=True):
    """A tool call the agent reported (or asks permission for), as its updates so far said it.

    A field is None where no update named it (ACP: an update carries only what changed), and
    what an update names replaces what earlier ones said, ``""`` included: the turn merges
    each update once (minime.turn.merged). ``kind`` is None until an update names one; ACP's
    default for a call that names none is "other": :attr:`acp_kind` says it, for what shows
    the call or matches rules on it. ``input``: ``rawInput`` (an empty ``{}`` after a known
    input keeps it: agents send ``{}`` while they have none). ``content``: the last non-empty
    content. ``locations``: the files it works on (at most MAX_LOCATIONS, see minime.updates).
    """

    id: str
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    input: Any = None
    content: list[Any] = msgspec.field(default_factory=list)
    locations: list[ToolCallLocation] | None = None

    @property
    def acp_kind(self) -> str:
        """The kind by ACP: the one an update named, else "other" (the protocol's default)."""
        return self.kind if self.kind is not None else "other"


class Event(msgspec.Struct, kw_only=True):
    """One step of a streamed turn. Which fields are set depends on ``kind``.

    ``message_id`` (text, thinking, user): the agent's id of the message the chunk belongs to,
    if it sent one; a new id is a new message (agents send several in one turn).
    """

    kind: EventKind
    text: str = ""
    message_id: str | None = None
    call: ToolCall | None = None
    status: str | None = None
    output: str | None = None
    entries: list[dict[str, Any]] = msgspec.field(default_factory=list)
    stop_reason: str | None = None
    usage: dict[str, Any] | None = None
    mode: str | None = None  # "mode": the agent's current mode id now
    config_options: list[ConfigOption] | None = None  # "config": every option as it is now
    commands: list[AvailableCommand] | None = None  # "commands": the agent's list as it is now
    # "usage" (usage_update): ``usage`` is {used, size, cost?: {amount, currency}}, the context
    # window now; "title" (session_info_update): ``text`` is the session's title ("": cleared).
    # "terminal": the live output (``output``, its end) of the client terminal ``text`` (its
    # id), shown by the tool call ``call`` (None: no call shows it yet); ``status``: how it
    # ended ("exit status 0", "killed by SIGTERM"), None while it runs.


class Result(msgspec.Struct):
    """A finished turn: the whole answer (its messages, when the agent sent several, each
    after a blank line), why it stopped, and the tokens used (None if unsent)."""

    text: str
    stop_reason: str
    usage: dict[str, Any] | None = None


class PermissionOption(msgspec.Struct, kw_only=True):
    option_id: str
    name: str
    kind: str


class PermissionRequest(msgspec.Struct, kw_only=True):
    """What ``on_permission`` receives: the call the agent wants to make and its options.

    ``cancelled`` is set when the question is withdrawn (the turn cancelled, the agent's
    ``$/cancel_request``, the connection closed): a sync callback may wait on it (Go's ctx).
    """

    session_id: str
    tool_call: ToolCall
    options: list[PermissionOption]
    cancelled: threading.Event = msgspec.field(default_factory=threading.Event)


class ToolRequest(msgspec.Struct, kw_only=True):
    """What a client tool's handler receives.

    ``cancelled`` is set when the call is cancelled (mm's ``$/cancel_request`` at its timeout,
    the turn cancelled, the connection closed): a sync handler, which no CancelledError can
    reach, polls it or waits on it and returns early (Go's ctx). Its answer is then dropped.
    """

    session_id: str
    arguments: dict[str, Any]
    cwd: str | None = None
    cancelled: threading.Event = msgspec.field(default_factory=threading.Event)


class ToolDescription(msgspec.Struct, omit_defaults=True):
    """A tool as it travels to mm (the spec's "Tool description")."""

    name: str
    method: str
    description: str | None = None
    inputSchema: dict[str, Any] | None = None


class TextBlock(msgspec.Struct):
    text: str
    type: str = "text"


class ToolResult(msgspec.Struct):
    """The content-list answer to a tool call (MCP's ``tools/call`` result shape)."""

    content: list[TextBlock]
    isError: bool = False
