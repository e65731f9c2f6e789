"""``OpenComputerClient``: the host side of OpenComputer's HTTP memory contract (httpx).

It follows the contract's failure rules exactly (docs/opencomputer.md):

- **Deadline.** One call has ``deadline_s`` (10 s) for every attempt and pause; ``deadlineAt``
  says when, and every attempt sends the same body (same ``operationId``).
- **Retries.** Recall and read tools, and write tools declared ``idempotent``, are retried on
  transport failures, 408, 429 and 5xx, at most twice, after 250 ms then 1 s, or after a valid
  ``Retry-After`` when it fits the deadline. Nothing else is retried.
- **Uncertain.** A write tool not declared idempotent is never retried: a transport failure or a
  timeout answers ``{"status": "uncertain"}`` (a timeout never proves a write failed).
- **Limits.** Request and response bodies at most 64 KiB, at most 100 sources, ids and cursors
  at most 1,024 bytes, recalled text at most ``maxBytes``; invalid JSON, an oversized reply, a
  redirect, a refused credential and exhausted retries are errors, never empty memory.

The token goes only into the ``Authorization`` header: no message, exception or repr has it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from specwire.runtime.core.clock import utc_now
from specwire.runtime.facts.providers.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderInvalidRequest,
    ProviderProtocolError,
    ProviderTimeout,
    ProviderUnavailable,
)
from specwire.runtime.facts.providers.http import opencomputer_wire as oc


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call ended with: the endpoint's ``result``, its error envelope, a
    client-side error (``failure``), or ``uncertain`` (an unconfirmed non-idempotent write)."""

    result: Any = None
    error: oc.Envelope | None = None
    failure: str | None = None
    uncertain: bool = False


@dataclass
class _Attempt:
    status: int | None = None
    payload: Any = None
    # Why it failed, when it did.
    problem: str | None = None
    code: str = "unavailable"
    # Transport failure, timeout, 408, 429 or 5xx.
    retryable: bool = False
    # No answer came back (a transport failure or the deadline): a write may have happened.
    unanswered: bool = False
    timed_out: bool = False
    retry_after_s: float | None = None


