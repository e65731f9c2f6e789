"""The reference memory server: any ``FactProvider`` served over the HTTP memory contract.

``memory_app(provider_for, tokens)`` is the ASGI app (Starlette). The tenant is the one whose
bearer token the request carries (compared in constant time against every tenant's digest);
``provider_for(tenant, spec, session)`` returns the provider for that scope, so a body can
name a spec and a session but never another tenant. Every refusal uses the contract's error
envelope. Write ``operationId``\\s are de-duplicated per tenant in a bounded LRU (in this
process: run one server process per store, or put a shared de-dup in front, when scaling out).

``specwire-memory-server --root DIR [--tenant ID ...] [--host H] [--port P]`` serves
``LocalFactProvider`` stores at ``<root>/tenants/<tenant>/facts/<spec>.sqlite3`` (session-scoped
facts at ``<root>/tenants/<tenant>/session-facts/<session>/facts/<spec>.sqlite3``). Each
tenant's token is read from ``SPECWIRE_MEMORY_TOKEN_<TENANT ID>`` (the id upper-cased, every
other character ``_``; at least 16 characters; never shared). ``--tenant`` defaults to the
tenant folders already under ``<root>/tenants``. ``--openapi`` prints the contract as OpenAPI.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import socket
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.errors import (
    LockTimeoutError,
    ServeConfigError,
    StoreError,
    TenancyError,
)
from specwire.runtime.core.fragment import storage_name
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tenancy import TENANT_ID_RE, assert_inside, build_tenant
from specwire.runtime.facts.model import (
    CapExceededError,
    FactRecord,
    FactStatus,
    InvalidRequestError,
    Provenance,
    QuarantinedFact,
)
from specwire.runtime.facts.pool import FactStoreLease, FactStorePool
from specwire.runtime.facts.providers.admin import (
    EVERY_KEY,
    FactExporter,
    FactFilter,
    FactRestorer,
    QuarantineReader,
)
from specwire.runtime.facts.providers.errors import (
    ProviderScopeError,
    ProviderUnavailable,
    ProviderUncertain,
)
from specwire.runtime.facts.providers.http import contract as wire
from specwire.runtime.facts.providers.http import transfer
from specwire.runtime.facts.providers.http.opencomputer_wire import PATH_RE as OPENCOMPUTER_PATH_RE
from specwire.runtime.facts.providers.local_admin import LocalFactAdmin
from specwire.runtime.facts.providers.protocol import (
    STORE_CAPABILITIES,
    Capabilities,
    FactProvider,
    FactReader,
    ForgetRequest,
    ForgetResult,
    Health,
    ProviderHit,
    ReadRequest,
    ReadResponse,
    RecallRequest,
    RecallResponse,
    RetainRequest,
    RetainResult,
)
from specwire.runtime.hosts.http.common import (
    BadRequest,
    bearer_token,
    parse_json,
    parse_model,
    read_body,
)
from specwire.runtime.hosts.http.opencomputer_server import (
    DEFAULT_PATH as OPENCOMPUTER_PATH,
)
from specwire.runtime.hosts.http.opencomputer_server import (
    OpenComputerEndpoint,
    PartitionTable,
    derive_partition,
    tools_declaration,
)
from specwire.runtime.hosts.http.tenant_keys import TenantKeys, load_tenant_keys

# (tenant id, spec, session or None) → the provider serving that scope.
ProviderFor = Callable[[str, str, str | None], FactProvider]
TOKEN_ENV_PREFIX: Final = "SPECWIRE_MEMORY_TOKEN_"
OWNER_TOKEN_ENV_PREFIX: Final = "SPECWIRE_MEMORY_OWNER_TOKEN_"
SHA256_PREFIX: Final = "sha256:"
DEFAULT_PORT: Final = 8765
_Result = TypeVar("_Result")


def token_variable(tenant_id: str) -> str:
    """``tenant-acme`` → ``SPECWIRE_MEMORY_TOKEN_TENANT_ACME``."""
    return TOKEN_ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", tenant_id).upper()


def owner_token_variable(tenant_id: str) -> str:
    """``tenant-acme`` → ``SPECWIRE_MEMORY_OWNER_TOKEN_TENANT_ACME``."""
    return OWNER_TOKEN_ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", tenant_id).upper()


def tenant_keys_from(tokens: TenantKeys | Mapping[str, str]) -> TenantKeys:
    """``tokens`` as ``TenantKeys``: a mapping is ``token → tenant`` where a key is the token
    itself or ``"sha256:<hex digest of its UTF-8 bytes>"`` (so a config never holds secrets)."""
    if isinstance(tokens, TenantKeys):
        return tokens
    digests: list[tuple[str, bytes]] = []
    for key, tenant_id in tokens.items():
        if not TENANT_ID_RE.fullmatch(tenant_id):
            raise ServeConfigError(f"invalid tenant id {tenant_id!r}")
        if key.startswith(SHA256_PREFIX):
            try:
                digest = bytes.fromhex(key[len(SHA256_PREFIX) :])
            except ValueError:
                digest = b""
            if len(digest) != 32:
                raise ServeConfigError(f"tenant {tenant_id!r}: not a sha256 hex digest")
        else:
            digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
        digests.append((tenant_id, digest))
    if len({digest for _, digest in digests}) != len(digests):
        raise ServeConfigError("two tenants share a token; give each tenant its own")
    return TenantKeys(tuple(digests))


# -- errors ------------------------------------------------------------------------------------


class _Refusal(Exception):
    def __init__(
        self, code: str, message: str, *, param: str | None = None, cap: wire.CapBody | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param
        self.cap = cap


# An absolute POSIX path (not the "//" of a URL): what an exception's text may quote about this
# server's files, which a client is never told.
_SERVER_PATH: Final = re.compile(
    r"(?P<quote>['\"])/.*?(?P=quote)|(?<![\w:/.])/[^\s'\"/]+(?:/[^\s'\"/]*)*"
)


def public_message(message: str) -> str:
    """``message`` with every absolute path in it (quoted ones whole, spaces and all) replaced
    by ``<path>``."""

    def hidden(match: re.Match[str]) -> str:
        quote = match.group("quote") or ""
        return f"{quote}<path>{quote}"

    return _SERVER_PATH.sub(hidden, message)


def envelope(
    code: str,
    message: str,
    *,
    param: str | None = None,
    headers: Mapping[str, str] | None = None,
    cap: wire.CapBody | None = None,
) -> JSONResponse:
    """The contract's error envelope; the message never quotes a server path."""
    status, _ = wire.ERROR_CODES[code]
    return JSONResponse(
        wire.error_body(code, public_message(message), param=param, cap=cap),
        status_code=status,
        headers=headers,
    )


