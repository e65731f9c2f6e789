"""The managed agent as an OpenAI-compatible service: the official ``openai`` client works.

``GET /v1/models``             the agent, listed as one model named after the spec.
``POST /v1/chat/completions``  one turn: the last message (the user's) goes to the agent; the
                               reply comes back as a ``chat.completion``, or as server-sent
                               ``chat.completion.chunk`` events with ``stream: true``.
``GET /healthz``               ``{"status": "ok", ...}`` (no key needed).

``Authorization: Bearer <tenant key>`` picks the tenant (``runtime.hosts.http.tenant_keys``); every
turn runs fenced in that tenant's root. The session is the ``X-Session-Id`` header, else the
``user`` field, else a new one (returned in the ``X-Session-Id`` response header so the client
can continue it). The ``user`` field also names whose memory the turn reads and writes
(``memory.scope``) and whose conversation the session is (``managed_conversation``): two users
of one tenant never see each other's facts or conversations, whatever session id they send.
Every refusal — 401, 400, 404, 413, 429 — happens before the turn runs and changes nothing.
Errors use OpenAI's body (``{"error": {"message", "type", "param", "code"}}``) and
``x-should-retry: false`` where retrying cannot help, so the client raises at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from specwire.runtime.core.errors import MemoryServiceError, RecallUnavailableError
from specwire.runtime.core.ids import CLIENT_KEY_RE, CLIENT_KEY_RULE
from specwire.runtime.hosts.http import openai_wire as wire
from specwire.runtime.hosts.http.common import (
    BadRequest,
    bearer_token,
    drain,
    drain_dreams,
    parse_model,
    read_body,
)
from specwire.runtime.hosts.http.conversations import ConversationTurns
from specwire.runtime.hosts.http.reply_stream import (
    RestartPiece,
    TextPiece,
    ToolPiece,
    TurnStream,
)
from specwire.runtime.hosts.http.tenant_keys import TenantKeys
from specwire.runtime.hosts.http.usage_ledger import (
    Ledger,
    SharedLedger,
    TenantUsage,
    Verdict,
    budget_problem,
    estimate_input_tokens,
)
from specwire.runtime.hosts.types import TenantConfig
from specwire.runtime.models import ModelError, Usage
from specwire.runtime.models.streaming import StreamCancelled, StreamSink
from specwire.runtime.safety.secrets import MissingSecretError

SESSION_HEADER = "x-session-id"
Result = TypeVar("Result")
KEEPALIVE_S = 15.0


@dataclass(frozen=True)
class ManagedReply:
    session_id: str
    replies: list[str]
    usage: Usage | None
    # Milliseconds by phase ("wire": memory wiring, "turn": the loop and its tools), sent back
    # in a Server-Timing header.
    timings: Mapping[str, float] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n\n".join(self.replies)


# (tenant id, session key, message, the request's ``user`` field, the sink its answer streams
# to, or None) → the turn's replies; blocking, runs in a worker thread.
ManagedTurn = Callable[[str, str, str, str | None, StreamSink | None], ManagedReply]


@dataclass
class ManagedService:
    spec_name: str
    keys: TenantKeys
    tenants: Mapping[str, TenantConfig]
    run_turn: ManagedTurn
    ledger_for: Callable[[str], Ledger]
    max_body: int
    log: Callable[[str], None]
    turns: ConversationTurns = field(default_factory=ConversationTurns)
    background: set[asyncio.Task[Any]] = field(default_factory=set)
    gates: dict[str, _TenantGate] = field(default_factory=dict)
    # How long a turn waiting for room in a budget shared by every worker waits for a change
    # to be announced before it looks again anyway.
    admission_poll_s: float = 1.0


def openai_error(
    status: int,
    message: str,
    error_type: str,
    *,
    code: str | None = None,
    param: str | None = None,
    retry: bool = False,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    all_headers = dict(headers or {})
    if not retry:
        all_headers["x-should-retry"] = "false"
    return JSONResponse(
        wire.error_body(message, error_type, code=code, param=param),
        status_code=status,
        headers=all_headers,
    )


class _Refused(Exception):
    def __init__(self, response: Response) -> None:
        self.response = response


def build_managed_app(service: ManagedService) -> Starlette:
    def tenant_of(request: Request) -> str:
        given = bearer_token(request)
        tenant_id = service.keys.tenant_for(given) if given is not None else None
        if tenant_id is None:
            raise _Refused(
                openai_error(
                    401,
                    "Incorrect API key provided."
                    if given
                    else "Missing API key: send 'Authorization: Bearer <tenant key>'.",
                    "invalid_request_error",
                    code="invalid_api_key",
                    headers={"WWW-Authenticate": "Bearer"},
                )
            )
        return tenant_id

    async def models(request: Request) -> Response:
        try:
            tenant_of(request)
        except _Refused as refused:
            return refused.response
        return JSONResponse(wire.models_list(service.spec_name))

    async def chat_completions(request: Request) -> Response:
        try:
            tenant_id = tenant_of(request)
            body = await _parsed_request(request, service)
            message = wire.turn_text(body)
            if isinstance(message, tuple):
                raise _Refused(
                    openai_error(400, message[0], "invalid_request_error", param=message[1])
                )
            session_key = _session_key(request, body)
            estimate = estimate_input_tokens(message)
            admission = await _admit(service, tenant_id, estimate)
        except _Refused as refused:
            return refused.response
        headers = {"X-Session-Id": session_key}
        conversation = f"{tenant_id}/{session_key}"

        def turn(stream: TurnStream | None = None) -> ManagedReply:
            if stream is not None and stream.cancelled:  # gone while the turn waited its turn
                raise StreamCancelled("the client went away before the turn started")
            sink = stream.sink if stream is not None else None
            reply = service.run_turn(tenant_id, session_key, message, body.user, sink)
            ledger = service.ledger_for(tenant_id)
            if admission.ticket is not None and isinstance(ledger, SharedLedger):
                ledger.add(reply.usage or Usage(), estimated=estimate, ticket=admission.ticket)
            else:
                ledger.add(reply.usage or Usage(), estimated=estimate)
            return reply

        if body.stream:
            include_usage = body.stream_options is not None and body.stream_options.include_usage
            loop = asyncio.get_running_loop()
            stream = TurnStream(loop)
            task = loop.create_task(
                _admitted(
                    service,
                    tenant_id,
                    admission,
                    service.turns.run(conversation, lambda: turn(stream)),
                )
            )
            # The turn is awaited by its stream, or by the shutdown when the client went away.
            service.background.add(task)
            task.add_done_callback(service.background.discard)
            task.add_done_callback(lambda done: _log_unstreamed(service, conversation, done))
            return StreamingResponse(
                _stream(service, task, stream, conversation, include_usage),
                media_type="text/event-stream",
                headers={**headers, "Cache-Control": "no-cache"},
            )
        try:
            reply = await _admitted(
                service, tenant_id, admission, service.turns.run(conversation, turn)
            )
        except Exception as exc:
            return _turn_failed(service, conversation, exc)
        if reply.timings:
            headers["Server-Timing"] = ", ".join(
                f"{name};dur={ms:.2f}" for name, ms in reply.timings.items()
            )
        return JSONResponse(
            wire.completion(wire.completion_id(), service.spec_name, reply.text, reply.usage),
            headers=headers,
        )

    async def healthz(request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "spec": service.spec_name,
                "target": "managed",
            }
        )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await drain(service.background, service.log, what="streamed turn(s)")
        await drain_dreams(service.log)

    async def not_found(request: Request, exc: Exception) -> Response:
        return openai_error(404, f"no route {request.method} {request.url.path}", "not_found")

    async def wrong_method(request: Request, exc: Exception) -> Response:
        return openai_error(
            405, f"{request.method} is not allowed on {request.url.path}", "invalid_request_error"
        )

    return Starlette(
        routes=[
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
        ],
        exception_handlers={404: not_found, 405: wrong_method},
        lifespan=lifespan,
    )


async def _parsed_request(request: Request, service: ManagedService) -> wire.ChatCompletionRequest:
    try:
        body = parse_model(await read_body(request, service.max_body), wire.ChatCompletionRequest)
    except BadRequest as refused:
        raise _Refused(
            openai_error(
                refused.status, refused.message, "invalid_request_error", param=refused.param
            )
        ) from None
    if body.model != service.spec_name:
        raise _Refused(
            openai_error(
                404,
                f"The model {body.model!r} does not exist; this service serves "
                f"{service.spec_name!r}.",
                "invalid_request_error",
                code="model_not_found",
                param="model",
            )
        )
    return body


def _session_key(request: Request, body: wire.ChatCompletionRequest) -> str:
    header = request.headers.get(SESSION_HEADER)
    if header is not None:
        if not CLIENT_KEY_RE.fullmatch(header):
            raise _Refused(
                openai_error(
                    400,
                    f"X-Session-Id must be {CLIENT_KEY_RULE}",
                    "invalid_request_error",
                    param="X-Session-Id",
                )
            )
        return header
    if body.user is not None:
        return body.user
    return f"chat-{secrets.token_hex(8)}"


class _TenantGate:
    """A tenant's turns in flight and the input tokens reserved for them, so concurrent
    requests cannot all pass one budget check."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.reserved_input = 0
        self.changed = asyncio.Condition()


