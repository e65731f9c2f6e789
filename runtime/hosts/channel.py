"""The channel host: routes each conversation to a session and runs one turn per message.

``agent.py serve`` answers Slack (Events API) and a JSON webhook over HTTP (see
``runtime.hosts.http.channel_app``); ``agent.py`` or ``agent.py console`` is the local console
adapter: each stdin line (or ``--message``) is ``<conversation-key>: <message>``.

Either way a conversation key always maps to the same session id (stable across restarts);
every message calls ``build_turn(session id, resources, audience)`` (memory is wired per turn,
scoped to the conversation, borrowing the fact store from the host's pool:
``runtime.hosts.resources``), runs one single-turn loop seeded with the conversation so far, and
replies. The audience says who wrote the message and where, as the adapter knows it (Slack: the
user, the channel, whether it is a direct message; the webhook: its ``user``, ``conversation``
and ``direct`` fields; the console: the conversation key): ``memory.scope`` keeps a person's
facts to their direct messages and a channel's facts to that channel.
The spec's MCP tool servers (``mcp_servers``, ``thredz``) start once, before the banner, and
every conversation shares them (``runtime.hosts.tool_servers``).
Malformed lines and failed turns are reported on stderr and the host keeps serving. The console
adapter never resolves the channels' secret references: it connects nowhere.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import ServeConfigError
from specwire.runtime.core.ids import conversation_session_id
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import Audience
from specwire.runtime.hosts.console import load_model, stderr_log, stdin_reader
from specwire.runtime.hosts.http.serving import check_serve_extra, per_turn_argv, run_server
from specwire.runtime.hosts.preflight import StartCheck, bundle_fragment, passes_start_checks
from specwire.runtime.hosts.resources import host_resources
from specwire.runtime.hosts.start_needs import SecretNeed
from specwire.runtime.hosts.tool_servers import HostToolServers, host_tool_servers
from specwire.runtime.hosts.turns import RoutedLine, run_turn, serve_routed_lines
from specwire.runtime.hosts.types import (
    ChannelConfig,
    ChannelTurnBuilder,
    build_with_audience,
    takes_audience,
)
from specwire.runtime.loop import iter_messages
from specwire.runtime.models import Model
from specwire.runtime.models.streaming import StreamSink
from specwire.runtime.safety.secrets import SecretRef, SettingValue
from specwire.runtime.sessions.store import FileSessionLogs, SessionLogs
from specwire.runtime.wiring import (
    HostResources,
    parse_fragment,
    session_logs_for,
    state_in_database,
)

if TYPE_CHECKING:
    from specwire.runtime.core.fragment_data import FragmentData
    from specwire.runtime.dream.model_phase import ModelSession
    from specwire.runtime.hosts.heartbeat import Heartbeat
    from specwire.runtime.hosts.http.slack_dedup_postgres import PostgresSeenEvents
    from specwire.runtime.hosts.http.slack_events import SeenEvents

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
    memory: Mapping[str, Any] | None = None,
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
) -> int:
    parser = argparse.ArgumentParser(prog=spec_name, description=f"The {spec_name} chat bot.")
    args = per_turn_argv(
        parser,
        argv,
        console_help="answer lines typed on the console (the default)",
        line_what=f'a line "{LINE_SHAPE}"',
        serve_help="answer Slack events and the JSON webhook over HTTP",
    )
    if isinstance(args, int):
        return args
    serving = args.command == "serve"
    if serving and not check_serve_extra(spec_name):
        return 2
    check = StartCheck(
        spec_name,
        (("agent.model", model),),
        bundle_fragment(memory, build_turn),
        secrets=serving_secrets(channels) if serving else (),
        cwd=root,
    )
    if not passes_start_checks(check, stderr_log):
        return 2
    chosen = load_model(model, spec_name)
    if chosen is None:
        return 2
    fragment = parse_fragment(check.memory) if check.memory is not None else None
    servers = host_tool_servers(mcp_servers, check.memory, stderr_log)
    if servers is not None:  # once, for every conversation: in the bot's working folder
        servers.start("", (root or Path.cwd()).resolve())
    try:
        with host_resources() as resources:  # one fact store (and its recall index) per process
            bot = _ChannelBot(spec_name, chosen, instructions, build_turn, root, resources)
            bot.servers = servers
            if fragment is not None:  # with memory.state: postgres, the logs are in the database
                bot.logs = session_logs_for(fragment, None, bot.sessions_dir, resources.clock)
                bot.fragment = fragment
            heartbeat = _heartbeat(fragment, servers)
            try:
                if args.command == "serve":
                    return _serve_http(bot, args, channels, session_key)
                return _serve_console(bot, args, channels, session_key)
            finally:
                if heartbeat is not None:
                    heartbeat.stop()
    finally:
        if servers is not None:
            servers.close()


def _heartbeat(
    fragment: FragmentData | None, servers: HostToolServers | None = None
) -> Heartbeat | None:
    """The spec's heartbeat (``learning.study.on_heartbeat``), ticking in the working directory
    as ``build_turn`` wires it (into Thredz's wiki over the bot's instance when the spec learns
    there); loaded only for a spec that asks for one."""
    if fragment is None or fragment.learning is None or not fragment.learning.study_on_heartbeat:
        return None
    from specwire.runtime.hosts.heartbeat import StudyPlace, start_study_heartbeat

    def places() -> list[StudyPlace]:
        study = servers.study_pass("") if servers is not None else None
        return [StudyPlace(Path.cwd(), study=study)]

    return start_study_heartbeat(fragment, places, stderr_log)


class _ChannelBot:
    """One turn of one conversation, whichever adapter delivered the message."""

    def __init__(
        self,
        spec_name: str,
        model: Model,
        instructions: str,
        build_turn: ChannelTurnBuilder,
        root: Path | None,
        resources: HostResources,
    ) -> None:
        self.spec_name = spec_name
        self.model = model
        self.instructions = instructions
        self.build_turn = build_turn
        self.takes_audience = takes_audience(build_turn)
        self.resources = resources
        self.sessions_dir = StoreLayout.for_cwd(
            (root or Path.cwd()).resolve(), spec_name
        ).sessions_dir
        self.logs: SessionLogs = FileSessionLogs(self.sessions_dir)
        self.fragment: FragmentData | None = None
        # The spec's MCP tool servers, started once (``runtime.hosts.tool_servers``).
        self.servers: HostToolServers | None = None
        self._dream_session: ModelSession | None = None

    def dream_session(self) -> ModelSession | None:
        """The model session a scheduled dream's ``mode: full`` runs in: the turns' model over
        the spec's memory (wired as ``build_turn`` wires it, in the working directory)."""
        if self.fragment is None:
            return None
        if self._dream_session is None:
            from specwire.runtime.hosts.dream_session import memory_session

            self._dream_session = memory_session(
                self.fragment, self.model, cwd=Path.cwd(), log=stderr_log
            )
        return self._dream_session

    def seen_events(self) -> SeenEvents | PostgresSeenEvents:
        """Slack's retries seen: in the database with ``memory.state: postgres`` (every worker,
        across restarts), else in this process's memory."""
        from specwire.runtime.hosts.http.slack_events import SeenEvents

        fragment = self.fragment
        if fragment is None or fragment.memory is None or not state_in_database(fragment):
            return SeenEvents()
        from specwire.runtime.facts.providers.connect import DEFAULT_TENANT, shared_postgres_pool
        from specwire.runtime.hosts.http.slack_dedup_postgres import PostgresSeenEvents

        return PostgresSeenEvents(
            shared_postgres_pool(fragment.memory), tenant=DEFAULT_TENANT, spec=self.spec_name
        )

    def answer(
        self,
        key: str,
        message: str,
        info: Mapping[str, Any],
        audience: Audience,
        stream: StreamSink | None = None,
    ) -> tuple[str, list[str]]:
        session_id = conversation_session_id(self.spec_name, "channel", key)
        setup = build_with_audience(
            self.build_turn, self.takes_audience, audience, session_id, self.resources
        )
        if self.servers is not None:
            setup = self.servers.extend(setup, "")
        _, replies = run_turn(
            model=self.model,
            instructions=self.instructions,
            setup=setup,
            sessions_dir=None,
            logs=self.logs,
            session_id=session_id,
            message=message,
            spec_name=self.spec_name,
            target="channel",
            info={"conversation": key, **info},
            log=stderr_log,
            stream=stream,
            dream_session=self.dream_session,
        )
        return session_id, replies


