"""What a session now is: its modes and config options (ACP ``modes`` / ``configOptions``),
read from the agent's answers and updates and changed with ``session/set_mode`` /
``set_config_option``; its usage, title and slash commands.

Agents start in a mode of their own (claude-agent-acp ``auto``, codex-acp an "auto" preset)
that never asks before editing; choosing the mode is how a client gets asked. An agent that
offers its modes only as a config option of category ``mode`` (opencode: ``build``, ``plan``)
has them as its session modes all the same: ``set_mode`` sets that option.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from .errors import Error
from .model import AvailableCommand, ConfigOption, ConfigValue, Event, SessionMode, SessionModes

log = logging.getLogger("minime")

# The events that say what a session now is (kept on it), not what its turn did.
STATE_KINDS = ("mode", "config", "usage", "title", "commands")


def modes_of(model: Any) -> SessionModes | None:
    """The ``modes`` of a session/new, load or resume answer (an SDK model), or None."""
    if model is None:
        return None
    available = [
        SessionMode(id=mode.id, name=mode.name or mode.id, description=mode.description)
        for mode in model.available_modes or []
    ]
    return SessionModes(current=model.current_mode_id, available=available)


def _values(option: Any) -> list[ConfigValue]:
    if option.type == "boolean":
        return [ConfigValue(value=True, name="on"), ConfigValue(value=False, name="off")]
    values = []
    for item in option.options or []:
        inner = getattr(item, "options", None)
        if inner is not None:  # a group of values
            values += [
                ConfigValue(value=v.value, name=v.name, description=v.description, group=item.name)
                for v in inner
            ]
        else:
            values.append(
                ConfigValue(value=item.value, name=item.name, description=item.description)
            )
    return values


def options_of(models: list[Any] | None) -> list[ConfigOption]:
    """The ``configOptions`` of an answer or update (SDK models) as the library's Structs."""
    options = []
    for option in models or []:
        category = option.category if isinstance(option.category, str) else None
        options.append(
            ConfigOption(
                id=option.id,
                name=option.name or option.id,
                type=option.type,
                current=option.current_value,
                values=_values(option),
                description=option.description,
                category=category,
            )
        )
    return options


# An agent's command list is shown and completed, not stored whole: bounded.
MAX_COMMANDS = 200
MAX_COMMAND_TEXT = 300


def commands_of(models: list[Any] | None) -> list[AvailableCommand]:
    """An ``available_commands_update``'s commands (SDK models) as the library's Structs, at
    most MAX_COMMANDS, each text cut to MAX_COMMAND_TEXT characters."""
    commands = []
    for model in (models or [])[:MAX_COMMANDS]:
        command_input = getattr(model, "input", None)
        hint = getattr(getattr(command_input, "root", command_input), "hint", None)
        commands.append(
            AvailableCommand(
                name=model.name[:MAX_COMMAND_TEXT],
                description=(model.description or "")[:MAX_COMMAND_TEXT],
                hint=hint[:MAX_COMMAND_TEXT] if isinstance(hint, str) and hint else None,
            )
        )
    return commands


def modes_of_option(options: list[ConfigOption]) -> tuple[SessionModes, str] | None:
    """The session modes a config option of category ``mode`` offers, and its id (None: no
    such select option)."""
    for option in options:
        if option.category == "mode" and option.type == "select":
            available = [
                SessionMode(id=str(v.value), name=v.name, description=v.description)
                for v in option.values
            ]
            return SessionModes(current=str(option.current), available=available), option.id
    return None


# gemini-cli says a change of its approval mode only as agent text, never current_mode_update.
_MODE_TEXT = re.compile(r"\[MODE_UPDATE\] ([\w-]+)")


def state_event(update: Any) -> Event | None:
    """The event of a ``current_mode_update``, ``config_option_update``, ``usage_update``,
    ``available_commands_update`` or ``session_info_update`` (one that names the title);
    else None."""
    kind = getattr(update, "session_update", None)
    if kind == "available_commands_update":
        return Event(kind="commands", commands=commands_of(update.available_commands))
    if kind == "current_mode_update":
        return Event(kind="mode", mode=update.current_mode_id)
    if kind == "config_option_update":
        return Event(kind="config", config_options=options_of(update.config_options))
    if kind == "usage_update":
        usage: dict[str, Any] = {"used": update.used, "size": update.size}
        if update.cost is not None:
            usage["cost"] = {"amount": update.cost.amount, "currency": update.cost.currency}
        return Event(kind="usage", usage=usage)
    if kind == "session_info_update" and "title" in update.model_fields_set:
        return Event(kind="title", text=update.title or "")  # null: the title is cleared
    return None


