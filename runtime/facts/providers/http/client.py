"""``HttpFactProvider``: a ``FactProvider`` that speaks the HTTP memory contract (httpx).

Behaviour (see ``runtime.facts.providers.http.contract`` for the wire format):

- **Deadline.** ``timeout_s`` bounds each call, every attempt and backoff included: an attempt
  gets what is left of it, and a response body still arriving past it is abandoned.
- **Retries.** At most ``max_retries`` (≤ 2) more attempts after transport failures, 408, 429
  and 5xx, after 0.25 s then 1 s (times a jitter in [0.5, 1]) or a ``Retry-After`` that fits the
  deadline. Reads are always eligible. Writes are eligible because each carries a fresh
  ``operationId`` the server de-duplicates (the same id and body on every attempt). With
  ``idempotent_writes=False`` writes carry none and are retried only when the connection was
  never made (nothing was sent) or the server answered 429 (it ran nothing).
- **Uncertain writes.** A write whose request may have reached the server without an answer
  coming back (a timeout or a dropped connection on any attempt), once retries are spent, raises
  ``ProviderUncertain`` (``status == "uncertain"``, with the ``operation_id`` that makes a later
  resend safe). ``ProviderUnavailable`` on a write means nothing was applied.
- **Limits** are checked before sending (the contract's field bounds, ``MAX_REQUEST_BYTES``),
  and a response larger than ``MAX_RESPONSE_BYTES`` is refused unread past the limit.
- **Errors.** The error envelope maps to ``runtime.facts.providers.errors`` (401 → auth, 403 →
scope,
  400/413/422 → invalid request, 409 → conflict). The token is only ever in the
  ``Authorization`` header: no message, exception or repr carries it.
- **Memory scopes.** Scope keys, keys, tiers and ``visible`` travel as the contract's optional
  fields, sent only when they differ from the defaults (the ``agent`` key), so a plain call
  reads exactly as before scopes and a service that predates them answers it; a scoped call to
  such a service is refused by it (400), never served unscoped. Every request says
  ``Memory-Features: scopes``; a hit or record outside the request's ``visible`` keys (or of a
  tier it did not ask for) is dropped, whatever the service answered.
- ``health()`` never raises: within ``min(timeout_s, 1 s)`` and without retries it reports
  ``ok=False`` with a short reason instead.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ValidationError

from specwire.runtime.core.clock import utc_now
from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.core.tool_types import format_validation_error
from specwire.runtime.facts.model import CapExceededError, FactRecord
from specwire.runtime.facts.providers.errors import (
    ProviderAuthError,
    ProviderCapExceeded,
    ProviderConflict,
    ProviderError,
    ProviderInvalidRequest,
    ProviderProtocolError,
    ProviderScopeError,
    ProviderTimeout,
    ProviderUnavailable,
    ProviderUncertain,
)
from specwire.runtime.facts.providers.http import contract as wire
from specwire.runtime.facts.providers.protocol import (
    Capabilities,
    ForgetRequest,
    ForgetResult,
    Health,
    ProviderDescriptor,
    ProviderHit,
    ReadRequest,
    ReadResponse,
    RecallRequest,
    RecallResponse,
    RetainRequest,
    RetainResult,
)
from specwire.runtime.facts.providers.recall_bounds import (
    give_up_if_expired,
    search_text,
    time_budget_s,
    within_request,
)

Reply = TypeVar("Reply", bound=BaseModel)
Kind = Literal["read", "write"]
REMOTE_HEALTH_DEADLINE_S = 1.0


@dataclass
class _Attempt:
    """What one attempt ended with: a parsed answer, or why it failed."""

    status: int | None = None
    payload: Any = None
    error: ProviderError | None = None
    # The request may have reached the server and no answer came back.
    ambiguous: bool = False
    # The connection was never made: nothing was sent.
    unsent: bool = False
    timed_out: bool = False
    retry_after_s: float | None = None


class HttpFactProvider:
    """A remote fact provider bound to one scope: the token's tenant, ``spec``, ``session``."""

    def __init__(
        self,
        base_url: str,
        token: str,
        spec: str,
        *,
        session: str | None = None,
        tenant: str | None = None,
        timeout_s: float = 5.0,
        max_retries: int = wire.MAX_RETRIES,
        transport: httpx.BaseTransport | None = None,
        idempotent_writes: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = random.random,
        name: str = "primary",
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("base_url must be an http:// or https:// URL")
        if parts.username or parts.password:
            raise ValueError("base_url must not carry credentials: pass the token instead")
        if not token or not token.strip() or any(ch in token for ch in "\r\n"):
            raise ValueError("token must be a non-empty single-line string")
        if not 0 <= max_retries <= wire.MAX_RETRIES:
            raise ValueError(f"max_retries must be between 0 and {wire.MAX_RETRIES}")
        if not timeout_s > 0:
            raise ValueError("timeout_s must be positive")
        # Validates spec/session/tenant once, with the contract's own rules.
        try:
            self._scope = wire.ScopeBody(spec=spec, session=session, tenant=tenant).wire()
        except ValidationError as exc:
            raise ValueError(f"bad scope: {format_validation_error(exc)}") from None
        self._timeout_s = timeout_s
        self._name = name
        self._max_retries = max_retries
        self._idempotent_writes = idempotent_writes
        self._sleep = sleep
        self._jitter = jitter
        self._capabilities: Capabilities | None = None
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"),
            transport=transport,
            headers={
                "Authorization": f"Bearer {token.strip()}",
                "Accept": "application/json",
                wire.FEATURES_HEADER: wire.FEATURE_SCOPES,
            },
            follow_redirects=False,
            trust_env=False,
        )
        self._where = f"{parts.scheme}://{parts.hostname}" + (
            f":{parts.port}" if parts.port else ""
        )

    @property
    def where(self) -> str:
        """The service's scheme, host and port (no path, no credentials)."""
        return self._where

    def __repr__(self) -> str:
        return f"HttpFactProvider({self._where!r}, spec={self._scope['spec']!r})"

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HttpFactProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- FactProvider -----------------------------------------------------------------------

    def retain(self, request: RetainRequest, *, operation_id: str | None = None) -> RetainResult:
        """``operation_id``: resend a write that ended ``uncertain`` (its ``operation_id``);
        by default a fresh one is made (none with ``idempotent_writes=False``)."""
        op_id = self._operation_id(operation_id)
        provenance = None
        if request.provenance is not None:
            provenance = {
                "session_id": request.provenance.session_id,
                "evidence": list(request.provenance.evidence),
            }
        body = self._body(
            wire.RetainBody,
            operation_id=op_id,
            text=request.text,
            tags=list(request.tags),
            ttl_ms=request.ttl_ms,
            provenance=provenance,
            supersedes=request.supersedes,
            if_absent=request.if_absent,
            **_scope_fields(request.scope),
            key=request.key,
            mode=None if request.key is None else request.mode,
            tier=request.tier,
            max_bytes=request.max_bytes,
        )
        try:
            reply = self._call("retain", body, wire.RetainReply, kind="write", operation_id=op_id)
        except ProviderCapExceeded as exc:
            if request.key is None:
                raise
            # The same error a local store raises, worded here (the key is the request's).
            raise CapExceededError(
                request.key, exc.cap_bytes, exc.current_size, exc.projected_size
            ) from None
        return RetainResult(
            reply.id,
            reply.created,
            reply.expires_at,
            reply.superseded,
            reply.quarantined,
            text=reply.text,
            tags=tuple(reply.tags) if reply.tags is not None else None,
            bytes=reply.bytes or 0,
        )

    def recall(self, request: RecallRequest) -> RecallResponse:
        give_up_if_expired(request)
        if request.types:
            return RecallResponse(())  # facts carry no type: none is of the asked ones
        body = self._body(
            wire.RecallBody,
            query=search_text(request),
            limit=request.limit,
            visible=_visible_field(request.visible),
            tiers=list(request.tiers) or None,
        )
        budget = time_budget_s(request, self._timeout_s)
        if budget <= 0:
            give_up_if_expired(request)
        try:
            reply = self._call("recall", body, wire.RecallReply, kind="read", deadline_s=budget)
        except ProviderTimeout:
            give_up_if_expired(request)  # the caller's deadline, not the service's
            raise
        give_up_if_expired(request)
        visible = set(request.visible)
        hits = []
        for hit in reply.hits:
            scope = self._scope_of(hit, "recall")
            if scope not in visible or hit.tier not in (request.tiers or (None,)):
                continue  # the service broke the request's fence: never pass it on
            hits.append(
                ProviderHit(
                    hit.id,
                    hit.text,
                    tuple(hit.tags),
                    hit.score,
                    hit.evidence_backed,
                    scope=scope,
                    key=hit.key,
                    tier=hit.tier,
                )
            )
        return RecallResponse(within_request(request, hits))

    def descriptor(self) -> ProviderDescriptor:
        return ProviderDescriptor(self._name, "http", description=f"memory service {self._where}")

    def read(self, request: ReadRequest) -> ReadResponse:
        body = self._body(
            wire.ReadBody, id=request.id, key=request.key, visible=_visible_field(request.visible)
        )
        reply = self._call("read", body, wire.ReadReply, kind="read")
        visible = set(request.visible)
        records = []
        for item in reply.records:
            scope = self._scope_of(item, "read")
            if scope not in visible:
                continue
            if (request.id is not None and item.id != request.id) or (
                request.key is not None and item.key != request.key
            ):
                continue
            records.append(
                FactRecord(
                    id=item.id,
                    text=item.text,
                    tags=tuple(item.tags),
                    created_at=item.created_at,
                    expires_at=item.expires_at,
                    evidence_backed=item.evidence_backed,
                    scope=scope,
                    key=item.key,
                    tier=item.tier,
                )
            )
        return ReadResponse(tuple(sorted(records, key=lambda record: (record.scope, record.id))))

    @staticmethod
    def _scope_of(item: wire.ScopedFields, operation: str) -> ScopeKey:
        try:
            return item.memory_scope()
        except ValueError:
            raise ProviderProtocolError(
                f"{operation}: the memory service's answer names an invalid scope key",
                code="protocol_error",
            ) from None

    def forget(self, request: ForgetRequest, *, operation_id: str | None = None) -> ForgetResult:
        op_id = self._operation_id(operation_id)
        body = self._body(
            wire.ForgetBody,
            operation_id=op_id,
            id=request.id,
            query=request.query,
            reason=request.reason,
            at_most=request.at_most,
            visible=None if request.visible is None else _visible_field(request.visible),
            all_scopes=True if request.visible is None else None,
        )
        reply = self._call("forget", body, wire.ForgetReply, kind="write", operation_id=op_id)
        return ForgetResult(reply.removed, tuple(reply.ids), tuple(reply.texts))

    def health(self) -> Health:
        body = self._body(wire.ScopeBody)
        try:
            reply = self._call(
                "health",
                body,
                wire.HealthReply,
                kind="read",
                deadline_s=min(self._timeout_s, REMOTE_HEALTH_DEADLINE_S),
                retries=0,
            )
        except ProviderTimeout:
            return Health(False, "health check timeout", utc_now())
        except ProviderError as exc:
            return Health(False, f"health check failed: {exc.code}", utc_now())
        return Health(reply.ok, None if reply.ok else (reply.message or "unhealthy"), utc_now())

    def capabilities(self) -> Capabilities:
        if self._capabilities is None:
            body = self._body(wire.ScopeBody)
            reply = self._call("capabilities", body, wire.CapabilitiesReply, kind="read")
            # A service that predates scopes leaves their fields out: it has none of them; a
            # field this client does not know (``ownerTransfer``, a newer one) is not a
            # provider capability.
            known = {field.name for field in dataclasses.fields(Capabilities)}
            fields = {k: bool(v) for k, v in reply.model_dump().items() if k in known}
            self._capabilities = Capabilities(**fields)
        return self._capabilities

    # -- the call ---------------------------------------------------------------------------

    def _operation_id(self, given: str | None) -> str | None:
        if given is not None:
            return given
        return f"op-{uuid.uuid4().hex}" if self._idempotent_writes else None

    def _body(self, model: type[wire.ScopeBody], **fields: Any) -> bytes:
        """The request body, checked against the contract before anything is sent."""
        data = {**self._scope, **{k: v for k, v in fields.items() if v is not None}}
        try:
            parsed = model.model_validate(data)
        except ValidationError as exc:
            raise ProviderInvalidRequest(
                format_validation_error(exc), code="invalid_request"
            ) from None
        raw = json.dumps(parsed.wire(), ensure_ascii=False, separators=(",", ":")).encode()
        if len(raw) > wire.MAX_REQUEST_BYTES:
            raise ProviderInvalidRequest(
                f"the request is {len(raw)} bytes, over the contract's limit of "
                f"{wire.MAX_REQUEST_BYTES}",
                code="payload_too_large",
            )
        return raw

    def _call(
        self,
        operation: str,
        body: bytes,
        reply_model: type[Reply],
        *,
        kind: Kind,
        operation_id: str | None = None,
        deadline_s: float | None = None,
        retries: int | None = None,
    ) -> Reply:
        budget = self._timeout_s if deadline_s is None else deadline_s
        deadline = time.monotonic() + budget
        allowed = self._max_retries if retries is None else retries
        idempotent = kind == "read" or operation_id is not None
        ambiguous = False
        attempt = _Attempt()
        for number in range(allowed + 1):
            attempt = self._attempt(operation, body, deadline)
            ambiguous = ambiguous or attempt.ambiguous
            if attempt.error is None and attempt.status == 200:
                return self._parse(reply_model, attempt.payload, operation)
            if not self._may_retry(attempt, idempotent) or number == allowed:
                break
            pause = wire.backoff_s(number + 1, self._jitter())
            if attempt.retry_after_s is not None:
                pause = max(pause, attempt.retry_after_s)
            if time.monotonic() + pause >= deadline:
                break
            self._sleep(pause)
        if kind == "write" and ambiguous:
            raise ProviderUncertain(
                f"{operation}: the memory service did not answer in time; the write may or "
                "may not have been applied"
                + (" (resend it with the same operation_id)" if operation_id else ""),
                operation=operation,
                operation_id=operation_id,
            )
        assert attempt.error is not None
        raise attempt.error

    def _may_retry(self, attempt: _Attempt, idempotent: bool) -> bool:
        if idempotent:
            return attempt.error is not None and attempt.error.retryable
        # A write nobody de-duplicates: only when it surely did not run.
        return attempt.unsent or attempt.status == 429

    def _attempt(self, operation: str, body: bytes, deadline: float) -> _Attempt:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return _Attempt(
                error=ProviderTimeout(
                    f"{operation}: no answer within the deadline", code="deadline_exceeded"
                ),
                timed_out=True,
            )
        url = f"{wire.API_PREFIX}/{operation}"
        budget_ms = max(1, min(wire.MAX_DEADLINE_MS, int(remaining * 1000)))
        headers = {"Content-Type": "application/json", wire.DEADLINE_HEADER: str(budget_ms)}
        try:
            with self._client.stream(
                "POST", url, content=body, headers=headers, timeout=httpx.Timeout(remaining)
            ) as response:
                raw = self._read_capped(response, deadline, operation)
                status = response.status_code
                retry_after = _retry_after_s(response.headers)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            return _Attempt(
                error=ProviderUnavailable(
                    f"{operation}: cannot connect to the memory service at {self._where} "
                    f"({type(exc).__name__})",
                    code="unavailable",
                    retryable=True,
                ),
                unsent=True,
                timed_out=isinstance(exc, httpx.ConnectTimeout),
            )
        except (httpx.TimeoutException, _BodyDeadline):
            return _Attempt(
                error=ProviderTimeout(
                    f"{operation}: no answer from the memory service within the deadline",
                    code="deadline_exceeded",
                    retryable=True,
                ),
                ambiguous=True,
                timed_out=True,
            )
        except httpx.TransportError as exc:
            return _Attempt(
                error=ProviderUnavailable(
                    f"{operation}: the connection to the memory service failed "
                    f"({type(exc).__name__})",
                    code="unavailable",
                    retryable=True,
                ),
                ambiguous=True,
            )
        except ProviderProtocolError as exc:
            return _Attempt(error=exc)
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            payload = None
        if status == 200:
            if payload is None:
                return _Attempt(
                    status=status,
                    error=ProviderProtocolError(
                        f"{operation}: the memory service's answer is not JSON",
                        code="protocol_error",
                    ),
                )
            return _Attempt(status=status, payload=payload)
        return _Attempt(
            status=status,
            error=_envelope_error(operation, status, payload),
            retry_after_s=retry_after,
        )

    def _read_capped(self, response: httpx.Response, deadline: float, operation: str) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > wire.MAX_RESPONSE_BYTES:
            raise ProviderProtocolError(
                f"{operation}: the memory service's answer ({declared} bytes) is over the "
                f"limit of {wire.MAX_RESPONSE_BYTES}",
                code="response_too_large",
            )
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > wire.MAX_RESPONSE_BYTES:
                raise ProviderProtocolError(
                    f"{operation}: the memory service's answer is over the limit of "
                    f"{wire.MAX_RESPONSE_BYTES} bytes",
                    code="response_too_large",
                )
            if time.monotonic() > deadline:
                raise _BodyDeadline
            chunks.append(chunk)
        return b"".join(chunks)

    def _parse(self, model: type[Reply], payload: Any, operation: str) -> Reply:
        try:
            return model.model_validate(payload)
        except ValidationError as exc:
            raise ProviderProtocolError(
                f"{operation}: the memory service's answer breaks the contract: "
                f"{format_validation_error(exc)}",
                code="protocol_error",
            ) from None


