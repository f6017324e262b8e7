"""A scripted ``mm -acp``: mm's ACP dialect on mm's Go wire, with a script for a model.

The offline demo agent (``demo/mm``) and the base of the test suite's fake mm
(tests/fake_mm.py, which adds fault injection). No model and no tool ever runs: the prompt is
the script. Usage (mm's own command line; anything else exits 2)::

    python demo/scripted_mm -acp -config agent.yaml      # what demo/mm runs

It follows shared/spec/acp-client-tools.md to the letter: tool discovery (``meta`` and
``request``), the validation of a tool list and its stderr lines, the names and schemas as the
model sees them, the required-parameter check, permissions (mm's four options), the call
itself, both response shapes, errors, timeouts with ``$/cancel_request``, ``maxOutput`` and the
loop detector. The wire is the Go SDK's (``wire``): ids from 1, ``data.error`` in errors.

Agent file (YAML)
-----------------
``yolo`` (false), ``maxOutput`` (50000 characters), ``acp.clientTools.enabled`` (true),
``acp.clientTools.discovery`` (meta | request), ``acp.clientTools.permissions`` (auto | ask),
``acp.clientTools.timeout`` (Go duration, "30s"). This agent's own knobs, under ``fake:``:

=============================  =================================================================
``banner: str``                stderr line written at start, ``{pid}`` replaced by the pid.
``trace: path``                append every line, in and out, to this file as JSON lines
                               ``{"dir": D, "msg": <the line itself>}``; D is in, out, raw
                               (written as is) or bad (an incoming line that does not parse,
                               as a string).
``demo: true``                 the offline demo (set by demo/agent.yaml): a plain prompt plays
                               a short tour (``tour``): thought, plan, a client tool, a bash
                               permission; and the sessions show what mm's spec does not name
                               but the editor shows (``showcase``): modes ``ask``/``yolo``, a
                               config option ``pace``, ``session/list`` of this process's
                               sessions and one earlier scripted session, a title and
                               ``usage_update`` after a turn, a login method. Off (the test
                               suite's fake mm): mm's bare shapes, ``loadSession`` only.
``load_sessions: [...]``       sessions for ``session/list`` and ``session/load``: each
                               ``{sessionId, cwd, title, updatedAt, history: [{role, text}]}``
                               where role is user, agent or thought (replayed on load).
=============================  =================================================================

The script (the prompt's text, one command a line)
-------------------------------------------------
A line without a leading ``/`` is answered ``echo: <line>`` in three chunks. The outputs of
successive lines are separated by ``\\n``. A tool call's line says ``<model name> -> <what the
model read>``, so a test asserts the model's view over the wire.

==============================  ================================================================
``/say TEXT``                   one text chunk.
``/think TEXT``                 one thought chunk.
``/chunks N [SIZE]``            N text chunks of SIZE (16) characters, see ``chunks_text``.
``/slow N``                     N chunks ``slow i\\n`` 50 ms apart; session/cancel stops it.
``/plan``                       a plan update with ``PLAN_ENTRIES``.
``/tools``                      the session's tools as the model sees them, as JSON: a list of
                                ``{name, description, inputSchema, method}``.
``/tool NAME [JSON]``           call a client tool by its name or model name.
``/parallel N NAME [JSON]``     N calls of that tool at once (one model step); a line each.
``/bash CMD``                   the built-in bash: permission unless yolo, then ``ran: CMD``.
``/diff``                       an edit whose permission request carries diff content.
``/error TEXT``                 the model fails: the prompt is answered with mm's error
                                ``{"code":-32603,"message":"Internal error",
                                "data":{"error":TEXT}}``.
``/help``                       the script's commands, one a line, with what each does.
``/tour [N]``                   the next step of the tour of minime.nvim (``tour``), or step N.
==============================  ================================================================

``client_services`` adds ``/question`` (mm's ask_user: a form) and ``/run CMD`` (the client's
terminal); ``edits`` adds ``/shell-write``, ``/ask-write``, ``/fs-write`` and ``/locate`` (a
file changed or read each way an agent does it). Their docstrings say which are mm's.

The prompt's answer carries ``usage``: inputTokens = characters of the prompt, outputTokens =
characters of the answer, totalTokens = their sum.

Where the spec is silent, this agent chooses (and the tests rely on it): entries are numbered
from 0; ``Required parameters: …`` and ``One of: ….`` are appended after one space; a cut
result is exactly ``maxOutput`` characters: head + ``\\n[… N characters cut …]\\n`` + tail; a
timed-out request reads ``{"code":-32603,"message":"Internal error","data":{"error":"context
deadline exceeded"}}`` (Go's error for an expired context); a timed-out list request and a
permission request pending at session/cancel get ``$/cancel_request`` too; a call's tool_call
is reported ``pending``, then ``in_progress`` once allowed, then ``completed``/``failed``; the
loop detector stops a turn at the 6th identical call with the same answer in a row
(``the model repeated the same <tool> call 6 times``).
"""
