"""The owner's operations on PostgreSQL facts (``providers.admin``): the SQL and row mapping
``PostgresFactProvider``'s admin methods run, each inside the provider's transaction and
always within its scope.

Status is materialized at read time as the local store does it (``facts.sql.queries``):
superseded, forgotten, expired (a tombstone or ``now >= expires_at``), live.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.model import (
    Fact,
    FactStatus,
    InvalidRequestError,
    Provenance,
    QuarantinedFact,
    Tombstone,
    from_ms,
)
from specwire.runtime.facts.providers.admin import FactListing
from specwire.runtime.facts.providers.postgres.sql import LIVE, SCOPE
from specwire.runtime.facts.validation import NewFact

if TYPE_CHECKING:
    from psycopg import Connection

_STATUS = """CASE
    WHEN f.superseded_by IS NOT NULL OR t.kind = 'superseded' THEN 'superseded'
    WHEN t.kind = 'forgotten' THEN 'forgotten'
    WHEN t.kind = 'expired' OR f.expires_at <= %(now)s THEN 'expired'
    ELSE 'live' END"""
_STATUSES = f"""SELECT f.seq, f.id, f.text, f.tags, f.created_at, f.expires_at, f.superseded_by,
    f.session_id, f.evidence, t.kind AS t_kind, t.at AS t_at, t.reason AS t_reason,
    t.superseded_by AS t_by, {_STATUS} AS status
FROM facts f LEFT JOIN tombstones t ON t.target = f.id AND t.tenant = f.tenant
    AND t.spec = f.spec AND t.session = f.session
WHERE {SCOPE}"""
_LISTED = f"""SELECT * FROM ({_STATUSES}) s
WHERE (%(status)s::text = 'all' OR s.status = %(status)s::text)
AND (%(tag)s::text IS NULL OR %(tag)s::text = ANY (s.tags))
AND (%(text)s::text IS NULL OR strpos(lower(s.text), lower(%(text)s::text)) > 0)
ORDER BY s.seq OFFSET %(offset)s LIMIT %(limit)s"""
_HELD = """SELECT q.id, q.text, q.tags, q.created_at, q.ttl_ms, q.session_id, q.evidence, q.rule,
    q.found_on FROM quarantine q