def _scope_fields(key: ScopeKey) -> dict[str, Any]:
    """A retain's scope key as body fields (none for ``agent``, as before scopes)."""
    if key == AGENT:
        return {}
    return {"scope": key.scope, "subject": key.subject}


def _visible_field(visible: tuple[ScopeKey, ...]) -> list[dict[str, Any]] | None:
    """``visible`` as the body field (absent for the ``agent`` key alone, as before scopes)."""
    if visible == (AGENT,):
        return None
    return [wire.ScopeKeyBody.of(key).wire() for key in visible]


class _BodyDeadline(Exception):
    """The response body was still arriving when the deadline passed."""


def _retry_after_s(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after", "").strip()
    if value.isdigit():
        return float(value)
    return None


def _envelope_error(operation: str, status: int, payload: Any) -> ProviderError:
    detail: Mapping[str, Any] = {}
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        detail = payload["error"]
    code = detail.get("code") if isinstance(detail.get("code"), str) else None
    message = detail.get("message") if isinstance(detail.get("message"), str) else None
    # Only the statuses the contract lists are retried; the body may only veto a retry.
    retryable = status in wire.RETRYABLE_STATUSES and detail.get("retryable") is not False
    # Bounded: a hostile server must not flood the model with its message.
    said = (message or f"HTTP {status}")[:300]
    text = f"{operation}: {said}"
    code = code or f"http_{status}"
    if status == 401:
        return ProviderAuthError(
            f"{operation}: the memory service refused the token (401 unauthorized)",
            code=code,
            http_status=status,
        )
    if status == 403:
        return ProviderScopeError(text, code=code, http_status=status)
    if status == 409:
        return ProviderConflict(text, code=code, http_status=status)
    if status == 422 and code == "cap_exceeded":
        try:
            cap = wire.CapBody.model_validate(detail.get("cap"))
        except ValidationError:
            cap = None
        if cap is not None:
            return ProviderCapExceeded(
                said,
                code=code,
                http_status=status,
                cap_bytes=cap.cap_bytes,
                current_size=cap.current_size,
                projected_size=cap.projected_size,
            )
    if status in (400, 413, 422):
        # The request's own fault: the server's words alone, as a local provider says them.
        return ProviderInvalidRequest(said, code=code, http_status=status)
    if status in wire.RETRYABLE_STATUSES or status >= 500:
        return ProviderUnavailable(
            text, code=code, retryable=status in wire.RETRYABLE_STATUSES, http_status=status
        )
    if status in (404, 405):
        return ProviderProtocolError(
            f"{operation}: the memory service has no such endpoint ({status}); check the URL "
            f"and that it speaks contract version {wire.CONTRACT_VERSION}",
            code=code,
            http_status=status,
        )
    return ProviderError(text, code=code, retryable=retryable, http_status=status)