class OpenComputerClient:
    """One endpoint, one partition, one access level."""

    def __init__(
        self,
        url: str,
        token: str,
        partition: str,
        *,
        access: oc.Access = "read-write",
        max_bytes: int = oc.MAX_BYTES_DEFAULT,
        deadline_s: float = oc.CALL_DEADLINE_S,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime] = utc_now,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("the memory endpoint must be an http:// or https:// URL")
        if parts.username or parts.password:
            raise ValueError("the memory endpoint URL must not carry credentials: use the token")
        if parts.query or parts.fragment:
            raise ValueError("the memory endpoint URL must have no query or fragment")
        path = parts.path or oc.DEFAULT_PATH
        if oc.PATH_RE.fullmatch(path) is None:
            raise ValueError("the memory endpoint's path must begin with a single /")
        if not token or not token.strip() or any(ch in token for ch in "\r\n"):
            raise ValueError("the token must be a non-empty single-line string")
        if not partition or oc.utf8_len(partition) > oc.MAX_REF_BYTES:
            raise ValueError("the partition must be 1 to 1024 bytes")
        if access not in oc.ACCESS:
            raise ValueError('access must be "read" or "read-write"')
        if not 1 <= max_bytes <= oc.MAX_BYTES_CEILING:
            raise ValueError(f"max_bytes must be 1 to {oc.MAX_BYTES_CEILING}")
        if not 0 < deadline_s <= oc.CALL_DEADLINE_S:
            raise ValueError(f"deadline_s must be more than 0 and at most {oc.CALL_DEADLINE_S}")
        self._url = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        self.partition = partition
        self.access: oc.Access = access
        self.max_bytes = max_bytes
        self._deadline_s = deadline_s
        self._sleep = sleep
        self._clock = clock
        self._wall = wall
        self._client = httpx.Client(
            transport=transport,
            headers={
                "Authorization": f"Bearer {token.strip()}",
                "Accept": "application/json",
                "Content-Type": "application/json",
            },
            follow_redirects=False,
            trust_env=False,
        )
        self.where = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")

    def __repr__(self) -> str:
        return f"OpenComputerClient({self.where!r}, partition={self.partition!r})"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenComputerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- operations -------------------------------------------------------------------------

    def recall(
        self, text: str | None, *, deadline_s: float | None = None, retries: int | None = None
    ) -> oc.Recalled:
        """The partition's projection for ``text`` (None: the input has no text). Raises a
        ``ProviderError`` on any failure: a failed recall is never empty memory."""
        budget = self._budget(deadline_s)
        body = oc.recall_body(
            oc.RecallCall(
                self._operation_id("mrq"),
                self.partition,
                self.access,
                oc.deadline_in(budget, self._wall()),
                text,
                self.max_bytes,
            )
        )
        allowed = oc.MAX_RETRIES if retries is None else retries
        attempt = self._call("recall", oc.encode(body), budget, retries=allowed)
        if attempt.problem is not None:
            raise _error("recall", attempt)
        try:
            return oc.parse_recalled(attempt.payload, self.max_bytes)
        except oc.WireError as exc:
            raise ProviderProtocolError(
                f"recall: the memory endpoint's answer breaks the contract: {exc}",
                code="protocol_error",
            ) from None

    def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        write: bool,
        idempotent: bool,
        cursor: str | None,
        deadline_s: float | None = None,
    ) -> ToolOutcome:
        """Run ``tool`` with ``arguments`` (already validated against its schema)."""
        if write and self.access != "read-write":
            return ToolOutcome(failure="this memory is bound read-only: its write tools are off")
        budget = self._budget(deadline_s)
        body = oc.tool_body(
            oc.ToolCall(
                self._operation_id("tc"),
                self.partition,
                self.access,
                oc.deadline_in(budget, self._wall()),
                tool,
                arguments,
                cursor,
            )
        )
        try:
            raw = oc.encode(body)
        except ValueError:
            return ToolOutcome(failure="the arguments are not JSON")
        retries = oc.MAX_RETRIES if (not write or idempotent) else 0
        attempt = self._call("tool", raw, budget, retries=retries)
        if attempt.problem is None:
            try:
                return ToolOutcome(result=oc.parse_result(attempt.payload))
            except oc.WireError as exc:
                return ToolOutcome(failure=f"the endpoint's answer breaks the contract: {exc}")
        if write and not idempotent and attempt.unanswered:
            return ToolOutcome(result=dict(oc.UNCERTAIN), uncertain=True)
        envelope = oc.parse_envelope(attempt.payload) if attempt.status is not None else None
        if envelope is not None:
            return ToolOutcome(error=envelope)
        return ToolOutcome(failure=attempt.problem)

    # -- the call ---------------------------------------------------------------------------

    def _budget(self, deadline_s: float | None) -> float:
        if deadline_s is None:
            return self._deadline_s
        return max(0.001, min(deadline_s, self._deadline_s))

    @staticmethod
    def _operation_id(prefix: str) -> str:
        return f"{prefix}_{uuid.uuid4().hex}"

    def _call(self, operation: str, body: bytes, budget: float, *, retries: int) -> _Attempt:
        if len(body) > oc.MAX_BODY_BYTES:
            return _Attempt(
                problem=f"the request is {len(body)} bytes, over the contract's "
                f"{oc.MAX_BODY_BYTES}",
                code="payload_too_large",
            )
        deadline = self._clock() + budget
        attempt = _Attempt()
        for number in range(retries + 1):
            attempt = self._attempt(body, deadline)
            if attempt.problem is None or not attempt.retryable or number == retries:
                break
            pause = oc.RETRY_DELAYS_S[number]
            now = self._clock()
            if attempt.retry_after_s is not None and now + attempt.retry_after_s < deadline:
                pause = attempt.retry_after_s
            if now + pause >= deadline:
                break
            self._sleep(pause)
        return attempt

    def _attempt(self, body: bytes, deadline: float) -> _Attempt:
        remaining = deadline - self._clock()
        if remaining <= 0:
            return _Attempt(
                problem="no answer within the deadline",
                code="deadline_exceeded",
                unanswered=True,
                timed_out=True,
            )
        try:
            with self._client.stream(
                "POST", self._url, content=body, timeout=httpx.Timeout(remaining)
            ) as response:
                raw = _read_capped(response, deadline, self._clock)
                status = response.status_code
                retry_after = oc.retry_after_s(response.headers.get("retry-after"), self._wall())
        except (httpx.TimeoutException, _BodyDeadline):
            return _Attempt(
                problem="no answer from the memory endpoint within the deadline",
                code="deadline_exceeded",
                retryable=True,
                unanswered=True,
                timed_out=True,
            )
        except httpx.TransportError as exc:
            return _Attempt(
                problem=f"cannot reach the memory endpoint at {self.where} ({type(exc).__name__})",
                retryable=True,
                unanswered=True,
            )
        except _TooLarge:
            return _Attempt(
                problem=f"the memory endpoint's answer is over {oc.MAX_BODY_BYTES} bytes",
                code="response_too_large",
            )
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            payload = _NOT_JSON
        if status == 200:
            if payload is _NOT_JSON:
                return _Attempt(
                    status=status,
                    problem="the memory endpoint's answer is not JSON",
                    code="protocol_error",
                )
            return _Attempt(status=status, payload=payload)
        envelope = oc.parse_envelope(payload)
        said = (envelope.message if envelope is not None else f"HTTP {status}")[:300]
        if 300 <= status < 400:
            said = f"the memory endpoint redirected (HTTP {status}); redirects are refused"
        return _Attempt(
            status=status,
            payload=payload if payload is not _NOT_JSON else None,
            problem=said,
            code=envelope.code if envelope is not None else f"http_{status}",
            retryable=oc.retryable_status(status),
            retry_after_s=retry_after,
        )


_NOT_JSON: Any = object()


class _BodyDeadline(Exception):
    """The reply was still arriving when the deadline passed."""


class _TooLarge(Exception):
    """The reply is over the contract's body limit."""


def _read_capped(response: httpx.Response, deadline: float, clock: Callable[[], float]) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > oc.MAX_BODY_BYTES:
        raise _TooLarge
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > oc.MAX_BODY_BYTES:
            raise _TooLarge
        if clock() > deadline:
            raise _BodyDeadline
        chunks.append(chunk)
    return b"".join(chunks)


def _error(operation: str, attempt: _Attempt) -> ProviderError:
    """A failed call as the provider error the rest of the runtime knows."""
    text = f"{operation}: {attempt.problem}"
    status = attempt.status
    if status in (401, 403):
        return ProviderAuthError(
            f"{operation}: the memory endpoint refused the credential (HTTP {status})",
            code=attempt.code,
            http_status=status,
        )
    if attempt.timed_out:
        return ProviderTimeout(text, code=attempt.code, retryable=True)
    if attempt.retryable:
        return ProviderUnavailable(text, code=attempt.code, retryable=True, http_status=status)
    if status is not None and 400 <= status < 500:
        return ProviderInvalidRequest(text, code=attempt.code, http_status=status)
    return ProviderProtocolError(text, code=attempt.code, http_status=status)