@dataclass(frozen=True)
class _Admission:
    """An admitted turn: the input tokens reserved for it and, when the ledger is shared by
    every worker (``memory.state: postgres``), its reservation's ticket there."""

    reservation: int
    ticket: str | None = None


async def _admit(service: ManagedService, tenant_id: str, estimate: int) -> _Admission:
    """Admit one turn of the tenant whose message is estimated at ``estimate`` input tokens and
    return the input tokens reserved for it, or refuse it (429) when its budget is spent.

    A budgeted tenant's turn is reserved by the size of its own input — the message's estimate
    (``estimate_input_tokens``) plus the overhead the tenant's recorded turns averaged beyond
    their messages — and starts only when the recorded usage plus every reservation in flight
    stays within the budget; otherwise it waits for a running turn to finish (its actual usage
    then replaces its reservation) and looks again. Output, unknown before the turn, is
    reserved at the tenant's average turn. A turn that finds nothing in flight runs while any
    budget is left, and the first turn of a tenant without usage history runs alone. So
    concurrent requests overshoot a budget by one turn at most, as long as turns cost what
    their reservation says.
    """
    tenant = service.tenants[tenant_id]
    gate = service.gates.setdefault(tenant_id, _TenantGate())
    budgeted = tenant.max_input_tokens is not None or tenant.max_output_tokens is not None
    if budgeted:
        ledger = _ledger(service, tenant_id)
        if isinstance(ledger, SharedLedger):
            admission = await _admit_shared(service, ledger, tenant, estimate)
            async with gate.changed:
                gate.in_flight += 1
                gate.reserved_input += admission.reservation
            return admission
    async with gate.changed:
        while True:
            used = _recorded_usage(service, tenant_id)
            problem = budget_problem(used, tenant) if budgeted else None
            if problem is not None:
                raise _Refused(
                    openai_error(
                        429,
                        f"You exceeded your current quota: {problem}.",
                        "insufficient_quota",
                        code="insufficient_quota",
                    )
                )
            overhead = used.input_overhead()
            reservation = estimate + (overhead or 0)
            if not budgeted or gate.in_flight == 0 or _fits(used, gate, reservation, tenant):
                gate.in_flight += 1
                gate.reserved_input += reservation
                return _Admission(reservation)
            await gate.changed.wait()