WHERE q.tenant = %(tenant)s AND q.spec = %(spec)s AND q.session = %(session)s"""
_LIVE_FACT = f"""SELECT f.id, f.text, f.tags, f.created_at, f.expires_at, f.superseded_by,
    f.session_id, f.evidence FROM facts f WHERE f.id = %(id)s AND {LIVE} FOR UPDATE OF f"""


def listed(conn: Connection[Any], params: dict[str, Any], listing: FactListing) -> list[FactStatus]:
    rows = conn.execute(
        _LISTED,
        {
            **params,
            "status": listing.status,
            "tag": listing.tag,
            "text": listing.text,
            "offset": listing.offset,
            "limit": listing.limit,
        },
    ).fetchall()
    return [_status(row) for row in rows]


def status_of(conn: Connection[Any], params: dict[str, Any], fact_id: str) -> FactStatus | None:
    row = conn.execute(f"{_STATUSES} AND f.id = %(id)s", {**params, "id": fact_id}).fetchone()
    return None if row is None else _status(row)


def live_fact(conn: Connection[Any], params: dict[str, Any], fact_id: str) -> Fact | None:
    """That fact when it is live, locked for the transaction."""
    row = conn.execute(_LIVE_FACT, {**params, "id": fact_id}).fetchone()
    return None if row is None else _fact(row)


def count_live(conn: Connection[Any], params: dict[str, Any]) -> int:
    row = conn.execute(f"SELECT count(*) FROM facts f WHERE {LIVE}", params).fetchone()
    return 0 if row is None else int(row[0])


def held(conn: Connection[Any], params: dict[str, Any]) -> list[QuarantinedFact]:
    rows = conn.execute(f"{_HELD} ORDER BY q.created_at, q.id", params).fetchall()
    return [_held(row) for row in rows]


def held_by_id(
    conn: Connection[Any], params: dict[str, Any], fact_id: str
) -> QuarantinedFact | None:
    row = conn.execute(f"{_HELD} AND q.id = %(id)s", {**params, "id": fact_id}).fetchone()
    return None if row is None else _held(row)


def link_superseded(
    conn: Connection[Any],
    params: dict[str, Any],
    old_id: str,
    new_id: str,
    at_ms: int,
    reason: str | None,
) -> None:
    """Point ``old_id`` at its replacement and tombstone it as superseded (ids and a reason
    the caller validated)."""
    conn.execute(
        f"UPDATE facts f SET superseded_by = %(by)s WHERE f.id = %(old)s AND {SCOPE}",
        {**params, "by": new_id, "old": old_id},
    )
    conn.execute(
        "INSERT INTO tombstones (target, tenant, spec, session, kind, at, reason, "
        "superseded_by) VALUES (%(old)s, %(tenant)s, %(spec)s, %(session)s, 'superseded', "
        "%(at)s, %(reason)s, %(by)s) ON CONFLICT (target) DO NOTHING",
        {**params, "by": new_id, "old": old_id, "at": at_ms, "reason": reason},
    )


class PostgresImportSink:
    """``facts.importing.ImportSink`` over one transaction of a ``PostgresFactProvider``."""

    def __init__(
        self,
        conn: Connection[Any],
        params: dict[str, Any],
        *,
        screened: Callable[[NewFact], str | None],
        insert: Callable[[Connection[Any], NewFact, int], str],
        hold: Callable[[Connection[Any], NewFact, str], None],
    ) -> None:
        self._conn = conn
        self._params = params
        self._screened = screened
        self._insert = insert
        self._hold = hold

    def live_with_text(self, norm_text: str, scope: ScopeKey = AGENT) -> str | None:
        _agent_only(scope)
        row = self._conn.execute(
            f"SELECT f.id FROM facts f WHERE {LIVE} AND f.norm_text = %(norm)s "
            "ORDER BY f.seq LIMIT 1",
            {**self._params, "norm": norm_text},
        ).fetchone()
        return None if row is None else str(row[0])

    def with_text_created(
        self, norm_text: str, created_ms: int, scope: ScopeKey = AGENT
    ) -> str | None:
        _agent_only(scope)
        row = self._conn.execute(
            f"SELECT f.id FROM facts f WHERE {SCOPE} AND f.norm_text = %(norm)s "
            "AND f.created_at = %(created)s ORDER BY f.seq LIMIT 1",
            {**self._params, "norm": norm_text, "created": created_ms},
        ).fetchone()
        return None if row is None else str(row[0])

    def screened(self, new: NewFact) -> str | None:
        return self._screened(new)

    def hold(self, new: NewFact, rule: str) -> None:
        self._hold(self._conn, new, rule)

    def insert(self, new: NewFact, created_ms: int) -> str:
        return self._insert(self._conn, new, created_ms)

    def link_superseded(self, old_id: str, new_id: str, at_ms: int, reason: str) -> None:
        link_superseded(self._conn, self._params, old_id, new_id, at_ms, reason)


def _agent_only(scope: ScopeKey) -> None:
    # Until this backend stores scope keys, a scoped import fails closed (nothing written).
    if scope != AGENT:
        raise InvalidRequestError("this backend does not store memory scopes yet")


def _fact(row: Any) -> Fact:
    # Columns: id, text, tags, created_at, expires_at, superseded_by, session_id, evidence.
    return Fact(
        id=row[0],
        text=row[1],
        tags=tuple(row[2]),
        created_at=from_ms(int(row[3])),
        expires_at=None if row[4] is None else from_ms(int(row[4])),
        superseded_by=row[5],
        provenance=Provenance(row[6], tuple(row[7])),
    )


def _status(row: Any) -> FactStatus:
    # Columns: seq, the fact's eight, t_kind, t_at, t_reason, t_by, status.
    tombstone = None
    if row[9] is not None:
        tombstone = Tombstone(
            kind=row[9], at=from_ms(int(row[10])), reason=row[11], superseded_by=row[12]
        )
    return FactStatus(_fact(row[1:9]), row[13], tombstone)


def _held(row: Any) -> QuarantinedFact:
    return QuarantinedFact(
        id=row[0],
        text=row[1],
        tags=tuple(row[2]),
        created_at=from_ms(int(row[3])),
        ttl_ms=None if row[4] is None else int(row[4]),
        provenance=Provenance(row[5], tuple(row[6])),
        rule=row[7],
        found_on=row[8],
    )
