"""``specwire-memory-server``'s OpenComputer mode: any of our fact providers served to an
OpenComputer host over its HTTP memory contract, version 1 (docs/opencomputer.md).

One route (``POST /memory`` unless configured) takes both operations. In order, a request is:
authenticated (the bearer token is a tenant's, as on our REST routes); parsed and checked
against the contract (64 KiB, ``version: 1``, every field); refused when its ``deadlineAt`` has
passed (408 ``deadline_exceeded``, nothing run); mapped to our data through the **partition
table** (``--opencomputer FILE``): a partition names a tenant, a spec and one scope key, and the
most access it allows. A partition that is not in the table, or is another tenant's, is the same
403 ``forbidden`` (no oracle). Nothing in a tool's arguments can select data: the partition is
the only selector, and the table, bound to the credential's tenant, decides what it reaches.

Access: the request's ``access`` may not exceed the partition's (403); a write tool under
``access: read`` is 403 ``read_only``. Reads (recall, ``lookup``) are abandoned at the deadline;
a write, once started, runs to its end. Writes are idempotent: the first outcome of each
``(partition, operationId)`` is kept until its ``deadlineAt`` and replayed to a duplicate; the
same id with another tool, other arguments, another cursor or another access is 409
``conflict``. Recall has no side effects.

The tools served (``SERVED_TOOLS``; ``--opencomputer-tools`` prints them for ``memory.tools``):
``remember`` (write, idempotent: store a fact → ``{status: "stored", id}``, or ``{status:
"held", rule}`` when the injection scanner held it: it will never be recalled), ``forget``
(write, idempotent: tombstone a fact by id → ``{status: "stored", removed}``) and ``lookup``
(read: facts matching a query → ``{hits: [{id, text, tags}]}``). The store is append-only, so
no tool compares the cursor; recall still returns one (a digest of what it returned).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from specwire.runtime.core.clock import utc_now
from specwire.runtime.core.errors import LockTimeoutError, ServeConfigError, StoreError
from specwire.runtime.core.ids import MEMORY_ID_RE
from specwire.runtime.core.scopes import ScopeError, ScopeKey
from specwire.runtime.core.tenancy import TENANT_ID_RE
from specwire.runtime.facts.model import MAX_RECALL_K, MAX_TEXT_CHARS, InvalidRequestError
from specwire.runtime.facts.providers.errors import (
    ProviderScopeError,
    ProviderUnavailable,
    ProviderUncertain,
)
from specwire.runtime.facts.providers.http import opencomputer_wire as oc
from specwire.runtime.facts.providers.http.tool_schema import problem
from specwire.runtime.facts.providers.protocol import (
    FactProvider,
    ForgetRequest,
    RecallRequest,
    RetainRequest,
)
from specwire.runtime.facts.text import MAX_QUERY_CHARS
from specwire.runtime.hosts.http.common import BadRequest, bearer_token, parse_json, read_body
from specwire.runtime.hosts.http.tenant_keys import TenantKeys

# (tenant id, spec, session) → the provider serving that scope (the REST server's ``ProviderFor``).
ProviderFor = Callable[[str, str, str | None], FactProvider]
DEFAULT_PATH: Final = oc.DEFAULT_PATH
# How many facts a recall projects (the text is then cut to ``maxBytes``).
RECALL_LIMIT: Final = 10
# Write outcomes kept for replay, across partitions; the oldest finished one goes first.
MAX_REMEMBERED_WRITES: Final = 4096
MAX_REMEMBERED_WRITES_PER_PARTITION: Final = 1024
STATUS: Final[dict[str, int]] = {
    "invalid_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "read_only": 403,
    "not_found": 404,
    "deadline_exceeded": 408,
    "conflict": 409,
    "payload_too_large": 413,
    "refused": 422,
    "unavailable": 503,
    "internal": 500,
}


@dataclass(frozen=True)
class ServedTool:
    name: str
    description: str
    access: str
    idempotent: bool
    input: dict[str, Any]


SERVED_TOOLS: Final[tuple[ServedTool, ...]] = (
    ServedTool(
        "remember",
        "Save one durable fact for later sessions (append-only: it never replaces another). "
        'Answers {"status": "stored", "id"} once recall can see it.',
        "write",
        True,
        {
            "type": "object",
            "properties": {
                "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS},
                "tags": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 64},
                    "maxItems": 16,
                },
            },
            "required": ["text"],
            "additionalProperties": False,
        },
    ),
    ServedTool(
        "forget",
        "Forget one fact by the id a lookup or a recalled source gave. "
        'Answers {"status": "stored", "removed": 0 or 1}.',
        "write",
        True,
        {
            "type": "object",
            "properties": {"id": {"type": "string", "pattern": MEMORY_ID_RE.pattern}},
            "required": ["id"],
            "additionalProperties": False,
        },
    ),
    ServedTool(
        "lookup",
        "Find remembered facts matching a query, best first, with their ids.",
        "read",
        False,
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RECALL_K},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
)
_BY_NAME: Final = {tool.name: tool for tool in SERVED_TOOLS}


def tools_declaration() -> list[dict[str, Any]]:
    """``memory.tools`` for a spec whose endpoint is this server."""
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "access": tool.access,
            "idempotent": tool.idempotent,
            "input": tool.input,
        }
        for tool in SERVED_TOOLS
    ]


# -- the partition table -----------------------------------------------------------------------


@dataclass(frozen=True)
class Partition:
    """What one partition reaches: a tenant's spec, one scope key, and the most access."""

    tenant: str
    spec: str
    scope: ScopeKey
    access: oc.Access


