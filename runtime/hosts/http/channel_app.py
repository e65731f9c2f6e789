"""The channel bot over HTTP: Slack Events, a JSON webhook for any other chat system, health.

``POST /slack/events``  Slack's Events API. Signed requests only; ``url_verification`` answered;
                        a message is acknowledged at once and answered in the background (Slack
                        retries after 3 s), in its thread with ``chat.postMessage``.
``POST /v1/turns``      ``{"conversation", "user"?, "direct"?, "text"}`` → ``{"reply",
                        "session_id"}``, with ``Authorization: Bearer <channels.webhook.token>``.
                        ``direct: true`` says the conversation is a direct message with ``user``
                        (nobody else reads it): their ``user`` memories are recalled there.
``GET /healthz``        ``{"status": "ok", ...}``.

Every refusal (401, 4xx) happens before a turn is scheduled, so it stores nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from specwire.runtime.core.errors import RecallUnavailableError
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
from specwire.runtime.hosts.http.slack_events import (
    SeenEvents,
    message_from_envelope,
    signature_problem,
)
from specwire.runtime.hosts.http.slack_replies import SlackPoster

MAX_TEXT_CHARS = 100_000
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


# (conversation key, message, session info, who is talking and where) → the turn's replies;
# blocking, runs in a thread.
ChannelTurn = Callable[[str, str, Mapping[str, Any], Audience], ChannelReply]


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
    seen: SeenEvents = field(default_factory=SeenEvents)
    background: set[asyncio.Task[None]] = field(default_factory=set)


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
            _accept_slack_event(service, envelope)
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
        try:
            reply = await service.turns.run(
                key, lambda: service.run_turn(key, turn.text, info, audience)
            )
        except Exception as exc:  # the turn failed: say so, the next turn may work
            service.log(f"[serve] webhook {key}: error: {type(exc).__name__}: {exc}\n")
            if isinstance(exc, RecallUnavailableError):
                return error(503, "the agent's memory is unavailable; the turn was not run")
            return error(502, "the turn failed; the service log has the details")
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


def _accept_slack_event(service: ChannelService, envelope: Mapping[str, Any]) -> None:
    message = message_from_envelope(envelope)
    if message is None or service.slack is None:
        return
    if not service.seen.first_time(message.event_id, f"{message.channel}:{message.ts}"):
        return
    slack = service.slack
    key = message.conversation_key(service.session_key)
    info = {"channel": "slack", "slackChannel": message.channel, "user": message.user}

    def answer() -> None:
        try:
            reply = service.run_turn(key, message.text, info, message.audience())
            text = reply.text
        except Exception as exc:
            service.log(f"[serve] slack {key}: error: {type(exc).__name__}: {exc}\n")
            text = NO_MEMORY if isinstance(exc, RecallUnavailableError) else SORRY
        if text:
            slack.poster.post(message.channel, message.reply_thread, text)

    async def in_background() -> None:
        try:
            await service.turns.run(key, answer)
        except Exception as exc:  # posting failed: nothing more can be done for this event
            service.log(f"[serve] slack {key}: could not post the reply: {exc}\n")

    task = asyncio.get_running_loop().create_task(in_background())
    service.background.add(task)
    task.add_done_callback(service.background.discard)
