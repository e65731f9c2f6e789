"""The channel bot over HTTP: Slack Events, a JSON webhook for any other chat system, health.

``POST /slack/events``  Slack's Events API. Signed requests only; ``url_verification`` answered;
                        a message is acknowledged at once and answered in the background (Slack
                        retries after 3 s), in its thread: posted at its first words and updated
                        while it is written (``runtime.hosts.http.slack_stream``).
``POST /v1/turns``      ``{"conversation", "user"?, "direct"?, "text"}`` → ``{"reply",
                        "session_id"}``, with ``Authorization: Bearer <channels.webhook.token>``.
                        ``direct: true`` says the conversation is a direct message with ``user``
                        (nobody else reads it): their ``user`` memories are recalled there.
                        With ``Accept: text/event-stream`` the turn comes as server-sent events
                        while it is written: ``text`` ``{"text"}`` (append it), ``tool``
                        ``{"id", "name", "status": running|done|failed}``, ``restart``
                        ``{"reason"}`` (the model starts again: drop the text shown so far),
                        then ``done`` with the JSON body above, or ``error`` ``{"error",
                        "status"}``; a client that disconnects stops the turn.
``GET /healthz``        ``{"status": "ok", ...}``.

Every refusal (401, 4xx) happens before a turn is scheduled, so it stores nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from specwire.runtime.core.errors import RecallUnavailableError, StoreError
from specwire.runtime.core.scopes import Audience
from specwire.runtime.hosts.http.common import (
    BadRequest,
    ClientKey,
    bearer_token,
    drain,
    drain_dreams,
    parse_json,
    parse_model,
    read_body,
    tokens_match,
)
from specwire.runtime.hosts.http.conversations import ConversationTurns
from specwire.runtime.hosts.http.reply_stream import (
    RestartPiece,
    TextPiece,
    ToolPiece,
    TurnStream,
)
from specwire.runtime.hosts.http.slack_events import (
    SeenEvents,
    message_from_envelope,
    signature_problem,
)
from specwire.runtime.hosts.http.slack_replies import SlackPoster
from specwire.runtime.hosts.http.slack_stream import SlackReplyStream
from specwire.runtime.models.streaming import StreamCancelled, StreamSink

if TYPE_CHECKING:
    from specwire.runtime.hosts.http.slack_dedup_postgres import PostgresSeenEvents

MAX_TEXT_CHARS = 100_000
KEEPALIVE_S = 15.0
SORRY = "Sorry, something went wrong while answering this message; please try again."
NO_MEMORY = (
    "Sorry, my memory is unavailable right now, so I did not answer this message; "
    "please try again shortly."
)


@dataclass(frozen=True)
class ChannelReply:
    session_id: str
    replies: list[str]

    @property
    def text(self) -> str:
        return "\n\n".join(self.replies)


# (conversation key, message, session info, who is talking and where, the sink its answer
# streams to or None) → the turn's replies; blocking, runs in a thread.
ChannelTurn = Callable[[str, str, Mapping[str, Any], Audience, StreamSink | None], ChannelReply]


@dataclass
class SlackSettings:
    signing_secret: str
    poster: SlackPoster


@dataclass
class ChannelService:
    spec_name: str
    session_key: str  # thread | channel | user
    run_turn: ChannelTurn
    max_body: int
    log: Callable[[str], None]
    slack: SlackSettings | None = None
    webhook_token: str | None = None
    turns: ConversationTurns = field(default_factory=ConversationTurns)
    # In memory, or shared by every worker (``PostgresSeenEvents``, ``memory.state: postgres``).
    seen: SeenEvents | PostgresSeenEvents = field(default_factory=SeenEvents)
    background: set[asyncio.Task[Any]] = field(default_factory=set)


class WebhookTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conversation: ClientKey
    user: ClientKey | None = None
    # A direct message with ``user``: only they read the conversation.
    direct: bool = False
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS, pattern=r"\S")


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def build_channel_app(service: ChannelService) -> Starlette:
    async def slack_events(request: Request) -> Response:
        if service.slack is None:
            return error(
                404,
                "Slack is not configured: set channels.slack.signingSecret and "
                "channels.slack.botToken in the spec",
            )
        try:
            body = await read_body(request, service.max_body)
        except BadRequest as refused:
            return error(refused.status, refused.message)
        problem = signature_problem(
            service.slack.signing_secret,
            request.headers.get("x-slack-request-timestamp"),
            request.headers.get("x-slack-signature"),
            body,
            now=time.time(),
        )
        if problem is not None:
            return error(401, f"not a request from Slack: {problem}")
        try:
            envelope = parse_json(body)
        except BadRequest as refused:
            return error(refused.status, refused.message)
        if not isinstance(envelope, dict):
            return error(400, "the event envelope must be a JSON object")
        if envelope.get("type") == "url_verification":
            return JSONResponse({"challenge": str(envelope.get("challenge", ""))})
        if envelope.get("type") == "event_callback":
            try:
                await _accept_slack_event(service, envelope)
            except StoreError as exc:  # not acknowledged: Slack retries it later
                service.log(f"[serve] slack: retries cannot be checked: {exc}\n")
                return error(503, "the event could not be recorded; retry later")
        return Response(status_code=200)

    async def webhook_turn(request: Request) -> Response:
        if service.webhook_token is None:
            return error(403, "the webhook is off: set channels.webhook.token in the spec")
        given = bearer_token(request)
        if given is None or not tokens_match(given, service.webhook_token):
            return JSONResponse(
                {"error": "missing or wrong bearer token"},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        try:
            turn = parse_model(await read_body(request, service.max_body), WebhookTurn)
        except BadRequest as refused:
            return error(refused.status, refused.message)
        # Webhook conversations live in their own namespace: a caller naming a conversation
        # "slack:T1:C1:123.4" must not reach that Slack thread's session.
        key = f"webhook:{turn.conversation}"
        if service.session_key == "user" and turn.user is not None:
            key = f"webhook:user:{turn.user}"
        info: dict[str, Any] = {"channel": "webhook", "conversation": turn.conversation}
        if turn.user is not None:
            info["user"] = turn.user
        if turn.direct:
            if turn.user is None:
                return error(400, '"direct": true needs the "user" the conversation is with')
            info["direct"] = True
        audience = webhook_audience(turn)
        if wants_event_stream(request):
            return _streamed_webhook_turn(service, key, turn.text, info, audience)
        try:
            reply = await service.turns.run(
                key, lambda: service.run_turn(key, turn.text, info, audience, None)
            )
        except Exception as exc:  # the turn failed: say so, the next turn may work
            service.log(f"[serve] webhook {key}: error: {type(exc).__name__}: {exc}\n")
            return error(*_webhook_failure(exc))
        return JSONResponse({"reply": reply.text, "session_id": reply.session_id})

    async def healthz(request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "spec": service.spec_name,
                "target": "channel",
                "slack": service.slack is not None,
                "webhook": service.webhook_token is not None,
            }
        )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await drain(service.background, service.log, what="Slack answer(s)")
        await drain_dreams(service.log)

    return Starlette(
        routes=[
            Route("/slack/events", slack_events, methods=["POST"]),
            Route("/v1/turns", webhook_turn, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
        ],
        lifespan=lifespan,
    )


def webhook_audience(turn: WebhookTurn) -> Audience:
    """Subjects in the webhook's own namespace: a caller naming user "U123" is not Slack's."""
    return Audience(
        user=f"webhook:{turn.user}" if turn.user is not None else None,
        conversation=f"webhook:{turn.conversation}",
        private=turn.direct,
    )


def wants_event_stream(request: Request) -> bool:
    """``Accept: text/event-stream`` asks for the turn as server-sent events."""
    accepted = request.headers.get("accept", "")
    return any(
        part.split(";", 1)[0].strip().lower() == "text/event-stream" for part in accepted.split(",")
    )


def _webhook_failure(exc: Exception) -> tuple[int, str]:
    if isinstance(exc, RecallUnavailableError):
        return 503, "the agent's memory is unavailable; the turn was not run"
    return 502, "the turn failed; the service log has the details"


def _streamed_webhook_turn(
    service: ChannelService, key: str, text: str, info: Mapping[str, Any], audience: Audience
) -> Response:
    loop = asyncio.get_running_loop()
    stream = TurnStream(loop)

    def turn() -> ChannelReply:
        if stream.cancelled:  # gone while the turn waited behind the conversation's last one
            raise StreamCancelled("the client went away before the turn started")
        return service.run_turn(key, text, info, audience, stream.sink)

    task = loop.create_task(service.turns.run(key, turn))
    service.background.add(task)  # awaited by its stream, or by the shutdown
    task.add_done_callback(service.background.discard)
    task.add_done_callback(lambda done: _log_failure(service, key, done))
    return StreamingResponse(
        _webhook_events(service, key, task, stream),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache"},
    )


async def _webhook_events(
    service: ChannelService, key: str, task: asyncio.Task[ChannelReply], stream: TurnStream
) -> AsyncIterator[bytes]:
    """``text``, ``tool`` and ``restart`` events while the turn is written, then ``done`` with
    the body the JSON webhook answers (or ``error``); a client that goes away stops the turn."""
    try:
        ended = False
        async for piece in stream.pieces_until(task, KEEPALIVE_S):
            if piece is None:
                yield b": keep-alive\n\n"
            elif isinstance(piece, TextPiece):
                yield sse_event("text", {"text": piece.text})
            elif isinstance(piece, ToolPiece):
                yield sse_event(
                    "tool", {"id": piece.id, "name": piece.name, "status": piece.status}
                )
            elif isinstance(piece, RestartPiece):
                yield sse_event("restart", {"reason": piece.reason})
            else:
                ended = True
        try:
            reply = task.result()
        except Exception as exc:  # logged by ``_log_failure``
            status, message = _webhook_failure(exc)
            yield sse_event("error", {"error": message, "status": status})
            return
        if not ended and reply.text:  # a reply the model did not write (/help): whole
            yield sse_event("text", {"text": reply.text})
        yield sse_event("done", {"reply": reply.text, "session_id": reply.session_id})
    finally:
        if not task.done():
            service.log(f"[serve] webhook {key}: the client went away; stopping the turn\n")
            stream.cancel()


def sse_event(name: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _log_failure(service: ChannelService, key: str, task: asyncio.Task[Any]) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None and not isinstance(exc, StreamCancelled):
        service.log(f"[serve] webhook {key}: error: {type(exc).__name__}: {exc}\n")


async def _accept_slack_event(service: ChannelService, envelope: Mapping[str, Any]) -> None:
    message = message_from_envelope(envelope)
    if message is None or service.slack is None:
        return
    keys = (message.event_id, f"{message.channel}:{message.ts}")
    if not await asyncio.to_thread(service.seen.first_time, *keys):
        return
    slack = service.slack
    key = message.conversation_key(service.session_key)
    info = {"channel": "slack", "slackChannel": message.channel, "user": message.user}

    def answer() -> None:
        shown = SlackReplyStream(
            slack.poster, message.channel, message.reply_thread, log=service.log
        )
        try:
            reply = service.run_turn(key, message.text, info, message.audience(), shown.sink)
            text = reply.text
        except Exception as exc:
            service.log(f"[serve] slack {key}: error: {type(exc).__name__}: {exc}\n")
            text = NO_MEMORY if isinstance(exc, RecallUnavailableError) else SORRY
        shown.finish(text)

    async def in_background() -> None:
        try:
            await service.turns.run(key, answer)
        except Exception as exc:  # posting failed: nothing more can be done for this event
            service.log(f"[serve] slack {key}: could not post the reply: {exc}\n")

    task = asyncio.get_running_loop().create_task(in_background())
    service.background.add(task)
    task.add_done_callback(service.background.discard)
