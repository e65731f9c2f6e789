"""What both HTTP hosts share: bounded bodies, JSON errors, bearer tokens, draining."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import re
import sys
from collections.abc import Callable
from typing import Annotated, Any, Final, TypeVar

from pydantic import AfterValidator, BaseModel, ValidationError
from starlette.requests import ClientDisconnect, Request

from specwire.runtime.core.fragment import MAX_BODY_ENV
from specwire.runtime.core.ids import check_client_key
from specwire.runtime.core.tool_types import format_validation_error
from specwire.runtime.hosts.http import DRAIN_S
from specwire.runtime.hosts.http.options import DIGITS

# Slack events are a few kilobytes; a chat completion carries one new message (the agent's
# memory holds the rest), so 1 MiB leaves room for a client that resends a long history.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024

Parsed = TypeVar("Parsed", bound=BaseModel)
BODY_DEADLINE_S = 30.0
# A conversation or session key named by a client (see ``runtime.core.ids.CLIENT_KEY_RE``).
ClientKey = Annotated[str, AfterValidator(check_client_key)]


class BadRequest(Exception):
    """A request refused before anything ran: ``status`` and a message naming what is wrong."""

    def __init__(self, status: int, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param


def max_body_bytes() -> int:
    raw = os.environ.get(MAX_BODY_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_BODY_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1024:
        raise ValueError(f"${MAX_BODY_ENV} must be a whole number of bytes >= 1024 (got {raw!r})")
    return value


async def read_body(request: Request, limit: int, *, deadline_s: float = BODY_DEADLINE_S) -> bytes:
    """The request body, refused with 413 past ``limit`` bytes (read no further than that) and
    with 408 when it does not arrive within ``deadline_s`` (a client trickling bytes)."""
    declared = request.headers.get("content-length")
    if declared is not None and DIGITS.fullmatch(declared) and int(declared) > limit:
        raise BadRequest(413, f"the request body is larger than the limit of {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(deadline_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise BadRequest(
                        413, f"the request body is larger than the limit of {limit} bytes"
                    )
                chunks.append(chunk)
    except TimeoutError:
        raise BadRequest(408, f"the request body did not arrive within {deadline_s:g} s") from None
    except ClientDisconnect:
        raise BadRequest(499, "the client went away before sending its body") from None
    return b"".join(chunks)


def parse_json(body: bytes) -> Any:
    """The body as JSON. Invalid Unicode in it — bytes that are not UTF-8, or a lone surrogate
    escape such as ``"\\ud800"`` (no UTF-8 encoding exists for it, so storing or echoing it
    fails later) — is a 400 naming the first field that holds it."""
    undecodable: UnicodeDecodeError | None = None
    try:
        text = body.decode("utf-8")
        suspicious = "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None
    except UnicodeDecodeError as exc:
        # Decoded reversibly, so the bad bytes inside a string land on a field we can name.
        undecodable = exc
        text = body.decode("utf-8", "surrogateescape")
        suspicious = True
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if undecodable is not None:
            raise BadRequest(
                400, f"the request body is not UTF-8 (byte {undecodable.start} cannot be decoded)"
            ) from None
        raise BadRequest(
            400, f"the request body is not valid JSON (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise BadRequest(400, "the request body nests too deeply") from None
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        raise BadRequest(400, f"the request body cannot be read: {exc}") from None
    if suspicious:
        try:
            where = _first_invalid_text(data, ())
        except RecursionError:
            where = ("(nested too deeply to name)",)
        if where is not None:
            field = (".".join(where) or "(the body)")[:_FIELD_CHARS]
            raise BadRequest(
                400,
                f"the request body's field {field!r} holds invalid Unicode (bytes that are not "
                "UTF-8, or a lone surrogate escape such as \\ud800)",
                param=field,
            )
    return data


# Only an escape like \ud800 or an undecodable byte (decoded as U+DC80..U+DCFF) can give
# a parsed string a surrogate: a body without either skips the walk.
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")
_FIELD_CHARS: Final = 200
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")


def _first_invalid_text(value: Any, where: tuple[str, ...]) -> tuple[str, ...] | None:
    """The path (keys and list indexes) of the first string in ``value`` holding a surrogate."""
    if isinstance(value, str):
        return where if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if _SURROGATE.search(key):
                return (*where, key.encode("utf-8", "replace").decode("utf-8"))
            found = _first_invalid_text(item, (*where, key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_invalid_text(item, (*where, str(index)))
            if found is not None:
                return found
    return None


def parse_model(body: bytes, model: type[Parsed]) -> Parsed:
    """The body as ``model``; a wrong shape is a 400 naming the offending field."""
    data = parse_json(body)
    if not isinstance(data, dict):
        raise BadRequest(400, "the request body must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else None
        param = ".".join(str(part) for part in first["loc"]) if first else None
        raise BadRequest(400, format_validation_error(exc), param=param or None) from None


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()


def tokens_match(given: str, expected: str) -> bool:
    """Constant-time comparison (of digests, so the length of the secret does not leak)."""
    return hmac.compare_digest(_digest(given), _digest(expected))


async def drain_dreams(log: Callable[[str], None]) -> None:
    """Let dream runs a turn started (``runtime.dream.schedule``) finish, up to ``DRAIN_S``."""
    schedule = sys.modules.get(
        "specwire.runtime.dream.schedule"
    )  # loaded only by a spec with a dream
    if schedule is not None:
        await asyncio.to_thread(schedule.finish_dreams, DRAIN_S, log)


async def drain(tasks: set[asyncio.Task[Any]], log: Callable[[str], None], *, what: str) -> None:
    """Let background turns finish before the process exits (a Slack event was already
    acknowledged, a streamed turn's client may be gone); say what was cut off after ``DRAIN_S``."""
    if not tasks:
        return
    log(f"[serve] stopping: waiting up to {DRAIN_S:g} s for {len(tasks)} {what}\n")
    _, pending = await asyncio.wait(set(tasks), timeout=DRAIN_S)
    if pending:
        log(f"[serve] stopped with {len(pending)} {what} unfinished\n")