_STATUS_CODES: Final = {
    400: "invalid_request",
    408: "request_timeout",
    413: "payload_too_large",
    499: "invalid_request",
}


# -- operation de-duplication ------------------------------------------------------------------


@dataclass
class _Operation:
    fingerprint: str
    started: float
    outcome: asyncio.Future[tuple[int, dict[str, Any]]]


@dataclass
class OperationLog:
    """Each tenant's recent write operations, by ``operationId``: bounded in number and age."""

    window_s: float = wire.DEDUP_WINDOW_S
    max_per_tenant: int = wire.DEDUP_MAX_PER_TENANT
    clock: Callable[[], float] = time.monotonic
    _tenants: dict[str, OrderedDict[str, _Operation]] = field(default_factory=dict)

    def _log(self, tenant_id: str) -> OrderedDict[str, _Operation]:
        log = self._tenants.setdefault(tenant_id, OrderedDict())
        now = self.clock()
        while log:
            oldest = next(iter(log.values()))
            if now - oldest.started < self.window_s or not oldest.outcome.done():
                break
            log.popitem(last=False)
        return log

    def find(self, tenant_id: str, operation_id: str) -> _Operation | None:
        log = self._log(tenant_id)
        found = log.get(operation_id)
        if found is not None:
            log.move_to_end(operation_id)
        return found

    def start(self, tenant_id: str, operation_id: str, fingerprint: str) -> _Operation:
        log = self._log(tenant_id)
        entry = _Operation(fingerprint, self.clock(), asyncio.get_running_loop().create_future())
        log[operation_id] = entry
        while len(log) > self.max_per_tenant:
            victim = next((key for key, op in log.items() if op.outcome.done()), None)
            if victim is None:
                break
            del log[victim]
        return entry

    def drop(self, tenant_id: str, operation_id: str, entry: _Operation) -> None:
        log = self._tenants.get(tenant_id)
        if log is not None and log.get(operation_id) is entry:
            del log[operation_id]


# -- the operations ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """What an operation runs on: the scope's provider, and whether the client reads the
    replies' scope fields (``Memory-Features: scopes``)."""

    provider: FactProvider
    scoped_replies: bool = False
    # With ``Memory-Features: owner``: whether this server and scope serve the owner transfer.
    owner_transfer: bool | None = None


def _retain(call: Call, body: wire.RetainBody) -> BaseModel:
    provenance = None
    if body.provenance is not None:
        provenance = Provenance(body.provenance.session_id, tuple(body.provenance.evidence))
    scope = body.memory_scope()
    if body.key is not None or scope.scope != "agent":
        _needs_scopes(call.provider)
    result = call.provider.retain(
        RetainRequest(
            body.text,
            tuple(body.tags),
            body.ttl_ms,
            provenance,
            supersedes=body.supersedes,
            if_absent=body.if_absent,
            scope=scope,
            key=body.key,
            mode=body.mode or "replace",
            tier=body.tier,
            max_bytes=body.max_bytes,
        )
    )
    return wire.RetainReply(
        id=result.id,
        created=result.created,
        expires_at=result.expires_at,
        superseded=result.superseded,
        quarantined=result.quarantined,
        text=result.text,
        tags=list(result.tags) if result.tags is not None else None,
        bytes=result.bytes if call.scoped_replies else None,
    )


def _recall(call: Call, body: wire.RecallBody) -> BaseModel:
    visible = wire.scope_keys(body.visible)
    tiers = tuple(body.tiers or ())
    if body.visible is not None or tiers:
        _needs_scopes(call.provider)
    response = call.provider.recall(RecallRequest(body.query, body.limit, visible, tiers))
    return wire.RecallReply(
        hits=[
            wire.HitBody(
                id=hit.id,
                text=hit.text,
                tags=list(hit.tags),
                score=hit.score,
                evidence_backed=hit.evidence_backed,
                **_scoped(hit, call.scoped_replies),
            )
            for hit in response.hits[: body.limit]
        ]
    )


def _forget(call: Call, body: wire.ForgetBody) -> BaseModel:
    visible = body.scope_keys()
    if visible != wire.scope_keys(None):
        _needs_scopes(call.provider)
    result = call.provider.forget(
        ForgetRequest(
            id=body.id,
            query=body.query,
            reason=body.reason,
            at_most=body.at_most,
            visible=visible,
        )
    )
    # Texts only for the first MAX_K facts: a broad forget must not outgrow the response cap.
    texts = list(result.texts[: wire.MAX_K])
    return wire.ForgetReply(removed=result.removed, ids=list(result.ids), texts=texts)