class SessionState:
    """What the agent says a session now is: its modes and config options (from the answer to
    session/new, load or resume, then its updates), its usage, title and slash commands."""

    def __init__(self, agent_name: Callable[[], str]) -> None:
        self._agent_name = agent_name  # how refusals name the agent
        self.modes: SessionModes | None = None
        self.config_options: list[ConfigOption] = []
        # The config option that stands for the modes of an agent without ACP modes (None:
        # the modes, if any, are ACP's).
        self.mode_option: str | None = None
        self.usage: dict[str, Any] | None = None  # the last usage_update: {used, size, cost?}
        self.title: str | None = None  # the last session_info_update's title
        # The agent's slash commands, as its last available_commands_update listed them.
        self.commands: list[AvailableCommand] = []

    def take_answer(self, response: Any) -> None:
        """What a session/new, load or resume answer says of the modes and options."""
        self.modes = modes_of(getattr(response, "modes", None))
        self.mode_option = None
        self._options(options_of(getattr(response, "config_options", None)))

    def _options(self, options: list[ConfigOption]) -> None:
        """The config options now; without ACP modes, a ``mode`` option's values are the
        session's modes."""
        self.config_options = options
        if self.modes is not None and self.mode_option is None:
            return
        derived = modes_of_option(options)
        self.modes, self.mode_option = derived if derived is not None else (None, None)

    def event(self, update: Any) -> Event | None:
        """The state event of an update (:func:`state_event`), or the ``mode`` event of
        gemini-cli's agent text ``[MODE_UPDATE] <an offered mode>``."""
        found = state_event(update)
        if found is not None or getattr(update, "session_update", None) != "agent_message_chunk":
            return found
        said = _MODE_TEXT.fullmatch(getattr(update.content, "text", None) or "")
        if said and self.modes is not None and self.modes.find(said.group(1)) is not None:
            return Event(kind="mode", mode=said.group(1))
        return None

    def follow(self, event: Event) -> bool:
        """Keep the state as a ``mode``, ``config``, ``usage``, ``title`` or ``commands`` event
        says it now is; False (and logged) for a mode the agent never offered, which is not
        taken: a mode's id is shown in titles and statuslines, and an agent's ``%{…}`` there
        ran as Vimscript."""
        if event.kind == "mode" and event.mode is not None:
            modes = self.modes
            if modes is None or modes.find(event.mode) is None:
                log.warning(
                    "current_mode_update to a mode %s never offered, ignored (its modes: %s)",
                    ascii(event.mode)[:200],
                    self._offered() or "none",
                )
                return False
            modes.current = event.mode
        elif event.kind == "config" and event.config_options is not None:
            self._options(event.config_options)
        elif event.kind == "usage":
            self.usage = event.usage
        elif event.kind == "title":
            self.title = event.text or None
        elif event.kind == "commands" and event.commands is not None:
            self.commands = event.commands  # each update replaces the whole list
        return True

    def _offered(self) -> str:
        return ", ".join(mode.id for mode in self.modes.available) if self.modes else ""

    def check_mode(self, mode_id: str) -> None:
        """Refuse, in plain words, a mode the agent did not offer."""
        name = self._agent_name()
        if self.modes is None or not self.modes.available:
            raise Error(f"{name} offers no session modes")
        if self.modes.find(mode_id) is None:
            raise Error(f"{name} offers no mode {mode_id!r}; its modes: {self._offered()}")

    def check_option(self, config_id: str, value: str | bool) -> ConfigOption:
        """The option ``config_id``, if ``value`` is one of its values; else a plain Error."""
        option = next((o for o in self.config_options if o.id == config_id), None)
        if option is None:
            known = ", ".join(o.id for o in self.config_options)
            offered = f"; its options: {known}" if known else " (it offers none)"
            raise Error(f"{self._agent_name()} has no config option {config_id!r}{offered}")
        allowed = [v.value for v in option.values]
        if option.type == "boolean" and not isinstance(value, bool):
            raise Error(f"config option {config_id!r} is on or off (true or false), not {value!r}")
        if option.type != "boolean" and (isinstance(value, bool) or value not in allowed):
            listed = ", ".join(str(v) for v in allowed)
            raise Error(f"config option {config_id!r} has no value {value!r}; its values: {listed}")
        return option

    def mode_changed(self, mode_id: str) -> None:
        """After set_mode: the new mode, and the "mode" config option (if any) agrees."""
        self.follow(Event(kind="mode", mode=mode_id))
        for option in self.config_options:
            if option.category == "mode" and any(v.value == mode_id for v in option.values):
                option.current = mode_id

    def option_changed(self, option: ConfigOption, value: str | bool, answer: Any) -> None:
        """After set_config_option: the options as the answer lists them (else the value set),
        and the mode, when the option is the agent's "mode" one."""
        options = options_of(getattr(answer, "config_options", None))
        if not options:
            option.current = value
        self._options(options or self.config_options)
        modes = self.modes
        if option.category == "mode" and isinstance(value, str) and modes and modes.find(value):
            modes.current = value
