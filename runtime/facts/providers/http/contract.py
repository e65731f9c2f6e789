"""The HTTP memory contract, version 1: what ``HttpFactProvider`` sends and ``memory_app`` serves.

Modelled on OpenComputer's HTTP memory contract preview (deadlines, bounded retries,
idempotency, size limits, one error envelope) over the operations of ``FactProvider``.

Endpoints (JSON bodies, camelCase keys, ``Authorization: Bearer <tenant token>`` on every
``/v1`` call)::

    POST /v1/retain        RetainBody       → 200 RetainReply
    POST /v1/recall        RecallBody       → 200 RecallReply
    POST /v1/forget        ForgetBody       → 200 ForgetReply
    POST /v1/read          ReadBody         → 200 ReadReply       (point read by id or key)
    POST /v1/health        ScopeBody        → 200 HealthReply     (ok=false is still 200)
    POST /v1/capabilities  ScopeBody        → 200 CapabilitiesReply
    GET  /healthz          (no token)       → 200 {"status": "ok", "version": 1}
    POST /v1/export        ExportBody       → 200 ExportReply     (owner token; see below)
    POST /v1/restore       RestoreBody      → 200 RestoreReply    (owner token; see below)

Scope. The **tenant** is the one the bearer token belongs to; it is never read from a path or a
body field, so no request can reach another tenant's data. A body may *claim* a ``tenant``: when
it disagrees with the token's, the request is refused with 403 ``scope_violation`` (a client
bound to the wrong tenant fails loudly instead of writing elsewhere). Every body names its
``spec`` (the agent's name) and optionally a ``session`` (facts kept for that session only;
absent = the spec's shared facts). Scope lives in the body, not the path, so one route serves
every spec and the scope is covered by the ``operationId`` fingerprint.

Memory scopes (``runtime.core.scopes``). Inside its spec, each fact belongs to one scope key:
a ``scope`` (``user``, ``conversation``, ``role``, ``agent``, ``crew``) and, for the first
three, a ``subject`` (the host's id for the person, conversation or role). A retain names its
key with ``scope`` and ``subject`` (absent: ``agent``); a recall, a read and a forget name the
keys they may see with ``visible`` (absent: ``[{"scope": "agent"}]``; a forget may say
``allScopes: true`` instead, the owner's forget over every key). The service returns and
touches nothing outside them. A retain with a ``key`` replaces the live fact with that key in
its scope key (``mode``: ``replace`` or ``append``; ``maxBytes``: refused with 422 ``refused``
past it, nothing written; ``tier``: a Crewship tier note, recalled only when ``tiers`` names
its tier). These fields are all optional, so a client written before them keeps working: all
it writes and sees is the ``agent`` key, as before. Replies carry the new fields (a hit's
scope, key and tier; ``bytes``; the scope capabilities) only when the request sends
``Memory-Features: scopes`` (``FEATURES_HEADER``), since a client written before them refuses
fields it does not know; a server written before them refuses the new request fields (400), so
a scoped request to it fails closed instead of being served unscoped.

Idempotency. Writes (retain, forget) carry an ``operationId`` (1–128 characters, client-made,
e.g. a UUID). The server remembers each tenant's recent operations (bounded, see
``DEDUP_WINDOW_S``/``DEDUP_MAX_PER_TENANT``): the same id with the same request replays the
first answer, without running the write again; the same id with a different request is 409
``conflict``. A write without ``operationId`` is accepted, is not de-duplicated and is never
retried by the client. Reads have no side effects and are always safe to retry.

Deadlines. A client may send ``Deadline-Ms: <n>`` (``DEADLINE_HEADER``), its remaining budget
for this attempt in milliseconds (1..``MAX_DEADLINE_MS``), relative so that no clocks need to
agree. The server measures it from the request's arrival: an operation that has not started when
it runs out is refused with 504 ``deadline_exceeded`` and not applied (a write is never started
late); a read still running at the deadline is abandoned with the same answer. A write that has
started runs to its end (resend it with its ``operationId`` to learn the outcome).

Errors. Every non-2xx answer is ``{"error": {"code", "message", "retryable"}}`` (``ErrorBody``),
with the codes in ``ERROR_CODES``. ``retryable`` says whether the same request may succeed later.
An error answer means the operation was not applied (a write that fails midway is rolled back
and is not remembered under its ``operationId``: resending it runs it again).

Limits. Request bodies at most ``MAX_REQUEST_BYTES`` (413 ``payload_too_large`` past it),
responses at most ``MAX_RESPONSE_BYTES`` (the client refuses a larger one), and the per-field
bounds below (400 ``invalid_request`` naming the field). Clients should check them before
sending; servers always check them.

Owner transfer (``codegen memory migrate --from http`` / ``--to http``). Two endpoints move a
scope's whole memory as it is: ``/v1/export`` pages through every fact ever written (history
included: status, tombstone, supersede links, scope key, key, tier, provenance) or every held
write (``kind: held``), ordered by id, ``limit`` a page (at most ``MAX_EXPORT_PAGE``, and within
``EXPORT_PAGE_BYTES``), the next page ``after`` the reply's ``nextAfter`` (absent: the last
page). ``/v1/restore`` writes facts and held writes with their ids, times, tombstones and links
(heads of supersede chains first), idempotent by id: a record the store holds already, equal,
is skipped (counted as present); one it holds with other contents is a 409 ``conflict`` and
nothing of the batch is written. Both need the tenant's *owner* token, which the server keeps
apart from the agent's (``specwire-memory-server --owner-tokens``:
``SPECWIRE_MEMORY_OWNER_TOKEN_<TENANT ID>``): an agent token is refused (403
``scope_violation``), a server without owner tokens answers 404 ``not_found``. A client opts
in with ``Memory-Features: owner`` (a request without it is a 400); with it, ``/v1/capabilities``
says whether this server and scope offer the transfer (``ownerTransfer``). The owner token only
opens these two endpoints. Nothing restored is screened again: the source screened it, and
every recall screens what it returns.

Versioning. ``version`` in every body must be ``CONTRACT_VERSION``; the contract only grows by
new optional fields and new endpoints under ``/v1``. A breaking change is ``/v2``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from specwire.runtime.core.fragment import TENANT_ID_PATTERN
from specwire.runtime.core.ids import (
    MEMORY_ID_RE,
    SESSION_ID_RE,
    SPEC_KEY_PATTERN,
    TOOL_USE_ID_RE,
    check_client_key,
)
from specwire.runtime.core.scopes import SUBJECT_RE, Scope, ScopeError, ScopeKey
from specwire.runtime.facts.model import (
    MAX_EVIDENCE,
    MAX_KEY_CHARS,
    MAX_KEYED_TEXT_BYTES,
    MAX_REASON_CHARS,
    MAX_RECALL_K,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TEXT_CHARS,
    TIERS,
)
from specwire.runtime.facts.text import MAX_QUERY_CHARS

CONTRACT_VERSION: Final = 1
API_PREFIX: Final = "/v1"

# Size limits (bytes for bodies, characters for fields).
# Room for a keyed text of MAX_KEYED_TEXT_BYTES, every character escaped in JSON.
MAX_REQUEST_BYTES: Final = 512 * 1024
# Room for MAX_RECALL_K hits of MAX_KEYED_TEXT_BYTES (tier notes), escaped in JSON.
MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024
# The scope keys one request may name (an audience sees at most five).
MAX_VISIBLE: Final = 16
# Sent by a client that understands the replies' scope fields (see "Memory scopes" above).
FEATURES_HEADER: Final = "Memory-Features"
FEATURE_SCOPES: Final = "scopes"
# Sent by an owner's client that calls the transfer endpoints (export, restore).
FEATURE_OWNER: Final = "owner"
MAX_EXPORT_PAGE: Final = 1000
MAX_RESTORE_BATCH: Final = 1000
# A page stops growing past this many bytes of records (room left for the last one and JSON).
EXPORT_PAGE_BYTES: Final = 3 * 1024 * 1024
MAX_RULE_CHARS: Final = 200
MAX_OPERATION_ID_CHARS: Final = 128
DEADLINE_HEADER: Final = "Deadline-Ms"
MAX_DEADLINE_MS: Final = 10 * 60 * 1000
MAX_SPEC_CHARS: Final = 128
MAX_K: Final = MAX_RECALL_K
OPERATION_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}$"
SPEC_PATTERN: Final = SPEC_KEY_PATTERN

# Server-side de-duplication of write operationIds.
DEDUP_WINDOW_S: Final = 15 * 60
DEDUP_MAX_PER_TENANT: Final = 4096

# The retry schedule clients follow: at most two retries, exponential backoff with jitter.
MAX_RETRIES: Final = 2
BACKOFF_BASE_S: Final = 0.25
BACKOFF_FACTOR: Final = 4.0
RETRYABLE_STATUSES: Final = frozenset({408, 429, 500, 502, 503, 504})

ErrorCode = Literal[
    "invalid_request",
    "unsupported_version",
    "unauthorized",
    "scope_violation",
    "not_found",
    "method_not_allowed",
    "conflict",
    "payload_too_large",
    "request_timeout",
    "refused",
    "cap_exceeded",
    "rate_limited",
    "deadline_exceeded",
    "unavailable",
    "internal",
]
# code → (HTTP status, retryable)
ERROR_CODES: Final[dict[str, tuple[int, bool]]] = {
    "invalid_request": (400, False),
    "unsupported_version": (400, False),
    "unauthorized": (401, False),
    "scope_violation": (403, False),
    "not_found": (404, False),
    "method_not_allowed": (405, False),
    "conflict": (409, False),
    "payload_too_large": (413, False),
    "request_timeout": (408, True),
    "refused": (422, False),
    # A keyed write whose stored text would pass its ``maxBytes``: nothing was written.
    "cap_exceeded": (422, False),
    "rate_limited": (429, True),
    "deadline_exceeded": (504, True),
    "unavailable": (503, True),
    "internal": (500, True),
}

Tag = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TAG_CHARS)]
MemoryId = Annotated[str, StringConstraints(pattern=MEMORY_ID_RE.pattern)]
OperationId = Annotated[str, StringConstraints(pattern=OPERATION_ID_PATTERN)]
SpecName = Annotated[str, StringConstraints(pattern=SPEC_PATTERN)]
# 1-200 letters, digits or ._:@+=- starting with a letter or digit, no '..' (CLIENT_KEY_RULE).
SessionKey = Annotated[str, StringConstraints(max_length=200), AfterValidator(check_client_key)]
TenantClaim = Annotated[str, StringConstraints(pattern=TENANT_ID_PATTERN)]
SubjectId = Annotated[str, StringConstraints(pattern=SUBJECT_RE.pattern)]
FactKey = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_KEY_CHARS, pattern=r"^[^\x00-\x1f\x7f]+$")
]
Tier = Literal[TIERS]  # type: ignore[valid-type]  # the tier names, one Literal


class WireModel(BaseModel):
    """camelCase on the wire, snake_case in Python; unknown fields are refused (a typo is a
    400, never silently ignored)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class ScopeBody(WireModel):
    """What every request carries: the contract version and the scope inside the tenant."""

    version: Literal[1] = CONTRACT_VERSION
    spec: SpecName
    session: SessionKey | None = None
    # Optional claim of the caller's tenant: refused (403) unless it is the token's.
    tenant: TenantClaim | None = None


