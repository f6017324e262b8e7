"""Permission requests answered in the editor: rules first, then what the user remembered,
then a float. Answers arrive from Lua on pynvim's thread; the request waits on the ACP loop.
"""

from __future__ import annotations

import logging

import msgspec

from .. import permission_rules, permissions
from ..model import PermissionRequest, ToolCall
from .conversation import Conversation
from .events import PermissionChoice, PermissionPrompt
from .ops import PermissionAnswer, Settings
from .render import clean, clean_all
from .thread import Thread
from .user_asks import UserAsks

log = logging.getLogger("minime")


class Prompts:
    """``settings`` gives the rules (setup's, read at each request); the float itself and its
    timeout are Lua's (lua/minime/ui/permission.lua)."""

    def __init__(self, asks: UserAsks, conversation: Conversation, settings: Settings) -> None:
        self._conversation = conversation  # a line: who answered, when it was not the user
        self._settings = settings
        self._asks = asks
        # `a` in the float, kept on the client side: the exact request (exact_request) → the
        # agent's allow-once option id.
        self._remembered: dict[tuple[str, str, str, bytes], str] = {}

    async def ask(self, request: PermissionRequest, thread: Thread) -> permissions.Decision:
        """The thread's agent (definition name, label) gives the float's words for what each of
        its options reaches (lua/minime/agents/)."""
        call = request.tool_call
        title = call.title or ""  # a request's call may name none (ACP: a ToolCallUpdate)

        def note(text: str) -> None:
            self._conversation.notice(thread, text)

        rules = self._settings.setup.permission_rules
        match, skipped = permission_rules.first_match(rules, title, call.acp_kind)
        if match is not None:
            verb = "allowed" if match.decision == "allow" else "rejected"
            log.info("permission rule %r answered %s for %r", match.pattern, verb, title)
            note(f"permission {title!r}: {verb} by rule {match.pattern!r}")
            return permissions.ALLOW if match.decision == "allow" else permissions.REJECT
        key = exact_request(request.session_id, call)
        remembered = self._remembered.get(key)
        if remembered is not None:
            note(f"permission {title!r}: allowed again (you pressed `a` for it)")
            return permissions.choose(remembered)

        def prompt(prompt_id: int) -> PermissionPrompt:
            return PermissionPrompt(
                id=prompt_id,
                thread=thread.id,
                cwd=thread.cwd,
                agent=thread.agent,
                agent_label=clean(thread.label),
                session_id=request.session_id,
                call_id=clean(call.id),
                title=clean(title),
                tool_kind=call.acp_kind,
                input=clean_all(call.input),
                content=clean_all(call.content),
                locations=[clean(location.path) for location in call.locations or ()],
                options=[
                    PermissionChoice(option_id=o.option_id, name=clean(o.name), kind=o.kind)
                    for o in request.options
                ],
                skipped=[
                    f"rule {s.pattern!r} not applied: the text its wildcard matched holds "
                    "shell control characters (; & | < > ` $( or a newline)"
                    for s in skipped
                ],
            )

        answer: PermissionAnswer = await self._asks.ask(thread, "permission", prompt)
        if answer.reason == "timeout":
            waited = f"{answer.waited:g} s" if answer.waited else "the time allowed"
            note(f"permission {title!r}: rejected, no answer within {waited}")
        if answer.option_id is None:
            return permissions.REJECT
        if answer.remember:
            self._remembered[key] = answer.option_id
        return permissions.choose(answer.option_id)


def exact_request(session_id: str, call: ToolCall) -> tuple[str, str, str, bytes]:
    """What `a` remembers: the session, the tool kind, the title and the input with the
    request's content (diffs), serialised canonically (keys sorted), so that `a` on
    ``client: read_buffer {"path": "README.md"}`` allows no other file, and `a` on "Run tests"
    with ``command: pytest`` does not allow the same title running something else."""
    try:
        what = msgspec.json.encode({"input": call.input, "content": call.content}, order="sorted")
    except (TypeError, ValueError, OverflowError, RecursionError):
        what = repr((call.input, call.content)).encode()  # e.g. an integer beyond 64 bits
    return (session_id, call.acp_kind, call.title or "", what)