def _read(call: Call, body: wire.ReadBody) -> BaseModel:
    provider = call.provider
    if not isinstance(provider, FactReader) or not provider.capabilities().point_read:
        raise _Unsupported("point reads are not supported by this memory store")
    response: ReadResponse = provider.read(
        ReadRequest(id=body.id, key=body.key, visible=wire.scope_keys(body.visible))
    )
    return wire.ReadReply(
        records=[
            wire.RecordBody(
                id=record.id,
                text=record.text,
                tags=list(record.tags),
                created_at=record.created_at,
                expires_at=record.expires_at,
                evidence_backed=record.evidence_backed,
                **_scoped(record, call.scoped_replies),
            )
            for record in response.records[: wire.MAX_VISIBLE]
        ]
    )


def _health(call: Call, body: wire.ScopeBody) -> BaseModel:
    health = call.provider.health()
    message = None if health.ok or health.message is None else public_message(health.message)
    return wire.HealthReply(ok=health.ok, message=message, checked_at=health.checked_at)


def _capabilities(call: Call, body: wire.ScopeBody) -> BaseModel:
    caps = call.provider.capabilities()
    scoped = call.scoped_replies
    return wire.CapabilitiesReply(
        lexical=caps.lexical,
        semantic=caps.semantic,
        ttl=caps.ttl,
        supersede=caps.supersede,
        provenance=caps.provenance,
        forget_by_query=caps.forget_by_query,
        tombstones=caps.tombstones,
        subject_cascade=caps.subject_cascade,
        scopes=caps.scopes if scoped else None,
        keys=caps.keys if scoped else None,
        point_read=caps.point_read if scoped else None,
        owner_transfer=call.owner_transfer,
    )


class _Unsupported(Exception):
    """The scope's provider cannot do what the request asks (422 ``refused``)."""


def _needs_scopes(provider: FactProvider) -> None:
    """Fail closed: a provider without scope keys would serve a scoped request unscoped."""
    if not provider.capabilities().scopes:
        raise _Unsupported("memory scopes and keys are not supported by this memory store")


def _scoped(item: ProviderHit | FactRecord, scoped_replies: bool) -> dict[str, Any]:
    """A hit's or record's scope key, key and tier as reply fields (none for a client that
    does not read them)."""
    if not scoped_replies:
        return {}
    return {
        "scope": item.scope.scope,
        "subject": item.scope.subject,
        "key": item.key,
        "tier": item.tier,
    }


def transfers(provider: FactProvider) -> bool:
    """Whether the owner transfer can read and write this provider's whole memory."""
    return (
        isinstance(provider, FactExporter)
        and isinstance(provider, QuarantineReader)
        and isinstance(provider, FactRestorer)
    )


def _export(call: Call, body: wire.ExportBody) -> BaseModel:
    provider = call.provider
    if not transfers(provider):
        raise _Unsupported("export is not supported by this memory store")
    assert isinstance(provider, FactExporter) and isinstance(provider, QuarantineReader)
    after = body.after
    # Sorted and cut to the page before any record is built: a page costs its own size.
    pending: list[FactStatus] | list[QuarantinedFact]
    if body.kind == "facts":
        pending = sorted(
            (s for s in provider.export_facts() if after is None or s.fact.id > after),
            key=lambda status: status.fact.id,
        )
    else:
        pending = sorted(
            (h for h in provider.quarantined() if after is None or h.id > after),
            key=lambda held: held.id,
        )
    page: list[BaseModel] = []
    size = 0
    for item in pending[: body.limit]:
        if page and size > wire.EXPORT_PAGE_BYTES:
            break
        record = (
            transfer.fact_body(item) if isinstance(item, FactStatus) else transfer.held_body(item)
        )
        page.append(record)
        size += len(record.model_dump_json(by_alias=True))
    next_after = _record_id(page[-1]) if len(page) < len(pending) else None
    if body.kind == "facts":
        return wire.ExportReply(facts=page, next_after=next_after)
    return wire.ExportReply(held=page, next_after=next_after)


def _record_id(record: BaseModel) -> str:
    found: str = getattr(record, "id")  # noqa: B009 - both record models have an id
    return found


def _restore(call: Call, body: wire.RestoreBody) -> BaseModel:
    provider = call.provider
    if not transfers(provider):
        raise _Unsupported("restore is not supported by this memory store")
    assert isinstance(provider, FactExporter) and isinstance(provider, QuarantineReader)
    assert isinstance(provider, FactRestorer)
    facts_present = held_present = 0
    if body.facts:
        held_facts = {status.fact.id: status for status in provider.export_facts()}
        for given in body.facts:
            existing = held_facts.get(given.id)
            if existing is None:
                continue
            if not transfer.same_fact(existing, given):
                raise _Refusal(
                    "conflict",
                    f"fact {given.id} is held here with other contents; nothing was written",
                )
            facts_present += 1
    if body.held:
        held_now = {held.id: held for held in provider.quarantined()}
        for item in body.held:
            found = held_now.get(item.id)
            if found is None:
                continue
            if transfer.held_body(found) != item:
                raise _Refusal(
                    "conflict",
                    f"held write {item.id} is held here with other contents; nothing was written",
                )
            held_present += 1
    facts_written = provider.restore_facts([transfer.fact_status(f) for f in body.facts])
    held_written = provider.restore_quarantined([transfer.held_fact(h) for h in body.held])
    return wire.RestoreReply(
        facts_written=facts_written,
        held_written=held_written,
        facts_present=facts_present,
        held_present=held_present,
    )