class ScopeKeyBody(WireModel):
    """One memory scope key: ``{"scope": "user", "subject": "U123"}``, ``{"scope": "agent"}``."""

    scope: Scope
    subject: SubjectId | None = None

    @model_validator(mode="after")
    def _a_key(self) -> ScopeKeyBody:
        try:
            ScopeKey(self.scope, self.subject)
        except ScopeError as exc:
            raise ValueError(str(exc)) from None
        return self

    def key(self) -> ScopeKey:
        return ScopeKey(self.scope, self.subject)

    @classmethod
    def of(cls, key: ScopeKey) -> ScopeKeyBody:
        return cls(scope=key.scope, subject=key.subject)


def scope_keys(bodies: list[ScopeKeyBody] | None) -> tuple[ScopeKey, ...]:
    """``visible`` as scope keys (absent: the ``agent`` key alone, what clients before scopes
    saw)."""
    if bodies is None:
        return (ScopeKey("agent"),)
    return tuple(body.key() for body in bodies)


Visible = Annotated[list[ScopeKeyBody], Field(min_length=1, max_length=MAX_VISIBLE)]


class ProvenanceBody(WireModel):
    session_id: Annotated[str, StringConstraints(pattern=SESSION_ID_RE.pattern)] | None = None
    evidence: list[Annotated[str, StringConstraints(pattern=TOOL_USE_ID_RE.pattern)]] = Field(
        default_factory=list, max_length=MAX_EVIDENCE
    )