def _serve_console(
    bot: _ChannelBot,
    args: argparse.Namespace,
    channels: Sequence[ChannelConfig],
    session_key: str,
) -> int:
    names = ", ".join(channel.name for channel in channels) or "none"
    stderr_log(
        f"{bot.spec_name} · channel bot on the local console · model {bot.model.model_id} · "
        f"one session per {session_key} · configured channels: {names} (`serve` connects "
        f"them) · send lines as {LINE_SHAPE}\n"
    )

    def handle(routed: RoutedLine) -> list[str]:
        # The console's operator is nobody in particular: the key is the conversation.
        return bot.answer(routed.key, routed.message, {}, Audience(conversation=routed.key))[1]

    messages: list[str] = args.message
    status = serve_routed_lines(
        iter_messages(messages if messages else stdin_reader()),
        spec_name=bot.spec_name,
        line_shape=LINE_SHAPE,
        handle=handle,
    )
    if status != 130:
        stderr_log(f"session logs: {bot.sessions_dir}\n")
    return status


def _serve_http(
    bot: _ChannelBot,
    args: argparse.Namespace,
    channels: Sequence[ChannelConfig],
    session_key: str,
) -> int:
    from specwire.runtime.hosts.http.channel_app import (
        ChannelReply,
        ChannelService,
        SlackSettings,
        build_channel_app,
    )
    from specwire.runtime.hosts.http.common import max_body_bytes
    from specwire.runtime.hosts.http.options import listen_address
    from specwire.runtime.hosts.http.slack_replies import SlackPoster

    try:
        host, port = listen_address(args)
        limit = max_body_bytes()
    except ValueError as exc:
        raise ServeConfigError(str(exc)) from None
    by_name = {channel.name: channel.settings for channel in channels}
    slack = None
    if "slack" in by_name:
        settings = by_name["slack"]
        slack = SlackSettings(
            signing_secret=_setting(settings, "slack", "signingSecret"),
            poster=SlackPoster(_setting(settings, "slack", "botToken")),
        )
    webhook_token = (
        _setting(by_name["webhook"], "webhook", "token") if "webhook" in by_name else None
    )
    if slack is None and webhook_token is None:
        raise ServeConfigError(
            "nothing to serve: add channels.slack {botToken, signingSecret} or "
            "channels.webhook {token} to the spec (as $SECRET references)"
        )

    def turn(
        key: str,
        message: str,
        info: Mapping[str, Any],
        audience: Audience,
        stream: StreamSink | None,
    ) -> ChannelReply:
        session_id, replies = bot.answer(key, message, info, audience, stream)
        return ChannelReply(session_id, replies)

    service = ChannelService(
        spec_name=bot.spec_name,
        session_key=session_key,
        run_turn=turn,
        max_body=limit,
        log=stderr_log,
        slack=slack,
        webhook_token=webhook_token,
        seen=bot.seen_events(),
    )
    endpoints = (["POST /slack/events"] if slack else []) + (
        ["POST /v1/turns"] if webhook_token else []
    )
    banner = (
        f"{bot.spec_name} · channel bot · model {bot.model.model_id} · one session per "
        f"{session_key} · {', '.join([*endpoints, 'GET /healthz'])}"
    )
    from specwire.runtime.hosts.http.console_mount import (
        facts_backend_of,
        state_dsn_of,
        with_console,
    )

    app, close_console = with_console(
        build_channel_app(service),
        bot.spec_name,
        Path.cwd(),
        stderr_log,
        facts_backend=facts_backend_of(bot.fragment),
        state_dsn=state_dsn_of(bot.fragment),
    )
    try:
        return run_server(app, host, port, banner)
    finally:
        close_console()