@dataclass(frozen=True)
class Operation:
    name: str
    body: type[wire.ScopeBody]
    reply: type[BaseModel]
    run: Callable[[Call, Any], BaseModel]
    write: bool
    summary: str


OPERATIONS: Final = (
    Operation("retain", wire.RetainBody, wire.RetainReply, _retain, True, "Store one fact"),
    Operation("recall", wire.RecallBody, wire.RecallReply, _recall, False, "Search facts"),
    Operation("forget", wire.ForgetBody, wire.ForgetReply, _forget, True, "Tombstone facts"),
    Operation("read", wire.ReadBody, wire.ReadReply, _read, False, "Read one fact by id or key"),
    Operation(
        "health", wire.ScopeBody, wire.HealthReply, _health, False, "The scope's store health"
    ),
    Operation(
        "capabilities",
        wire.ScopeBody,
        wire.CapabilitiesReply,
        _capabilities,
        False,
        "What the provider supports",
    ),
)


# The owner transfer: served only with owner tokens, only to them.
OWNER_OPERATIONS: Final = (
    Operation(
        "export",
        wire.ExportBody,
        wire.ExportReply,
        _export,
        False,
        "Page through every fact or held write, history included (owner token)",
    ),
    Operation(
        "restore",
        wire.RestoreBody,
        wire.RestoreReply,
        _restore,
        True,
        "Write facts and held writes as another store holds them, idempotent by id (owner token)",
    ),
)


# -- the app -----------------------------------------------------------------------------------