class RetainBody(ScopeBody):
    operation_id: OperationId | None = None
    # Replace the live fact with this key in the fact's scope key (before ``text``: a keyed
    # text may be longer).
    key: FactKey | None = None
    # A plain fact: at most MAX_TEXT_CHARS characters; a keyed one: MAX_KEYED_TEXT_BYTES bytes.
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_KEYED_TEXT_BYTES)]
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    ttl_ms: Annotated[int, Field(ge=1)] | None = None
    provenance: ProvenanceBody | None = None
    supersedes: MemoryId | None = None
    if_absent: bool = False
    # The fact's scope key (absent: ``agent``); ``subject`` for user, conversation and role.
    scope: Scope | None = None
    subject: SubjectId | None = None
    # With ``key``: replace (default) or append; a tier; a cap on the stored text's bytes.
    mode: Literal["replace", "append"] | None = None
    tier: Tier | None = None
    max_bytes: Annotated[int, Field(ge=1)] | None = None

    @field_validator("text")
    @classmethod
    def _text_size(cls, text: str, info: ValidationInfo) -> str:
        if info.data.get("key") is None:
            if len(text) > MAX_TEXT_CHARS:
                raise ValueError(f"String should have at most {MAX_TEXT_CHARS} characters")
        elif len(text.encode("utf-8", "surrogatepass")) > MAX_KEYED_TEXT_BYTES:
            raise ValueError(f"a keyed text has at most {MAX_KEYED_TEXT_BYTES} UTF-8 bytes")
        return text

    @model_validator(mode="after")
    def _one_mode(self) -> RetainBody:
        if self.supersedes is not None and self.if_absent:
            raise ValueError("supersedes and ifAbsent cannot be combined")
        if self.key is None and (
            self.mode is not None or self.tier is not None or self.max_bytes is not None
        ):
            raise ValueError("mode, tier and maxBytes need a key")
        if self.key is not None and (self.supersedes is not None or self.if_absent):
            raise ValueError("a keyed write replaces by key, not by supersedes or ifAbsent")
        if self.subject is not None and self.scope is None:
            raise ValueError("a subject needs its scope")
        self.memory_scope()
        return self

    def memory_scope(self) -> ScopeKey:
        """The fact's scope key (``agent`` when absent)."""
        try:
            return ScopeKey(self.scope or "agent", self.subject)
        except ScopeError as exc:
            raise ValueError(str(exc)) from None


