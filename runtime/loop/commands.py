"""Slash commands in the agent loop: parsing ``/name args`` and the help listing.

``/help`` and ``/exit`` belong to the loop; every other command comes from the spec's
``slash_commands`` and is expanded into a synthetic user message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.patterns import LazyPattern
from specwire.runtime.core.seams import SlashCommand

HOST_COMMANDS: dict[str, str] = {
    "help": "list the commands",
    "exit": "end the session",
}

_COMMAND = LazyPattern(r"^/([A-Za-z][\w-]*)(?:\s+(.*))?$", re.DOTALL)


@lazy_dataclass(frozen=True)
class CommandLine:
    """A typed ``/name arguments`` line."""

    name: str
    arguments: str


def parse_command(text: str) -> CommandLine | None:
    """``/name args`` as a command; anything else (including ``/`` alone) is not one."""
    match = _COMMAND.match(text.strip())
    if match is None:
        return None
    return CommandLine(match.group(1), (match.group(2) or "").strip())


def help_text(commands: Mapping[str, SlashCommand]) -> str:
    lines = ["Commands:"]
    for name, description in HOST_COMMANDS.items():
        lines.append(f"  /{name} — {description}")
    for name, command in commands.items():
        hint = f" {command.argument_hint}" if command.argument_hint else ""
        lines.append(f"  /{name}{hint} — {command.description or '(no description)'}")
    return "\n".join(lines)


def unknown_command_text(name: str, commands: Mapping[str, SlashCommand]) -> str:
    available = ", ".join(f"/{n}" for n in [*HOST_COMMANDS, *commands])
    return f'Unknown command "/{name}". Available commands: {available}.'