def memory_app(
    provider_for: ProviderFor,
    tokens: TenantKeys | Mapping[str, str],
    *,
    max_body: int = wire.MAX_REQUEST_BYTES,
    operations: OperationLog | None = None,
    log: Callable[[str], None] | None = None,
    opencomputer: PartitionTable | None = None,
    opencomputer_path: str = OPENCOMPUTER_PATH,
    owner_tokens: TenantKeys | Mapping[str, str] | None = None,
) -> Starlette:
    """``opencomputer``: also serve OpenComputer's HTTP memory contract at
    ``opencomputer_path``, its partitions mapped by this table (``opencomputer_server``).
    ``owner_tokens`` (as ``tokens``): serve the owner transfer (export, restore) to them; no
    owner token may be an agent's."""
    keys = tenant_keys_from(tokens)
    owner_keys = None if owner_tokens is None else tenant_keys_from(owner_tokens)
    if owner_keys is not None and {d for _, d in owner_keys.digests} & {d for _, d in keys.digests}:
        raise ServeConfigError("an owner token is also an agent token; give the owner its own")
    oplog = operations if operations is not None else OperationLog()
    say = log if log is not None else _stderr

    def tenant_of(request: Request) -> str:
        given = bearer_token(request)
        tenant_id = keys.tenant_for(given) if given is not None else None
        if tenant_id is None:
            raise _Refusal(
                "unauthorized",
                "the token is not a tenant's"
                if given
                else "missing token: send 'Authorization: Bearer <tenant token>'",
            )
        return tenant_id

    async def parsed(request: Request, model: type[wire.ScopeBody]) -> wire.ScopeBody:
        try:
            raw = await read_body(request, max_body)
            data = parse_json(raw)
            if isinstance(data, dict) and data.get("version", wire.CONTRACT_VERSION) != (
                wire.CONTRACT_VERSION
            ):
                raise _Refusal(
                    "unsupported_version",
                    f"this server speaks contract version {wire.CONTRACT_VERSION}",
                    param="version",
                )
            return parse_model(raw, model)
        except BadRequest as exc:
            raise _Refusal(
                _STATUS_CODES.get(exc.status, "invalid_request"), exc.message, param=exc.param
            ) from None

    def provider_in(tenant_id: str, body: wire.ScopeBody) -> FactProvider:
        if body.tenant is not None and body.tenant != tenant_id:
            raise _Refusal(
                "scope_violation", "the request names a tenant its token does not belong to"
            )
        try:
            return provider_for(tenant_id, body.spec, body.session)
        except (ProviderScopeError, TenancyError, PermissionError) as exc:
            raise _Refusal("scope_violation", f"scope refused: {exc}") from None
        except ProviderUnavailable as exc:
            raise _Refusal("unavailable", str(exc)) from None
        except (StoreError, OSError) as exc:
            say(f"[memory-server] cannot open the store for {tenant_id}: {exc}\n")
            raise _Refusal("unavailable", "the store for this scope cannot be opened") from None

    def owner_of(request: Request) -> str:
        if owner_keys is None:
            raise _Refusal(
                "not_found",
                "this server does not serve the owner transfer (start it with --owner-tokens)",
            )
        if not _reads_feature(request, wire.FEATURE_OWNER):
            raise _Refusal(
                "invalid_request",
                f"send '{wire.FEATURES_HEADER}: {wire.FEATURE_OWNER}' to call the owner transfer",
                param=wire.FEATURES_HEADER,
            )
        given = bearer_token(request)
        tenant_id = owner_keys.tenant_for(given) if given is not None else None
        if tenant_id is not None:
            return tenant_id
        if given is not None and keys.tenant_for(given) is not None:
            raise _Refusal(
                "scope_violation",
                "export and restore need the tenant's owner token, not the agent's",
            )
        raise _Refusal(
            "unauthorized",
            "the token is not a tenant owner's"
            if given
            else "missing token: send 'Authorization: Bearer <owner token>'",
        )

    async def run(
        operation: Operation, call: Call, body: Any, deadline: float | None
    ) -> dict[str, Any]:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise _Refusal("deadline_exceeded", "the request's deadline passed before it ran")
        try:
            work = run_in_threadpool(operation.run, call, body)
            # A write, once started, runs to its end; a read is abandoned at the deadline.
            reply = await (work if operation.write else asyncio.wait_for(work, remaining))
        except _Refusal:
            raise
        except TimeoutError:
            raise _Refusal(
                "deadline_exceeded", "the read did not finish within the request's deadline"
            ) from None
        except InvalidRequestError as exc:
            raise _Refusal("invalid_request", str(exc)) from None
        except CapExceededError as exc:
            cap = wire.CapBody(
                cap_bytes=exc.cap_bytes,
                current_size=exc.current_size,
                projected_size=exc.projected_size,
            )
            raise _Refusal("cap_exceeded", str(exc), cap=cap) from None
        except _Unsupported as exc:
            raise _Refusal("refused", str(exc)) from None
        except ProviderScopeError as exc:
            raise _Refusal("scope_violation", str(exc)) from None
        except (LockTimeoutError, ProviderUnavailable, ProviderUncertain) as exc:
            # A proxied remote provider's failure is this server's unavailability.
            raise _Refusal("unavailable", str(exc)) from None
        except StoreError as exc:
            raise _Refusal("refused", str(exc)) from None
        except Exception as exc:  # a provider's bug must still answer with the envelope
            say(f"[memory-server] {operation.name} failed: {type(exc).__name__}: {exc}\n")
            raise _Refusal("internal", "the provider failed") from None
        return reply.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def deduplicated(
        operation: Operation,
        tenant_id: str,
        call: Call,
        body: Any,
        deadline: float | None,
    ) -> dict[str, Any]:
        operation_id = getattr(body, "operation_id", None)
        if not operation.write or operation_id is None:
            return await run(operation, call, body, deadline)
        fields = body.model_dump(mode="json", exclude={"operation_id"})
        # The reply's shape is part of the request: a replay must not hand a client fields
        # it does not read.
        fingerprint = hashlib.sha256(
            json.dumps([operation.name, fields, call.scoped_replies], sort_keys=True).encode()
        ).hexdigest()
        seen = oplog.find(tenant_id, operation_id)
        if seen is not None:
            if seen.fingerprint != fingerprint:
                raise _Refusal(
                    "conflict",
                    "this operationId was already used for a different request",
                    param="operationId",
                )
            status, payload = await asyncio.shield(seen.outcome)
            if status != 200:
                raise _Refusal(
                    payload["code"],
                    payload["message"],
                    param=payload.get("param"),
                    cap=payload.get("cap"),
                )
            return payload
        entry = oplog.start(tenant_id, operation_id, fingerprint)
        try:
            payload = await run(operation, call, body, deadline)
        except _Refusal as refusal:
            # Not remembered: a retry runs the write again (nothing was applied).
            oplog.drop(tenant_id, operation_id, entry)
            entry.outcome.set_result(
                (
                    wire.ERROR_CODES[refusal.code][0],
                    {
                        "code": refusal.code,
                        "message": refusal.message,
                        "param": refusal.param,
                        "cap": refusal.cap,
                    },
                )
            )
            raise
        entry.outcome.set_result((200, payload))
        return payload

    def endpoint(operation: Operation) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Response:
            arrived = time.monotonic()
            try:
                tenant_id = tenant_of(request)
                budget = deadline_budget(request)
                deadline = None if budget is None else arrived + budget
                body = await parsed(request, operation.body)
                provider = provider_in(tenant_id, body)
                owner_transfer = None
                if _reads_feature(request, wire.FEATURE_OWNER):
                    owner_transfer = owner_keys is not None and transfers(provider)
                call = Call(
                    provider,
                    scoped_replies=_reads_feature(request, wire.FEATURE_SCOPES),
                    owner_transfer=owner_transfer,
                )
                payload = await deduplicated(operation, tenant_id, call, body, deadline)
            except _Refusal as refusal:
                headers = {"WWW-Authenticate": "Bearer"} if refusal.code == "unauthorized" else None
                return envelope(
                    refusal.code,
                    refusal.message,
                    param=refusal.param,
                    headers=headers,
                    cap=refusal.cap,
                )
            return JSONResponse(payload)

        return handle

    def owner_endpoint(operation: Operation) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Response:
            arrived = time.monotonic()
            try:
                tenant_id = owner_of(request)
                budget = deadline_budget(request)
                deadline = None if budget is None else arrived + budget
                body = await parsed(request, operation.body)
                call = Call(provider_in(tenant_id, body), scoped_replies=True)
                payload = await run(operation, call, body, deadline)
            except _Refusal as refusal:
                headers = {"WWW-Authenticate": "Bearer"} if refusal.code == "unauthorized" else None
                return envelope(refusal.code, refusal.message, param=refusal.param, headers=headers)
            return JSONResponse(payload)

        return handle

    async def healthz(request: Request) -> Response:
        return JSONResponse(wire.ServiceHealth().wire())

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 405:
            return envelope("method_not_allowed", "this endpoint takes POST")
        if status == 404:
            return envelope("not_found", "no such endpoint")
        return envelope("internal", "the server failed")

    routes = [
        Route(f"{wire.API_PREFIX}/{op.name}", endpoint(op), methods=["POST"]) for op in OPERATIONS
    ]
    routes.extend(
        Route(f"{wire.API_PREFIX}/{op.name}", owner_endpoint(op), methods=["POST"])
        for op in OWNER_OPERATIONS
    )
    routes.append(Route("/healthz", healthz, methods=["GET"]))
    if opencomputer is not None:
        endpoint_oc = OpenComputerEndpoint(provider_for, keys, opencomputer, log=say)
        routes.append(Route(opencomputer_path, endpoint_oc.handle, methods=["POST"]))
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error})


