"""The owner's operations on PostgreSQL facts (``providers.admin``): the SQL and row mapping
``PostgresFactProvider``'s admin methods run, each inside the provider's transaction and
always within its scope.

Status is materialized at read time as the local store does it (``facts.sql.queries``):
superseded, forgotten, expired (a tombstone or ``now >= expires_at``), live. The owner's
``FactFilter`` (memory scope keys) is a condition of the statement, so paging counts only the
facts it admits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.model import (
    Fact,
    FactStatus,
    Provenance,
    QuarantinedFact,
    Tombstone,
    from_ms,
)
from specwire.runtime.facts.providers.admin import EVERY_KEY, FactFilter, FactListing
from specwire.runtime.facts.providers.postgres.sql import (
    IN_KEY,
    LIVE,
    SCOPE,
    key_of,
    key_params,
)
from specwire.runtime.facts.text import document_terms
from specwire.runtime.facts.validation import NewFact

if TYPE_CHECKING:
    from psycopg import Connection

_STATUS = """CASE
    WHEN f.superseded_by IS NOT NULL OR t.kind = 'superseded' THEN 'superseded'
    WHEN t.kind = 'forgotten' THEN 'forgotten'
    WHEN t.kind = 'expired' OR f.expires_at <= %(now)s THEN 'expired'
    ELSE 'live' END"""
_FACT = """f.id, f.text, f.tags, f.created_at, f.expires_at, f.superseded_by, f.session_id,
    f.evidence, f.scope, f.subject, f.fact_key, f.tier"""
_STATUSES = f"""SELECT f.seq, {_FACT}, t.kind AS t_kind, t.at AS t_at, t.reason AS t_reason,
    t.superseded_by AS t_by, {_STATUS} AS status
FROM facts f LEFT JOIN tombstones t ON t.target = f.id AND t.tenant = f.tenant
    AND t.spec = f.spec AND t.session = f.session
WHERE {SCOPE}"""
_LISTED = f"""SELECT * FROM ({_STATUSES} AND {{where}}) s
WHERE (%(status)s::text = 'all' OR s.status = %(status)s::text)
AND (%(tag)s::text IS NULL OR %(tag)s::text = ANY (s.tags))
AND (%(text)s::text IS NULL OR strpos(lower(s.text), lower(%(text)s::text)) > 0)
ORDER BY s.seq OFFSET %(offset)s LIMIT %(limit)s"""
_HELD = """SELECT q.id, q.text, q.tags, q.created_at, q.ttl_ms, q.session_id, q.evidence, q.rule,
    q.found_on, q.scope, q.subject, q.fact_key, q.tier FROM quarantine q
WHERE q.tenant = %(tenant)s AND q.spec = %(spec)s AND q.session = %(session)s"""
_INSERT_WITH_ID = """INSERT INTO facts (id, tenant, spec, session, text, norm_text, terms, tags,
    created_at, expires_at, session_id, evidence, scope, subject, fact_key, tier)
SELECT %(id)s, %(tenant)s, %(spec)s, %(session)s, %(text)s, %(norm)s, %(terms)s, %(tags)s,
    %(created)s, %(expires)s, %(session_id)s, %(evidence)s, %(fact_scope)s, %(fact_subject)s,
    %(fact_key)s, %(tier)s
WHERE NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.id = %(id)s)
ON CONFLICT (id) DO NOTHING RETURNING id"""
_LIVE_FACT = f"""SELECT {_FACT} FROM facts f WHERE f.id = %(id)s AND {LIVE} FOR UPDATE OF f"""


def filter_clause(where: FactFilter, table: str = "f") -> tuple[str, dict[str, Any]]:
    """``where`` as a condition on ``table``'s ``scope`` and ``subject`` columns."""
    parts: list[str] = []
    params: dict[str, Any] = {}
    if where.scopes is not None:
        parts.append(f"{table}.scope = ANY(%(filter_scopes)s::text[])")
        params["filter_scopes"] = list(where.scopes)
    if where.subject is not None:
        # A subject is never '' (the column of agent and crew keys), so those never match.
        parts.append(f"{table}.subject = %(filter_subject)s")
        params["filter_subject"] = where.subject
    return (" AND ".join(parts) or "TRUE"), params


