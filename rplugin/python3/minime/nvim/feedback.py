"""What the editor tells the agent back, with the thread's next ask: the user's review (the
hunks rejected with :MiniMeReject, the comments kept with :MiniMeComment!) and the errors and
warnings its last turn caused (lua/minime/feedback/, shown under that turn; :MiniMeFix sends
them, ``feedback.diagnostics = "auto"`` by itself at most ``feedback.rounds`` times in a row).

Each goes once, as a resource block after the prompt (a text block where the agent takes no
embedded resources), at the moment the ask's turn starts; the conversation says so
(``📎 review: 2 hunks rejected, 1 comment``). Kept per thread, here: an ask refused or
cancelled before its turn leaves them for the next one.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

from . import events, ops
from .bridge import NvimBridge
from .conversation import Conversation
from .thread import Thread
from .thread_registry import Threads
from .wire_text import clean

# Bounds of what is kept: a day of rejections is not one prompt.
MAX_REVIEW_ITEMS = 50
MAX_DIFF_CHARS = 20_000
FIX_PROMPT = (
    "Fix the new errors and warnings the language server reports in the files your last turn"
    " changed (attached)."
)
REVIEW_URI = "minime://feedback/review"
DIAGNOSTICS_URI = "minime://feedback/diagnostics"


@dataclass
class ThreadFeedback:
    review: list[ops.ReviewItem] = field(default_factory=list)
    diagnostics: list[ops.DiagnosticFile] = field(default_factory=list)
    rounds: int = 0  # asks sent by themselves in a row (feedback.diagnostics = "auto")
    auto_ask: ops.Ask | None = None  # the last of them
    auto_of: int = 0  # feedback.rounds when it was made


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def review_words(items: list[ops.ReviewItem]) -> str:
    rejected = sum(1 for i in items if i.kind == "rejected")
    comments = len(items) - rejected
    parts = [f"{_plural(rejected, 'hunk')} rejected"] if rejected else []
    parts += [_plural(comments, "comment")] if comments else []
    return "review: " + ", ".join(parts)


def review_text(items: list[ops.ReviewItem]) -> str:
    out = ["The user reviewed your changes in the editor."]
    for item in items:
        diff = item.diff[:MAX_DIFF_CHARS]
        fence = _fence(diff)
        if item.kind == "rejected":
            head = (
                f"Rejected in {item.path}: the user put the old lines back (do not make this"
                " change again unless asked):"
            )
        else:
            head = f"Comment on a hunk in {item.path}: {item.text}"
        out += ["", head, f"{fence}diff", diff.rstrip("\n"), fence]
    return "\n".join(out) + "\n"


def _counts(files: list[ops.DiagnosticFile]) -> str:
    errors = sum(1 for f in files for i in f.items if i.severity == "error")
    warnings = sum(1 for f in files for i in f.items if i.severity == "warning")
    parts = [_plural(errors, "error")] if errors else []
    parts += [_plural(warnings, "warning")] if warnings else []
    where = files[0].path if len(files) == 1 else f"{len(files)} files"
    return f"{', '.join(parts)} in {where}"


def diagnostics_text(files: list[ops.DiagnosticFile]) -> str:
    out = [
        "New errors and warnings the language server reports in the files your last turn"
        " changed (not there before it):"
    ]
    for f in files:
        out.append("")
        for i in f.items:
            source = f" [{i.source}]" if i.source else ""
            out.append(f"{f.path}:{i.line}:{i.col}: {i.severity}: {i.message}{source}")
            if i.text.strip():
                out.append(f"    {i.text.strip()}")
    return "\n".join(out) + "\n"


def _shown(item: ops.DiagnosticItem) -> dict[str, Any]:
    return {
        "line": item.line,
        "col": item.col,
        "severity": item.severity,
        "message": clean(item.message),
    }


def block(uri: str, text: str, capabilities: dict[str, Any]) -> dict[str, Any]:
    """``text`` as a resource block, or a text block for an agent that takes none."""
    caps = capabilities.get("promptCapabilities") or {}
    if caps.get("embeddedContext") is True:
        resource = {"uri": uri, "text": text, "mimeType": "text/plain"}
        return {"type": "resource", "resource": resource}
    return {"type": "text", "text": "\n\n" + text}


class Feedback:
    def __init__(self, bridge: NvimBridge, conversation: Conversation, threads: Threads) -> None:
        self._bridge = bridge
        self._conversation = conversation
        self._threads = threads
        self._of: weakref.WeakKeyDictionary[Thread, ThreadFeedback] = weakref.WeakKeyDictionary()

    def of(self, thread: Thread) -> ThreadFeedback:
        kept = self._of.get(thread)
        if kept is None:
            kept = self._of[thread] = ThreadFeedback()
        return kept

    # -- what Lua sends ---------------------------------------------------------------------

    async def review(self, payload: ops.ReviewFeedback) -> None:
        """Hunks rejected, comments kept: they go with the thread's next ask."""
        kept = self.of(self._threads.get(payload.thread, payload.cwd)).review
        kept.extend(payload.items)
        del kept[:-MAX_REVIEW_ITEMS]

    def diagnostics(self, payload: ops.TurnDiagnostics) -> ops.Ask | None:
        """What the thread's last turn caused (none: nothing new): kept in place of the turn's
        before, shown under it; with ``auto``, the ask that sends them (None when it has gone
        ``rounds`` times in a row already, which is said)."""
        thread = self._threads.get(payload.thread, payload.cwd)
        kept = self.of(thread)
        files = kept.diagnostics = [f for f in payload.files if f.items]  # the last turn's
        if not files:
            return None
        shown = [{"path": clean(f.path), "items": [_shown(i) for i in f.items]} for f in files]
        self._conversation.render(thread, events.DiagnosticsShown(shown))
        if not payload.auto:
            return None
        if kept.rounds >= payload.rounds:
            self._conversation.notice(
                thread,
                f"not sent by themselves: {_plural(kept.rounds, 'round')} in a row already"
                " (feedback.rounds) — :MiniMeFix (or f on them) sends them",
            )
            return None
        fields = {name: getattr(payload, name) for name in ops.AgentOp.__struct_fields__}
        ask = ops.Ask(**fields, prompt=FIX_PROMPT, fix=True)
        kept.auto_ask, kept.auto_of = ask, payload.rounds
        return ask

    # -- an ask --------------------------------------------------------------------------------

    @staticmethod
    def word(ask: ops.Ask) -> None:
        """A fix asked without words (:MiniMeFix, `f`) gets the plugin's."""
        if ask.fix and not ask.prompt.strip():
            ask.prompt = FIX_PROMPT

    def check(self, thread: Thread, ask: ops.Ask) -> str | None:
        """Why a fix cannot go (nothing to send), or None."""
        if ask.fix and not self.of(thread).diagnostics:
            return f"minime: no new errors or warnings to send in {thread.cwd}"
        return None

    def attach(
        self, thread: Thread, ask: ops.Ask, prompt: str | list[dict[str, Any]], caps: dict[str, Any]
    ) -> str | list[dict[str, Any]]:
        """The prompt with what the thread keeps for its next ask; said in the conversation.
        The diagnostics go with a fix only; the next turn's end replaces them."""
        kept = self.of(thread)
        if ask is kept.auto_ask:
            kept.rounds += 1
        else:
            kept.rounds = 0
        added = []
        if kept.review:
            added.append(block(REVIEW_URI, review_text(kept.review), caps))
            self._conversation.render(thread, events.Attached([clean(review_words(kept.review))]))
            kept.review = []
        if ask.fix and kept.diagnostics:
            added.append(block(DIAGNOSTICS_URI, diagnostics_text(kept.diagnostics), caps))
            words = "diagnostics: " + _counts(kept.diagnostics)
            if ask is kept.auto_ask:
                words += (
                    ' — sent by themselves (feedback.diagnostics = "auto"), round'
                    f" {kept.rounds} of {kept.auto_of}"
                )
            self._conversation.render(thread, events.Attached([clean(words)]))
            kept.diagnostics = []
        if not added:
            return prompt
        blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else list(prompt)
        return blocks + added

    def reset(self, thread: Thread) -> None:
        """:MiniMeReset: a new conversation starts with nothing kept."""
        self._of.pop(thread, None)