def _reads_feature(request: Request, feature: str) -> bool:
    """Whether the client named ``feature`` in ``Memory-Features`` (a comma-separated list)."""
    features = request.headers.get(wire.FEATURES_HEADER, "")
    return feature in {part.strip().lower() for part in features.split(",")}


# -- OpenAPI -----------------------------------------------------------------------------------


def deadline_budget(request: Request) -> float | None:
    """The ``Deadline-Ms`` header in seconds (None without one); 400 when malformed."""
    raw = request.headers.get(wire.DEADLINE_HEADER)
    if raw is None:
        return None
    if not raw.strip().isdigit() or not 1 <= int(raw) <= wire.MAX_DEADLINE_MS:
        raise _Refusal(
            "invalid_request",
            f"{wire.DEADLINE_HEADER} must be milliseconds, 1 to {wire.MAX_DEADLINE_MS}",
            param=wire.DEADLINE_HEADER,
        )
    return int(raw) / 1000


def openapi_document() -> dict[str, Any]:
    """The contract as an OpenAPI 3.1 document, from the same models and routes the app serves."""
    models: list[type[BaseModel]] = [wire.ErrorBody, wire.ServiceHealth]
    for op in (*OPERATIONS, *OWNER_OPERATIONS):
        models.extend([op.body, op.reply])
    unique = list(dict.fromkeys(models))
    bodies = {op.body for op in (*OPERATIONS, *OWNER_OPERATIONS)}
    _, schemas = models_json_schema(
        [(model, "validation" if model in bodies else "serialization") for model in unique],
        by_alias=True,
        ref_template="#/components/schemas/{model}",
    )
    errors = {
        str(status): {
            "description": ", ".join(
                code for code, (code_status, _) in wire.ERROR_CODES.items() if code_status == status
            ),
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
        }
        for status in sorted({status for status, _ in wire.ERROR_CODES.values()})
    }
    paths: dict[str, Any] = {}
    for op in (*OPERATIONS, *OWNER_OPERATIONS):
        owner = op in OWNER_OPERATIONS
        paths[f"{wire.API_PREFIX}/{op.name}"] = {
            "post": {
                "operationId": op.name,
                "summary": op.summary,
                "description": _operation_description(op, owner),
                "security": [{"owner": []}] if owner else [{"bearer": []}],
                "parameters": [
                    {
                        "name": wire.DEADLINE_HEADER,
                        "in": "header",
                        "required": False,
                        "description": "The caller's remaining budget in milliseconds: an "
                        "operation not started within it is refused (504 deadline_exceeded, "
                        "not applied); a read still running at it is abandoned.",
                        "schema": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": wire.MAX_DEADLINE_MS,
                        },
                    },
                    {
                        "name": wire.FEATURES_HEADER,
                        "in": "header",
                        "required": False,
                        "description": f"'{wire.FEATURE_SCOPES}': the reply carries the memory "
                        "scope fields (a hit's or record's scope, subject, key and tier; a "
                        "retain's bytes; the scope capabilities). Without it they are left out, "
                        "as clients written before them expect.",
                        "schema": {"type": "string"},
                    },
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": f"#/components/schemas/{op.body.__name__}"}
                        }
                    },
                },
                "responses": {
                    "200": {
                        "description": "OK",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": f"#/components/schemas/{op.reply.__name__}"}
                            }
                        },
                    },
                    **errors,
                },
            }
        }
    paths["/healthz"] = {
        "get": {
            "operationId": "serviceHealth",
            "summary": "The server is up (no token needed)",
            "responses": {
                "200": {
                    "description": "OK",
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/ServiceHealth"}
                        }
                    },
                }
            },
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "specwire memory provider",
            "version": str(wire.CONTRACT_VERSION),
            "description": (wire.__doc__ or "").strip(),
        },
        "paths": paths,
        "components": {
            "schemas": schemas.get("$defs", {}),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "owner": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "The tenant's owner token (never the agent's): "
                    f"${OWNER_TOKEN_ENV_PREFIX}<TENANT ID> on specwire-memory-server "
                    "--owner-tokens.",
                },
            },
        },
        "x-limits": {
            "maxRequestBytes": wire.MAX_REQUEST_BYTES,
            "maxResponseBytes": wire.MAX_RESPONSE_BYTES,
            "maxOperationIdChars": wire.MAX_OPERATION_ID_CHARS,
            "maxK": wire.MAX_K,
            "maxVisibleScopeKeys": wire.MAX_VISIBLE,
            "maxRetries": wire.MAX_RETRIES,
            "dedupWindowSeconds": wire.DEDUP_WINDOW_S,
            "dedupMaxPerTenant": wire.DEDUP_MAX_PER_TENANT,
            "maxExportPage": wire.MAX_EXPORT_PAGE,
            "exportPageBytes": wire.EXPORT_PAGE_BYTES,
            "maxRestoreBatch": wire.MAX_RESTORE_BATCH,
        },
    }


def _operation_description(op: Operation, owner: bool) -> str:
    if owner and op.write:
        return (
            "The owner transfer (send 'Memory-Features: owner'): idempotent by id, always safe "
            "to retry; a record held here with other contents is 409 and nothing is written."
        )
    if owner:
        return "The owner transfer (send 'Memory-Features: owner'): a read, safe to retry."
    if op.write:
        return (
            "A write: send an operationId to make it idempotent (de-duplicated per "
            "tenant; the same id with another body is 409)."
        )
    return "A read: no side effects, always safe to retry."


