"""The channel host: routes each conversation to a session and runs one turn per message."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from runtime.hosts.types import ChannelConfig, ChannelTurnBuilder


def serve_channel(
    *,
    spec_name: str,
    model: str,
    instructions: str,
    channels: Sequence[ChannelConfig],
    session_key: str,
    build_turn: ChannelTurnBuilder,
    root: Path | None = None,
    argv: Sequence[str] | None = None,
) -> int:
    raise NotImplementedError