async def _admit_shared(
    service: ManagedService, ledger: SharedLedger, tenant: TenantConfig, estimate: int
) -> _Admission:
    """``_admit``'s rule decided in the database, against the turns in flight on every worker
    (``PostgresUsageLedger.admit``): concurrent requests to different workers overshoot a budget
    by one turn at most, as they do on one. A turn told to wait sleeps until the ledger changes
    on any worker (``SharedLedger.subscribe``: LISTEN/NOTIFY), or ``admission_poll_s`` at most,
    and looks again."""

    def decide(used: TenantUsage, in_flight: int, reserved: int) -> tuple[Verdict, int, str]:
        problem = budget_problem(used, tenant)
        if problem is not None:
            return "refuse", 0, problem
        reservation = estimate + (used.input_overhead() or 0)
        if in_flight == 0 or _fits_beside(used, in_flight, reserved, reservation, tenant):
            return "admit", reservation, ""
        return "wait", 0, ""

    loop = asyncio.get_running_loop()
    changed = asyncio.Event()
    unsubscribe: Callable[[], None] | None = None
    try:
        while True:
            changed.clear()  # a change from here on wakes the wait below
            try:
                verdict, reservation, text = await asyncio.to_thread(ledger.admit, decide)
            except Exception as exc:  # an unreachable ledger fails closed
                service.log(f"[serve] {tenant.id}: {exc}\n")
                raise _Refused(
                    openai_error(503, "the tenant's usage ledger cannot be read", "server_error")
                ) from None
            if verdict == "refuse":
                raise _Refused(
                    openai_error(
                        429,
                        f"You exceeded your current quota: {text}.",
                        "insufficient_quota",
                        code="insufficient_quota",
                    )
                )
            if verdict == "admit":
                return _Admission(reservation, text)
            if unsubscribe is None:  # from now on a change wakes this turn: look once more
                try:
                    unsubscribe = ledger.subscribe(lambda: _wake(loop, changed))
                except Exception as exc:  # noqa: BLE001 (no wake-ups: the poll still runs)
                    service.log(f"[serve] {tenant.id}: {exc}\n")
                    unsubscribe = _no_subscription
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), service.admission_poll_s)
    finally:
        if unsubscribe is not None:
            unsubscribe()