# The settings ``serve`` reads from each channel (the console connects nowhere and reads none).
SERVED_SETTINGS: dict[str, tuple[str, ...]] = {
    "slack": ("botToken", "signingSecret"),
    "webhook": ("token",),
}


def serving_secrets(channels: Sequence[ChannelConfig]) -> tuple[SecretNeed, ...]:
    """The secret references ``serve`` resolves, for the start checks to report together."""
    needs: list[SecretNeed] = []
    for channel in channels:
        for key in SERVED_SETTINGS.get(channel.name, ()):
            value = _raw_setting(channel.settings, key)
            if isinstance(value, SecretRef):
                needs.append(SecretNeed(value.env, f"channels.{channel.name}.{key}"))
    return tuple(needs)


def _raw_setting(settings: Mapping[str, SettingValue], key: str) -> SettingValue | None:
    snake = "".join(f"_{char.lower()}" if char.isupper() else char for char in key)
    return settings.get(key, settings.get(snake))


def _setting(settings: Mapping[str, SettingValue], channel: str, key: str) -> str:
    """A channel setting as text; a secret reference is read from the environment now."""
    value = _raw_setting(settings, key)
    if value is None:
        raise ServeConfigError(f"channels.{channel}.{key} is not set in the spec")
    if isinstance(value, SecretRef):
        return value.resolve()
    text = str(value).strip()
    if not text:
        raise ServeConfigError(f"channels.{channel}.{key} is empty")
    return text