@dataclass(frozen=True)
class PartitionTable:
    partitions: Mapping[str, Partition]

    def bound(self, partition: str, tenant: str) -> Partition | None:
        """The binding of ``partition`` when it belongs to ``tenant``, else None."""
        found = self.partitions.get(partition)
        return found if found is not None and found.tenant == tenant else None

    @classmethod
    def load(cls, path: Path) -> PartitionTable:
        """``{"partitions": {"<partition>": {"tenant", "spec", "scope"?, "access"?}}}``; scope
        is ``agent`` (default), ``crew`` or ``user:<id>``-style labels; access defaults to read."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ServeConfigError(f"cannot read the partition table: {exc.strerror}") from None
        except ValueError:
            raise ServeConfigError("the partition table is not JSON") from None
        return cls.parse(data)

    @classmethod
    def parse(cls, data: Any) -> PartitionTable:
        if not isinstance(data, dict) or set(data) != {"partitions"}:
            raise ServeConfigError('the partition table must be {"partitions": {...}}')
        raw = data["partitions"]
        if not isinstance(raw, dict):
            raise ServeConfigError('"partitions" must map partition keys to bindings')
        table: dict[str, Partition] = {}
        for key, entry in raw.items():
            table[key] = _binding(key, entry)
        return cls(table)


def _binding(key: str, entry: Any) -> Partition:
    where = f"partition {key[:60]!r}"
    if not key or oc.utf8_len(key) > oc.MAX_REF_BYTES:
        raise ServeConfigError(f"{where}: a partition key is 1 to {oc.MAX_REF_BYTES} bytes")
    if not isinstance(entry, dict) or not set(entry) <= {"tenant", "spec", "scope", "access"}:
        raise ServeConfigError(f"{where}: takes tenant, spec, scope and access")
    tenant, spec = entry.get("tenant"), entry.get("spec")
    if not isinstance(tenant, str) or not TENANT_ID_RE.fullmatch(tenant):
        raise ServeConfigError(f"{where}: tenant must be a tenant id")
    if not isinstance(spec, str) or not spec:
        raise ServeConfigError(f"{where}: spec must be the agent's name")
    label = entry.get("scope", "agent")
    try:
        scope = ScopeKey.parse(label) if isinstance(label, str) else None
    except ScopeError as exc:
        raise ServeConfigError(f"{where}: {exc}") from None
    if scope is None:
        raise ServeConfigError(f"{where}: scope must be a scope key such as agent or user:U1")
    access = entry.get("access", "read")
    if access not in oc.ACCESS:
        raise ServeConfigError(f'{where}: access must be "read" or "read-write"')
    return Partition(tenant, spec, scope, access)


# -- replay of writes --------------------------------------------------------------------------


@dataclass
class _Write:
    fingerprint: str
    expires: datetime
    outcome: asyncio.Future[tuple[int, Any]]


@dataclass
class WriteLog:
    """Each ``(partition, operationId)``'s first outcome, kept until the request's deadline."""

    max_entries: int = MAX_REMEMBERED_WRITES
    # One partition's share: a tenant that floods the log evicts its own writes first, never
    # the record another tenant's retry needs.
    max_per_partition: int = MAX_REMEMBERED_WRITES_PER_PARTITION
    _entries: OrderedDict[tuple[str, str], _Write] = field(default_factory=OrderedDict)

    def _expire(self, now: datetime) -> None:
        for key in [k for k, w in self._entries.items() if w.outcome.done() and w.expires <= now]:
            del self._entries[key]
        while len(self._entries) > self.max_entries:
            counts = Counter(partition for partition, _ in self._entries)
            if not self._evict_oldest_of(counts.most_common(1)[0][0]):
                break

    def _evict_oldest_of(self, partition: str) -> bool:
        victim = next(
            (k for k, w in self._entries.items() if k[0] == partition and w.outcome.done()), None
        )
        if victim is None:
            return False
        del self._entries[victim]
        return True

    def find(self, key: tuple[str, str], now: datetime) -> _Write | None:
        self._expire(now)
        return self._entries.get(key)

    def start(self, key: tuple[str, str], fingerprint: str, expires: datetime) -> _Write:
        if (
            sum(1 for partition, _ in self._entries if partition == key[0])
            >= self.max_per_partition
        ):
            self._evict_oldest_of(key[0])
        entry = _Write(fingerprint, expires, asyncio.get_running_loop().create_future())
        self._entries[key] = entry
        return entry

    def drop(self, key: tuple[str, str], entry: _Write) -> None:
        if self._entries.get(key) is entry:
            del self._entries[key]


# -- the route ---------------------------------------------------------------------------------


class _Refusal(Exception):
    def __init__(self, code: str, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


def _envelope(code: str, message: str, details: Any = None) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if code == "unauthorized" else None
    return JSONResponse(
        oc.Envelope(code, message, details).wire(), status_code=STATUS[code], headers=headers
    )


@dataclass
class OpenComputerEndpoint:
    """The OpenComputer route: ``handle`` is its Starlette endpoint."""

    provider_for: ProviderFor
    keys: TenantKeys
    table: PartitionTable
    writes: WriteLog = field(default_factory=WriteLog)
    now: Callable[[], datetime] = utc_now
    log: Callable[[str], None] = lambda line: None

    async def handle(self, request: Request) -> Response:
        try:
            payload = await self._handle(request)
        except _Refusal as refusal:
            return _envelope(refusal.code, refusal.message, refusal.details)
        return JSONResponse(payload)

    async def _handle(self, request: Request) -> Any:
        given = bearer_token(request)
        tenant = self.keys.tenant_for(given) if given is not None else None
        if tenant is None:
            raise _Refusal("unauthorized", "the credential is not accepted")
        try:
            raw = await read_body(request, oc.MAX_BODY_BYTES)
            data = parse_json(raw)
        except BadRequest as exc:
            code = "payload_too_large" if exc.status == 413 else "invalid_request"
            raise _Refusal(code, exc.message) from None
        try:
            call = oc.parse_call(data)
        except oc.WireError as exc:
            details = {"field": exc.field} if exc.field else None
            raise _Refusal("invalid_request", str(exc), details) from None
        now = self.now()
        if call.deadline_at <= now:
            raise _Refusal("deadline_exceeded", "the request's deadlineAt has passed")
        bound = self.table.bound(call.partition, tenant)
        if bound is None:
            raise _Refusal("forbidden", "this partition is not bound to the credential")
        if call.access == "read-write" and bound.access != "read-write":
            raise _Refusal("forbidden", "this partition is bound read-only")
        provider = self._provider(bound)
        remaining = (call.deadline_at - now).total_seconds()
        if isinstance(call, oc.RecallCall):
            return await self._read(lambda: _recall(provider, bound, call), remaining)
        tool = _BY_NAME.get(call.tool)
        if tool is None:
            raise _Refusal("not_found", f"no tool {call.tool!r} here")
        wrong = problem(call.arguments, tool.input)
        if wrong is not None:
            raise _Refusal("invalid_request", f"arguments: {wrong}")
        if tool.access == "read":
            return await self._read(lambda: _lookup(provider, bound, call.arguments), remaining)
        if call.access != "read-write":
            raise _Refusal("read_only", f"{tool.name} writes, and this request's access is read")
        return await self._write(provider, bound, call)

    def _provider(self, bound: Partition) -> FactProvider:
        try:
            provider = self.provider_for(bound.tenant, bound.spec, None)
            if bound.scope.scope != "agent" and not provider.capabilities().scopes:
                raise _Refusal("refused", "this store has no memory scopes")
        except (ProviderScopeError, PermissionError) as exc:
            raise _Refusal("forbidden", f"scope refused: {exc}") from None
        except ProviderUnavailable as exc:
            raise _Refusal("unavailable", str(exc)) from None
        except (StoreError, OSError):
            self.log(f"[memory-server] cannot open the store for {bound.tenant}\n")
            raise _Refusal("unavailable", "the store for this partition cannot be opened") from None
        return provider

    async def _read(self, work: Callable[[], Any], remaining: float) -> Any:
        try:
            return await asyncio.wait_for(_guarded(work, self.log), remaining)
        except TimeoutError:
            raise _Refusal("deadline_exceeded", "the read did not finish by deadlineAt") from None

    async def _write(self, provider: FactProvider, bound: Partition, call: oc.ToolCall) -> Any:
        key = (call.partition, call.operation_id)
        fingerprint = hashlib.sha256(
            oc.encode([call.tool, call.arguments, call.cursor, call.access])
        ).hexdigest()
        seen = self.writes.find(key, self.now())
        if seen is not None:
            if seen.fingerprint != fingerprint:
                raise _Refusal(
                    "conflict",
                    "this operationId was already used with another tool, arguments, cursor "
                    "or access",
                )
            status, body = await asyncio.shield(seen.outcome)
            if status != 200:
                raise _Refusal(body["code"], body["message"], body.get("details"))
            return body
        entry = self.writes.start(key, fingerprint, call.deadline_at)
        # Shielded: a request cancelled mid-write (its client went away) leaves the write
        # running to its end and its outcome recorded, so a replay never waits forever.
        status, body = await asyncio.shield(
            asyncio.ensure_future(self._first_write(key, entry, provider, bound, call))
        )
        if status != 200:
            raise _Refusal(body["code"], body["message"], body.get("details"))
        return body

    async def _first_write(
        self,
        key: tuple[str, str],
        entry: _Write,
        provider: FactProvider,
        bound: Partition,
        call: oc.ToolCall,
    ) -> tuple[int, Any]:
        try:
            result = await _guarded(lambda: _run_write(provider, bound, call), self.log)
        except _Refusal as refusal:
            # Not kept: nothing was applied, so the same request may run again.
            self.writes.drop(key, entry)
            body = {"code": refusal.code, "message": refusal.message, "details": refusal.details}
            entry.outcome.set_result((STATUS[refusal.code], body))
            return STATUS[refusal.code], body
        entry.outcome.set_result((200, result))
        return 200, result


async def _guarded(work: Callable[[], Any], log: Callable[[str], None]) -> Any:
    try:
        return await run_in_threadpool(work)
    except _Refusal:
        raise
    except InvalidRequestError as exc:
        raise _Refusal("invalid_request", str(exc)) from None
    except ProviderScopeError as exc:
        raise _Refusal("forbidden", str(exc)) from None
    except (LockTimeoutError, ProviderUnavailable, ProviderUncertain) as exc:
        raise _Refusal("unavailable", str(exc)) from None
    except StoreError as exc:
        raise _Refusal("refused", str(exc)) from None
    except Exception as exc:  # a provider's bug still answers with the envelope
        log(f"[memory-server] opencomputer call failed: {type(exc).__name__}\n")
        raise _Refusal("internal", "the provider failed") from None


# -- the operations (run in a worker thread) ---------------------------------------------------


def _recall(provider: FactProvider, bound: Partition, call: oc.RecallCall) -> dict[str, Any]:
    text = (call.text or "").strip()
    if not text:
        return oc.Recalled("", ()).wire()
    deadline = time.monotonic() + max(0.0, (call.deadline_at - utc_now()).total_seconds())
    hits = provider.recall(
        RecallRequest(
            text[:MAX_QUERY_CHARS],
            RECALL_LIMIT,
            visible=(bound.scope,),
            deadline=deadline,
            reason="opencomputer",
        )
    ).hits
    lines: list[str] = []
    sources: list[oc.Source] = []
    used = 0
    for hit in hits:
        if hit.scope != bound.scope:
            continue  # never outside the partition's key, whatever the provider answered
        line = f"- {' '.join(hit.text.split())}"
        size = oc.utf8_len(line) + (1 if lines else 0)
        if used + size > call.max_bytes:
            if not lines:
                lines.append(oc.clip_utf8(line, call.max_bytes))
                sources.append(oc.Source(hit.id))
            break
        lines.append(line)
        sources.append(oc.Source(hit.id))
        used += size
    cursor = "c1_" + hashlib.sha256(oc.encode([s.id for s in sources])).hexdigest()[:32]
    return oc.Recalled("\n".join(lines), tuple(sources[: oc.MAX_SOURCES]), cursor).wire()


def _lookup(provider: FactProvider, bound: Partition, arguments: dict[str, Any]) -> dict[str, Any]:
    limit = arguments.get("limit", 5)
    hits = provider.recall(
        RecallRequest(arguments["query"], limit, visible=(bound.scope,), reason="tool")
    ).hits
    found = [
        {"id": hit.id, "text": hit.text, "tags": list(hit.tags)}
        for hit in hits
        if hit.scope == bound.scope
    ]
    return {"result": {"hits": found}}


def _run_write(provider: FactProvider, bound: Partition, call: oc.ToolCall) -> dict[str, Any]:
    arguments = call.arguments
    if call.tool == "remember":
        retained = provider.retain(
            RetainRequest(arguments["text"], tuple(arguments.get("tags", ())), scope=bound.scope)
        )
        if retained.quarantined is not None:
            return {"result": {"status": "held", "rule": retained.quarantined}}
        return {"result": {"status": "stored", "id": retained.id}}
    forgotten = provider.forget(
        ForgetRequest(id=arguments["id"], reason="opencomputer forget", visible=(bound.scope,))
    )
    return {"result": {"status": "stored", "removed": forgotten.removed}}


def derive_partition(tenant: str, spec: str, namespace: str) -> str:
    """The partition a specwire bundle sends for ``tenant``'s ``spec`` and ``namespace``."""
    return oc.derive_partition(tenant, spec, namespace)