def _no_subscription() -> None:
    pass


def _wake(loop: asyncio.AbstractEventLoop, changed: asyncio.Event) -> None:
    """Set ``changed`` from another thread (nothing once the loop is closed)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(changed.set)


def _ledger(service: ManagedService, tenant_id: str) -> Ledger:
    try:
        return service.ledger_for(tenant_id)
    except Exception as exc:  # a ledger that cannot be opened fails closed
        service.log(f"[serve] {tenant_id}: {exc}\n")
        raise _Refused(
            openai_error(503, "the tenant's usage ledger cannot be read", "server_error")
        ) from None


async def _admitted(
    service: ManagedService, tenant_id: str, admission: _Admission, turn: Awaitable[Result]
) -> Result:
    """Run an admitted turn; its place and its reservation are given back however it ends
    (its usage is in the ledger by then)."""
    gate = service.gates[tenant_id]
    try:
        return await turn
    finally:
        if admission.ticket is not None:
            await _release(service, tenant_id, admission.ticket)
        async with gate.changed:
            gate.in_flight -= 1
            gate.reserved_input -= admission.reservation
            gate.changed.notify_all()


async def _release(service: ManagedService, tenant_id: str, ticket: str) -> None:
    """Drop a shared reservation (a no-op once the turn's usage was recorded with it)."""
    ledger = service.ledger_for(tenant_id)
    if not isinstance(ledger, SharedLedger):
        return
    try:
        await asyncio.to_thread(ledger.release, ticket)
    except Exception as exc:  # the worker's lease ends it when the process stops
        service.log(f"[serve] {tenant_id}: reservation not released: {exc}\n")


def _fits(used: TenantUsage, gate: _TenantGate, reservation: int, tenant: TenantConfig) -> bool:
    """Whether one more turn, reserved at ``reservation`` input tokens, fits beside the turns
    in flight. Never before the tenant's first recorded turn: its overhead is unknown."""
    return _fits_beside(used, gate.in_flight, gate.reserved_input, reservation, tenant)


def _fits_beside(
    used: TenantUsage, in_flight: int, reserved_input: int, reservation: int, tenant: TenantConfig
) -> bool:
    """``_fits`` for ``in_flight`` turns holding ``reserved_input`` (on any worker)."""
    if used.turns == 0:
        return False
    if (
        tenant.max_input_tokens is not None
        and used.input + reserved_input + reservation > tenant.max_input_tokens
    ):
        return False
    average_output = used.output / used.turns
    return (
        tenant.max_output_tokens is None
        or used.output + (in_flight + 1) * average_output <= tenant.max_output_tokens
    )


def _recorded_usage(service: ManagedService, tenant_id: str) -> TenantUsage:
    try:
        return service.ledger_for(tenant_id).read()
    except Exception as exc:  # a damaged ledger fails closed
        service.log(f"[serve] {tenant_id}: {exc}\n")
        raise _Refused(
            openai_error(503, "the tenant's usage ledger cannot be read", "server_error")
        ) from None


def _failure(exc: Exception) -> tuple[int, str, str]:
    if isinstance(exc, ModelError):
        return 502, f"the agent's model failed: {exc}", "api_error"
    if isinstance(exc, RecallUnavailableError | MemoryServiceError | MissingSecretError):
        return 503, "the agent's memory is unavailable; the turn was not run", "server_error"
    return 500, "the turn failed; the service log has the details", "server_error"


def _log_unstreamed(service: ManagedService, conversation: str, task: asyncio.Task[Any]) -> None:
    """A streamed turn's failure, in the service log (its client may be gone)."""
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None and not isinstance(exc, StreamCancelled):
        service.log(f"[serve] {conversation}: error: {type(exc).__name__}: {exc}\n")


def _turn_failed(service: ManagedService, conversation: str, exc: Exception) -> Response:
    service.log(f"[serve] {conversation}: error: {type(exc).__name__}: {exc}\n")
    status, message, error_type = _failure(exc)
    return openai_error(status, message, error_type, retry=status >= 500)


async def _stream(
    service: ManagedService,
    task: asyncio.Task[ManagedReply],
    stream: TurnStream,
    conversation: str,
    include_usage: bool,
) -> AsyncIterator[bytes]:
    """The turn as ``chat.completion.chunk`` events while it is written: content deltas, the
    agent's tools as empty-delta chunks carrying ``specwire_tool`` (and keep-alive comments
    while nothing happens); a client that goes away cancels the turn."""
    cid = wire.completion_id()
    model = service.spec_name
    try:
        yield wire.sse(wire.chunk(cid, model, {"role": "assistant", "content": ""}))
        ended = False
        async for piece in stream.pieces_until(task, KEEPALIVE_S):
            if piece is None:
                yield b": keep-alive\n\n"  # an SSE comment: keeps proxies from closing the stream
            elif isinstance(piece, TextPiece):
                yield wire.sse(wire.chunk(cid, model, {"content": piece.text}))
            elif isinstance(piece, ToolPiece):
                yield wire.sse(wire.tool_chunk(cid, model, piece.id, piece.name, piece.status))
            elif isinstance(piece, RestartPiece):
                yield wire.sse(wire.chunk(cid, model, {"content": wire.restart_note(piece.reason)}))
            else:
                ended = True
        try:
            reply = task.result()
        except Exception as exc:  # logged by ``_log_unstreamed``
            _, message, error_type = _failure(exc)
            yield wire.sse(wire.error_body(message, error_type))
            return
        if not ended and reply.text:  # a reply the model did not write (/help): whole
            yield wire.sse(wire.chunk(cid, model, {"content": reply.text}))
        yield wire.sse(wire.chunk(cid, model, {}, "stop"))
        if include_usage:
            yield wire.sse(wire.chunk(cid, model, {}, usage=reply.usage, with_usage=True))
        yield wire.sse("[DONE]")
    finally:
        if not task.done():  # the client went away mid-stream: stop the turn
            service.log(f"[serve] {conversation}: the client went away; stopping the turn\n")
            stream.cancel()
