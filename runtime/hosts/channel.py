"""The channel host: routes each conversation to a session and runs one turn per message.

This release ships a local console adapter (real chat adapters such as Slack land in a later
release): each stdin line (or ``--message``) is ``<conversation-key>: <message>``. A conversation
key always maps to the same session id (stable across restarts); every message calls
``build_turn(session id)`` (memory is wired per turn, scoped to the conversation), runs one
single-turn loop seeded with the conversation so far, and prints ``<key>: <reply>``. Malformed
lines and failed turns are reported on stderr and the adapter keeps serving. The channels'
settings (secret references such as ``$SLACK_BOT_TOKEN``) are not resolved by the console
adapter: it never connects anywhere.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from runtime.hosts.console import (
    message_option,
    parse_and_load,
    stderr_log,
    stdin_reader,
)
from runtime.hosts.turns import RoutedLine, run_turn, serve_routed_lines
from runtime.hosts.types import ChannelConfig, ChannelTurnBuilder
from runtime.ids import conversation_session_id
from runtime.loop import iter_messages
from runtime.paths import StoreLayout
from runtime.secrets import SecretRef

LINE_SHAPE = "<conversation-key>: <message>"


def serve_channel(
    *,
    spec_name: str,
    model: str | SecretRef,
    instructions: str,
    channels: Sequence[ChannelConfig],
    session_key: str,
    build_turn: ChannelTurnBuilder,
    root: Path | None = None,
    argv: Sequence[str] | None = None,
) -> int:
    parser = argparse.ArgumentParser(
        prog=spec_name, description=f"Serve the {spec_name} bot on the local console."
    )
    message_option(parser, f'a line "{LINE_SHAPE}"')
    started = parse_and_load(parser, argv, model, spec_name)
    if isinstance(started, int):
        return started
    args, chosen = started
    sessions_dir = StoreLayout.for_cwd((root or Path.cwd()).resolve(), spec_name).sessions_dir
    names = ", ".join(channel.name for channel in channels) or "none"
    stderr_log(
        f"{spec_name} · channel bot on the local console · model {chosen.model_id} · "
        f"one session per {session_key} · configured channels: {names} (not connected: chat "
        f"adapters land in a later release) · send lines as {LINE_SHAPE}\n"
    )

    def handle(routed: RoutedLine) -> list[str]:
        session_id = conversation_session_id(spec_name, "channel", routed.key)
        _, replies = run_turn(
            model=chosen,
            instructions=instructions,
            setup=build_turn(session_id),
            sessions_dir=sessions_dir,
            session_id=session_id,
            message=routed.message,
            spec_name=spec_name,
            target="channel",
            info={"conversation": routed.key},
            log=stderr_log,
        )
        return replies

    messages: list[str] = args.message
    status = serve_routed_lines(
        iter_messages(messages if messages else stdin_reader()),
        spec_name=spec_name,
        line_shape=LINE_SHAPE,
        handle=handle,
    )
    if status != 0:
        return status
    stderr_log(f"session logs: {sessions_dir}\n")
    return 0