class RetainReply(WireModel):
    id: MemoryId
    created: bool
    expires_at: datetime | None = None
    superseded: MemoryId | None = None
    # The injection scanner's rule label when the text was held (never recalled).
    quarantined: str | None = None
    # When ``created`` is false: the live fact's own text and tags.
    text: str | None = None
    tags: list[str] | None = None
    # UTF-8 bytes of the stored text (with ``Memory-Features: scopes``).
    bytes: Annotated[int, Field(ge=0)] | None = None


class RecallBody(ScopeBody):
    query: Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS)]
    limit: Annotated[int, Field(ge=1, le=MAX_K)] = 5
    # The scope keys the caller may see (absent: ``agent`` alone).
    visible: Visible | None = None
    # Tier notes of these tiers only (absent or empty: plain facts only).
    tiers: list[Tier] | None = Field(default=None, max_length=len(TIERS))


class ScopedFields(WireModel):
    """A fact's scope key, key and tier in a reply (with ``Memory-Features: scopes``)."""

    scope: Scope | None = None
    subject: SubjectId | None = None
    key: str | None = None
    tier: Tier | None = None

    def memory_scope(self) -> ScopeKey:
        """The fact's scope key (``agent`` when the reply names none)."""
        try:
            return ScopeKey(self.scope or "agent", self.subject)
        except ScopeError as exc:
            raise ValueError(str(exc)) from None