def listed(
    conn: Connection[Any],
    params: dict[str, Any],
    listing: FactListing,
    where: FactFilter = EVERY_KEY,
) -> list[FactStatus]:
    condition, filter_params = filter_clause(where)
    rows = conn.execute(
        _LISTED.format(where=condition),
        {
            **params,
            **filter_params,
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


def held(
    conn: Connection[Any], params: dict[str, Any], where: FactFilter = EVERY_KEY
) -> list[QuarantinedFact]:
    condition, filter_params = filter_clause(where, "q")
    rows = conn.execute(
        f"{_HELD} AND {condition} ORDER BY q.created_at, q.seq", {**params, **filter_params}
    ).fetchall()
    return [_held(row) for row in rows]


def held_by_id(
    conn: Connection[Any], params: dict[str, Any], fact_id: str, *, lock: bool = False
) -> QuarantinedFact | None:
    """That held write of this scope (with ``lock``, locked for the transaction)."""
    locked = " FOR UPDATE OF q" if lock else ""
    row = conn.execute(f"{_HELD} AND q.id = %(id)s{locked}", {**params, "id": fact_id}).fetchone()
    return None if row is None else _held(row)


def drop_held(conn: Connection[Any], params: dict[str, Any], fact_id: str) -> bool:
    """Delete that held write of this scope; False when there is none."""
    row = conn.execute(
        "DELETE FROM quarantine q WHERE q.id = %(id)s AND q.tenant = %(tenant)s "
        "AND q.spec = %(spec)s AND q.session = %(session)s RETURNING q.id",
        {**params, "id": fact_id},
    ).fetchone()
    return row is not None


def mark_released(conn: Connection[Any], params: dict[str, Any], fact_id: str, rule: str) -> None:
    """Remember that the owner released ``fact_id`` (recall does not hold it again)."""
    conn.execute(
        "INSERT INTO released (id, tenant, spec, session, rule, at) VALUES (%(id)s, "
        "%(tenant)s, %(spec)s, %(session)s, %(rule)s, %(now)s) ON CONFLICT (id) DO UPDATE "
        "SET rule = EXCLUDED.rule, at = EXCLUDED.at",
        {**params, "id": fact_id, "rule": rule},
    )


def released_among(
    conn: Connection[Any], params: dict[str, Any], fact_ids: Sequence[str]
) -> set[str]:
    rows = conn.execute(
        "SELECT r.id FROM released r WHERE r.id = ANY(%(ids)s::text[]) "
        "AND r.tenant = %(tenant)s AND r.spec = %(spec)s AND r.session = %(session)s",
        {**params, "ids": list(fact_ids)},
    ).fetchall()
    return {str(row[0]) for row in rows}


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
        """The oldest live plain fact (no key) of ``scope`` with that normalized text."""
        row = self._conn.execute(
            f"SELECT f.id FROM facts f WHERE {LIVE} AND f.norm_text = %(norm)s "
            f"AND {IN_KEY} AND f.fact_key IS NULL ORDER BY f.seq LIMIT 1",
            {**self._params, **key_params(scope), "norm": norm_text},
        ).fetchone()
        return None if row is None else str(row[0])

    def with_text_created(
        self, norm_text: str, created_ms: int, scope: ScopeKey = AGENT
    ) -> str | None:
        """The oldest fact (any status) of ``scope`` with that text written at ``created_ms``."""
        row = self._conn.execute(
            f"SELECT f.id FROM facts f WHERE {SCOPE} AND f.norm_text = %(norm)s "
            f"AND f.created_at = %(created)s AND {IN_KEY} ORDER BY f.seq LIMIT 1",
            {**self._params, **key_params(scope), "norm": norm_text, "created": created_ms},
        ).fetchone()
        return None if row is None else str(row[0])

    def screened(self, new: NewFact) -> str | None:
        return self._screened(new)

    def hold(self, new: NewFact, rule: str) -> None:
        self._hold(self._conn, new, rule)

    def insert(self, new: NewFact, created_ms: int, wanted_id: str | None = None) -> str:
        """Under ``wanted_id`` when no fact or held write of the database uses it (ids are
        unique across tenants and specs), else under a fresh id."""
        if wanted_id is not None:
            row = self._conn.execute(
                _INSERT_WITH_ID,
                {
                    **self._params,
                    **key_params(new.scope),
                    "id": wanted_id,
                    "text": new.text,
                    "norm": new.norm_text,
                    "terms": document_terms(new.text, new.tags),
                    "tags": list(new.tags),
                    "created": created_ms,
                    "expires": None if new.ttl_ms is None else created_ms + new.ttl_ms,
                    "session_id": new.provenance.session_id,
                    "evidence": list(new.provenance.evidence),
                    "fact_key": new.key,
                    "tier": new.tier,
                },
            ).fetchone()
            if row is not None:
                return wanted_id
        return self._insert(self._conn, new, created_ms)

    def link_superseded(self, old_id: str, new_id: str, at_ms: int, reason: str | None) -> None:
        link_superseded(self._conn, self._params, old_id, new_id, at_ms, reason)

    def tombstone(self, fact_id: str, kind: str, at_ms: int, reason: str | None) -> None:
        self._conn.execute(
            "INSERT INTO tombstones (target, tenant, spec, session, kind, at, reason) VALUES "
            "(%(id)s, %(tenant)s, %(spec)s, %(session)s, %(kind)s, %(at)s, %(reason)s) "
            "ON CONFLICT (target) DO NOTHING",
            {**self._params, "id": fact_id, "kind": kind, "at": at_ms, "reason": reason},
        )


def _fact(row: Sequence[Any]) -> Fact:
    # Columns: ``_FACT``.
    return Fact(
        id=row[0],
        text=row[1],
        tags=tuple(row[2]),
        created_at=from_ms(int(row[3])),
        expires_at=None if row[4] is None else from_ms(int(row[4])),
        superseded_by=row[5],
        provenance=Provenance(row[6], tuple(row[7])),
        scope=key_of(row[8], row[9]),
        key=row[10],
        tier=row[11],
    )


def _status(row: Sequence[Any]) -> FactStatus:
    # Columns: seq, the fact's twelve (``_FACT``), t_kind, t_at, t_reason, t_by, status.
    tombstone = None
    if row[13] is not None:
        tombstone = Tombstone(
            kind=row[13], at=from_ms(int(row[14])), reason=row[15], superseded_by=row[16]
        )
    return FactStatus(_fact(row[1:13]), row[17], tombstone)


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
        scope=key_of(row[9], row[10]),
        key=row[11],
        tier=row[12],
    )