def openapi_json() -> str:
    return json.dumps(openapi_document(), indent=2, ensure_ascii=False) + "\n"


# -- local stores per tenant -------------------------------------------------------------------


MAX_OPEN_STORES: Final = 64  # per process (each open store holds three files: db, WAL, shm)
MAX_OPEN_STORES_PER_TENANT: Final = 16
STORE_IDLE_S: Final = 300.0


class LocalStores:
    """``provider_for`` over local fact stores under ``<root>/tenants``. Only ``tenant_ids``
    are served.

    Stores stay open between requests in a ``FactStorePool``: at most ``max_open`` in the
    process, the least recently used idle one closed first, an idle one closed after
    ``idle_s``; and at most ``max_open_per_tenant`` of them for any one tenant (its least
    recently used store leaves the pool when it opens another), so one tenant naming hundreds
    of specs or sessions cannot hold the process's files and starve another tenant's writes.
    Each operation borrows its store and gives it back; a store in use is never closed under it.
    """

    def __init__(
        self,
        root: Path,
        tenant_ids: Sequence[str],
        *,
        now: Clock = utc_now,
        max_open: int = MAX_OPEN_STORES,
        max_open_per_tenant: int = MAX_OPEN_STORES_PER_TENANT,
        idle_s: float = STORE_IDLE_S,
        log: Callable[[str], None] | None = None,
    ) -> None:
        if not 1 <= max_open_per_tenant <= max_open:
            raise ValueError("max_open_per_tenant must be between 1 and max_open")
        self._tenants_root = root.resolve() / "tenants"
        self._now = now
        self._tenant_ids = frozenset(tenant_ids)
        self._pool = FactStorePool(max_open=max_open, idle_s=idle_s)
        self._per_tenant = max_open_per_tenant
        self._recent: dict[str, OrderedDict[Path, None]] = {}
        self._lock = threading.Lock()
        self._log = log if log is not None else _stderr

    def path_for(self, tenant_id: str, spec: str, session: str | None) -> Path:
        tenant = build_tenant(tenant_id, self._tenants_root)
        root = tenant.root
        if session is not None:
            root = assert_inside(root / "session-facts" / storage_name(session), tenant.root)
        return StoreLayout(root, spec).facts_db

    def __call__(self, tenant_id: str, spec: str, session: str | None) -> FactProvider:
        if tenant_id not in self._tenant_ids:
            raise ProviderScopeError(f"tenant {tenant_id!r} is not served here")
        provider = _PooledProvider(self, tenant_id, self.path_for(tenant_id, spec, session))
        self.borrow(tenant_id, provider.path).release()  # opened now: a bad store is refused here
        return provider

    def borrow(self, tenant_id: str, path: Path) -> FactStoreLease:
        """The open store at ``path``, counted against ``tenant_id``'s share of the pool.

        Raises ``ProviderUnavailable`` (no path in its message) when it cannot be opened.
        """
        path = path.resolve()
        with self._lock:
            recent = self._recent.setdefault(tenant_id, OrderedDict())
            recent[path] = None
            recent.move_to_end(path)
            evicted = []
            while len(recent) > self._per_tenant:
                evicted.append(recent.popitem(last=False)[0])
        for old in evicted:
            self._pool.discard(old, self._now)
        try:
            return self._pool.borrow(path, self._now)
        except (StoreError, OSError) as exc:
            self._log(f"[memory-server] cannot open the store for {tenant_id}: {exc}\n")
            raise ProviderUnavailable("the store for this scope cannot be opened") from None

    def open_paths(self) -> list[Path]:
        """The stores open in the pool, least recently used first (for tests)."""
        return self._pool.pooled_paths()

    def close(self) -> None:
        self._pool.close()


class _PooledProvider:
    """One scope's ``FactProvider``: each operation borrows the pooled store for it."""

    def __init__(self, stores: LocalStores, tenant_id: str, path: Path) -> None:
        self._stores = stores
        self._tenant_id = tenant_id
        self.path = path

    def _run(self, operation: Callable[[LocalFactAdmin], _Result]) -> _Result:
        lease = self._stores.borrow(self._tenant_id, self.path)
        try:
            return operation(LocalFactAdmin(lease.store))
        finally:
            lease.release()

    def retain(self, request: RetainRequest) -> RetainResult:
        return self._run(lambda provider: provider.retain(request))

    def recall(self, request: RecallRequest) -> RecallResponse:
        return self._run(lambda provider: provider.recall(request))

    def forget(self, request: ForgetRequest) -> ForgetResult:
        return self._run(lambda provider: provider.forget(request))

    def read(self, request: ReadRequest) -> ReadResponse:
        return self._run(lambda provider: provider.read(request))

    def health(self) -> Health:
        return self._run(lambda provider: provider.health())

    def capabilities(self) -> Capabilities:
        return STORE_CAPABILITIES

    # The owner transfer's protocols (``FactExporter``, ``QuarantineReader``, ``FactRestorer``).

    def export_facts(self, where: FactFilter = EVERY_KEY) -> list[FactStatus]:
        return self._run(lambda provider: provider.export_facts(where))

    def quarantined(self, where: FactFilter = EVERY_KEY) -> list[QuarantinedFact]:
        return self._run(lambda provider: provider.quarantined(where))

    def quarantined_by_id(self, fact_id: str) -> QuarantinedFact | None:
        return self._run(lambda provider: provider.quarantined_by_id(fact_id))

    def restore_facts(self, statuses: Sequence[FactStatus]) -> int:
        return self._run(lambda provider: provider.restore_facts(statuses))

    def restore_quarantined(self, held: Sequence[QuarantinedFact]) -> int:
        return self._run(lambda provider: provider.restore_quarantined(held))