class HitBody(ScopedFields):
    id: MemoryId
    text: str
    tags: list[str]
    score: Annotated[float, Field(ge=0.0, le=1.0)]
    evidence_backed: bool


class RecallReply(WireModel):
    hits: list[HitBody] = Field(max_length=MAX_K)


class ForgetBody(ScopeBody):
    """Exactly one selector: ``id`` or ``query``."""

    operation_id: OperationId | None = None
    id: MemoryId | None = None
    query: Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS)] | None = None
    reason: Annotated[str, StringConstraints(max_length=MAX_REASON_CHARS)] | None = None
    # With ``query``: refuse (400 invalid_request, nothing forgotten) when more facts match.
    at_most: Annotated[int, Field(ge=1)] | None = None
    # The scope keys the caller may forget in (absent: ``agent`` alone) ...
    visible: Visible | None = None
    # ... or every key (the owner's forget).
    all_scopes: bool | None = None

    @model_validator(mode="after")
    def _one_selector(self) -> ForgetBody:
        if (self.id is None) == (self.query is None):
            raise ValueError("provide exactly one of `id` or `query`")
        if self.query is not None and not self.query.strip():
            raise ValueError("query must not be blank")
        if self.all_scopes and self.visible is not None:
            raise ValueError("allScopes and visible cannot be combined")
        return self

    def scope_keys(self) -> tuple[ScopeKey, ...] | None:
        """The keys the forget may touch (None: every key)."""
        return None if self.all_scopes else scope_keys(self.visible)


class ForgetReply(WireModel):
    removed: Annotated[int, Field(ge=0)]
    ids: list[MemoryId] = Field(default_factory=list)
    # The forgotten facts' texts, parallel to ``ids``.
    texts: list[str] = Field(default_factory=list)


class ReadBody(ScopeBody):
    """A point read: exactly one of ``id`` or ``key``."""

    id: MemoryId | None = None
    key: FactKey | None = None
    # The scope keys the caller may see (absent: ``agent`` alone).
    visible: Visible | None = None

    @model_validator(mode="after")
    def _one_selector(self) -> ReadBody:
        if (self.id is None) == (self.key is None):
            raise ValueError("provide exactly one of `id` or `key`")
        return self


class RecordBody(ScopedFields):
    id: MemoryId
    text: str
    tags: list[str]
    created_at: datetime
    expires_at: datetime | None = None
    evidence_backed: bool


class ReadReply(WireModel):
    # One per visible scope key at most.
    records: list[RecordBody] = Field(max_length=MAX_VISIBLE)


class HealthReply(WireModel):
    ok: bool
    message: str | None = None
    checked_at: datetime


class CapabilitiesReply(WireModel):
    lexical: bool
    semantic: bool
    ttl: bool
    supersede: bool
    provenance: bool
    forget_by_query: bool
    tombstones: bool
    subject_cascade: bool
    # With ``Memory-Features: scopes``.
    scopes: bool | None = None
    keys: bool | None = None
    point_read: bool | None = None
    # With ``Memory-Features: owner``: the export and restore endpoints serve this scope.
    owner_transfer: bool | None = None


class CapBody(WireModel):
    """Why a keyed write was refused (``cap_exceeded``): its cap and the sizes, in bytes."""

    cap_bytes: Annotated[int, Field(ge=1)]
    current_size: Annotated[int, Field(ge=0)]
    projected_size: Annotated[int, Field(ge=0)]


class ErrorDetail(WireModel):
    code: ErrorCode
    message: str
    retryable: bool
    # The request field at fault (dotted, camelCase), when one is.
    param: str | None = None
    # With ``cap_exceeded``.
    cap: CapBody | None = None


class ErrorBody(WireModel):
    error: ErrorDetail


class ServiceHealth(WireModel):
    status: Literal["ok"] = "ok"
    version: Literal[1] = CONTRACT_VERSION


