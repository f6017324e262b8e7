"""A scripted model behind Google's Gemini API on loopback (``POST
/v1beta/models/<model>:streamGenerateContent?alt=sse`` and ``:generateContent``), so that
gemini-cli (``GOOGLE_GEMINI_BASE_URL``, ``GEMINI_API_KEY``) acts without a model.

The test gives ``script(contents) -> Reply``: the request's ``contents`` (turns of ``parts``:
``text``, ``functionCall``, ``functionResponse``) in, the model's next step out (text, or one
function call). Requests that offer no tools are gemini-cli's side questions (which model
routes the turn, whether the model should speak next): they get a JSON text that fits the
schema they ask for.
Token counting (``:countTokens``) gets a count. Every request is kept (scripted_http.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agents import scripted_http
from agents.scripted_http import Answer, Reply, Script, ScriptedServer, sse

USAGE = {"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17}
# The answer to a side question, by the type its JSON schema asks for.
PLAIN = {"STRING": "scripted", "INTEGER": 1, "NUMBER": 1, "BOOLEAN": False, "ARRAY": []}


class ModelServer(ScriptedServer):
    base_path = ""  # gemini-cli adds /v1beta/models/… itself

    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    def turns(self) -> list[dict[str, Any]]:
        """The bodies of the agent's own turns (the requests that offer tools), in order."""
        return [body for body in self.posted("enerateContent") if body.get("tools")]

    def function_responses(self) -> list[dict[str, Any]]:
        """Every ``functionResponse`` the agent sent its model, in order, once each."""
        seen: list[dict[str, Any]] = []
        for body in self.turns():
            for content in body.get("contents") or []:
                for part in content.get("parts") or []:
                    found = part.get("functionResponse")
                    if found is not None and found not in seen:
                        seen.append(found)
        return seen

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        if method != "POST":
            return Answer({"models": []})
        if path.endswith(":countTokens"):
            return Answer({"totalTokens": 12})
        verb = path.rsplit(":", 1)[-1]
        if verb not in ("generateContent", "streamGenerateContent"):
            return super().answer(method, path, body)
        if body.get("tools"):
            chunks = list(_chunks(self.script(body.get("contents") or [])))
        else:
            config = body.get("generationConfig") or {}
            schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
            chunks = [_candidate([{"text": json.dumps(side_answer(schema))}], "STOP")]
        if verb == "streamGenerateContent":
            return Answer(events=[sse(chunk) for chunk in chunks])
        return Answer(chunks[-1])


def side_answer(schema: dict[str, Any]) -> Any:
    """A value of ``schema`` (gemini-cli's side questions: which model routes the turn, who
    speaks next): an enum's first value, a plain value of each type, every property filled."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type") or "OBJECT").upper()
    if kind != "OBJECT":
        return PLAIN.get(kind, "scripted")
    properties = schema.get("properties") or {}
    return {name: side_answer(inner) for name, inner in properties.items()}


def _candidate(parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": USAGE, "modelVersion": "scripted"}


def _chunks(reply: Reply) -> Iterator[dict[str, Any]]:
    """One reply as a stream: its text in two halves, then its function call, then the end."""
    half = len(reply.text) // 2
    for piece in (reply.text[:half], reply.text[half:]):
        if piece:
            yield _candidate([{"text": piece}], None)
    if reply.tool is not None:
        call = {"functionCall": {"name": reply.tool, "args": reply.arguments}}
        yield _candidate([call], "STOP")
    else:
        yield _candidate([{"text": ""}], "STOP")


def last_call(contents: list[dict[str, Any]]) -> str | None:
    """The name of the function whose response is the last turn, if it is one."""
    if not contents:
        return None
    for part in contents[-1].get("parts") or []:
        found = part.get("functionResponse")
        if found is not None:
            return str(found.get("name"))
    return None


def user_text(contents: list[dict[str, Any]]) -> str:
    """The last user turn's text (the prompt this step answers)."""
    for content in reversed(contents):
        if content.get("role") == "user":
            texts = [p["text"] for p in content.get("parts") or [] if "text" in p]
            if texts:
                return "".join(texts)
    return ""


@contextmanager
def serving(script: Script) -> Iterator[ModelServer]:
    with scripted_http.serving(ModelServer(script)) as server:
        yield server