# -- command line ------------------------------------------------------------------------------


def _stderr(line: str) -> None:
    sys.stderr.write(line)
    sys.stderr.flush()


def _tenants_under(root: Path) -> list[str]:
    folder = root / "tenants"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and TENANT_ID_RE.fullmatch(p.name))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="specwire-memory-server",
        description="Serve local fact stores over the HTTP memory contract, one token per tenant.",
    )
    parser.add_argument("--root", type=Path, help="the folder holding tenants/<tenant>/facts")
    parser.add_argument(
        "--tenant",
        action="append",
        default=[],
        help="a tenant to serve (repeatable; default: the folders under <root>/tenants)",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument(
        "--openapi", action="store_true", help="print the contract as OpenAPI JSON and exit"
    )
    parser.add_argument(
        "--owner-tokens",
        action="store_true",
        help=f"serve the owner transfer (/v1/export, /v1/restore: codegen memory migrate) to "
        f"each tenant's owner token, ${OWNER_TOKEN_ENV_PREFIX}<TENANT ID>",
    )
    parser.add_argument(
        "--opencomputer",
        type=Path,
        metavar="FILE",
        help="also serve OpenComputer's HTTP memory contract; FILE maps partitions to "
        "tenant, spec, scope and access",
    )
    parser.add_argument(
        "--opencomputer-path",
        default=OPENCOMPUTER_PATH,
        help=f"the OpenComputer route (default {OPENCOMPUTER_PATH})",
    )
    parser.add_argument(
        "--opencomputer-tools",
        action="store_true",
        help="print the tools the OpenComputer route serves (a spec's memory.tools) and exit",
    )
    parser.add_argument(
        "--partition-for",
        nargs=3,
        metavar=("TENANT", "SPEC", "NAMESPACE"),
        help="print the partition a specwire bundle sends (TENANT: single.tenant outside the "
        "managed target; NAMESPACE: the scope key, e.g. agent) and exit",
    )
    args = parser.parse_args(argv)
    if args.openapi:
        sys.stdout.write(openapi_json())
        return 0
    if args.opencomputer_tools:
        sys.stdout.write(json.dumps(tools_declaration(), indent=2) + "\n")
        return 0
    if args.partition_for:
        sys.stdout.write(derive_partition(*args.partition_for) + "\n")
        return 0
    try:
        table = PartitionTable.load(args.opencomputer) if args.opencomputer else None
        if OPENCOMPUTER_PATH_RE.fullmatch(args.opencomputer_path) is None:
            raise ServeConfigError("--opencomputer-path must begin with a single /")
        if args.root is None:
            raise ServeConfigError("--root DIR is required")
        root: Path = args.root
        if not root.is_dir():
            raise ServeConfigError(f"--root {root} is not a folder")
        tenant_ids: list[str] = list(dict.fromkeys(args.tenant)) or _tenants_under(root)
        if not tenant_ids:
            raise ServeConfigError("no tenant to serve: pass --tenant ID")
        for tenant_id in tenant_ids:
            if not TENANT_ID_RE.fullmatch(tenant_id):
                raise ServeConfigError(f"invalid tenant id {tenant_id!r}")
        keys, missing = load_tenant_keys(
            tenant_ids, variable_for=token_variable, prefix=TOKEN_ENV_PREFIX
        )
        owner_keys: TenantKeys | None = None
        owners_missing: list[str] = []
        if args.owner_tokens:
            owner_keys, owners_missing = load_tenant_keys(
                tenant_ids, variable_for=owner_token_variable, prefix=OWNER_TOKEN_ENV_PREFIX
            )
        # IPPROTO_TCP spelt out (as in runtime.hosts.http.serving): asyncio turns Nagle off
        # (TCP_NODELAY) only on sockets whose proto says TCP; with Nagle on, every keep-alive
        # response waited ~40 ms for the client's delayed ACK.
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((args.host, args.port))
        except OSError as exc:
            sock.close()
            raise ServeConfigError(
                f"cannot listen on {args.host}:{args.port}: {exc.strerror}"
            ) from None
    except ServeConfigError as exc:
        _stderr(f"specwire-memory-server: {exc}\n")
        return 2
    import uvicorn

    for tenant_id in missing:
        _stderr(f"[memory-server] ${token_variable(tenant_id)} is not set: {tenant_id} gets 401\n")
    from specwire.runtime.hosts.http.connections import (
        MAX_CONNECTIONS,
        guarded_protocol_class,
        raise_open_file_limit,
    )

    for tenant_id in owners_missing:
        _stderr(
            f"[memory-server] ${owner_token_variable(tenant_id)} is not set: {tenant_id}'s "
            "owner transfer gets 401\n"
        )
    stores = LocalStores(root, tenant_ids)
    try:
        app = memory_app(
            stores,
            keys,
            opencomputer=table,
            opencomputer_path=args.opencomputer_path,
            owner_tokens=owner_keys,
        )
    except ServeConfigError as exc:
        stores.close()
        sock.close()
        _stderr(f"specwire-memory-server: {exc}\n")
        return 2
    raise_open_file_limit(MAX_CONNECTIONS)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            lifespan="off",
            limit_concurrency=MAX_CONNECTIONS,
            http=guarded_protocol_class(max_connections=MAX_CONNECTIONS),
        )
    )
    _stderr(f"[memory-server] serving {len(tenant_ids)} tenant(s) on {args.host}:{args.port}\n")
    try:
        server.run(sockets=[sock])
    finally:
        stores.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