def error_body(
    code: str, message: str, *, param: str | None = None, cap: CapBody | None = None
) -> dict[str, Any]:
    """The envelope for ``code`` (one of ``ERROR_CODES``)."""
    _, retryable = ERROR_CODES[code]
    detail = ErrorDetail.model_validate(
        {"code": code, "message": message, "retryable": retryable, "param": param, "cap": cap}
    )
    return ErrorBody(error=detail).wire()


def backoff_s(retry: int, jitter: float) -> float:
    """Sleep before retry number ``retry`` (1-based): 0.25 s then 1 s, each scaled by a jitter
    factor in ``[0.5, 1.0]`` (``jitter`` in ``[0, 1)``) so a fleet does not retry in step."""
    base = BACKOFF_BASE_S * BACKOFF_FACTOR ** (retry - 1)
    return base * (0.5 + 0.5 * jitter)


# -- owner transfer (append-only: see "Owner transfer" above) ----------------------------------


class TombstoneBody(WireModel):
    kind: Literal["superseded", "expired", "forgotten"]
    at: datetime
    reason: Annotated[str, StringConstraints(max_length=MAX_REASON_CHARS)] | None = None
    superseded_by: MemoryId | None = None


class _StoredScope(WireModel):
    """A stored record's scope key, checked as every write checks it."""

    @model_validator(mode="after")
    def _a_key(self) -> _StoredScope:
        try:
            ScopeKey(getattr(self, "scope"), getattr(self, "subject"))  # noqa: B009
        except ScopeError as exc:
            raise ValueError(str(exc)) from None
        return self


class ExportedFactBody(_StoredScope):
    """One fact as a store holds it, history included."""

    id: MemoryId
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_KEYED_TEXT_BYTES)]
    tags: list[Tag] = Field(max_length=MAX_TAGS)
    status: Literal["live", "expired", "superseded", "forgotten"]
    scope: Scope
    subject: SubjectId | None = None
    key: FactKey | None = None
    tier: Tier | None = None
    created_at: datetime
    expires_at: datetime | None = None
    superseded_by: MemoryId | None = None
    provenance: ProvenanceBody
    tombstone: TombstoneBody | None = None


class HeldBody(_StoredScope):
    """One write the injection scanner held, as a store holds it."""

    id: MemoryId
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_KEYED_TEXT_BYTES)]
    tags: list[Tag] = Field(max_length=MAX_TAGS)
    scope: Scope
    subject: SubjectId | None = None
    key: FactKey | None = None
    tier: Tier | None = None
    created_at: datetime
    ttl_ms: Annotated[int, Field(ge=1)] | None = None
    provenance: ProvenanceBody
    rule: Annotated[str, StringConstraints(min_length=1, max_length=MAX_RULE_CHARS)]
    found_on: Literal["write", "read"]


class ExportBody(ScopeBody):
    kind: Literal["facts", "held"] = "facts"
    # The page after this id (absent: the first page).
    after: MemoryId | None = None
    limit: Annotated[int, Field(ge=1, le=MAX_EXPORT_PAGE)] = 500


class ExportReply(WireModel):
    facts: list[ExportedFactBody] = Field(default_factory=list, max_length=MAX_EXPORT_PAGE)
    held: list[HeldBody] = Field(default_factory=list, max_length=MAX_EXPORT_PAGE)
    # Where the next page starts (absent: this was the last page).
    next_after: MemoryId | None = None


class RestoreBody(ScopeBody):
    facts: list[ExportedFactBody] = Field(default_factory=list, max_length=MAX_RESTORE_BATCH)
    held: list[HeldBody] = Field(default_factory=list, max_length=MAX_RESTORE_BATCH)

    @model_validator(mode="after")
    def _each_id_once(self) -> RestoreBody:
        for records in (self.facts, self.held):
            ids = [record.id for record in records]
            if len(set(ids)) != len(ids):
                raise ValueError("a restore names each id at most once")
        return self


class RestoreReply(WireModel):
    facts_written: Annotated[int, Field(ge=0)]
    held_written: Annotated[int, Field(ge=0)]
    # Already there, equal: skipped.
    facts_present: Annotated[int, Field(ge=0)]
    held_present: Annotated[int, Field(ge=0)]
